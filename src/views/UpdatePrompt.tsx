import { useRegisterSW } from 'virtual:pwa-register/preact';
import { useEffect, useRef, useState } from 'preact/hooks';
import { busyWith, useBusy } from '../busy.ts';

// An open tab may live for days; look for a new version now and then, not only at the next load.
const UPDATE_CHECK_MS = 60 * 60 * 1000;

/**
 * Registers the service worker and says when a new version is ready. The new version waits (the
 * manifest's registerType is 'prompt') until the person reloads, and the reload button waits for any clone
 * or checkout to finish: a reload kills the worker mid-write. When another tab applied the update, this
 * page keeps running and only says so.
 */
export function UpdatePrompt() {
  const busy = useBusy();
  const reloadAsked = useRef(false);
  const [updatedElsewhere, setUpdatedElsewhere] = useState(false);
  const {
    needRefresh: [needRefresh, setNeedRefresh],
    updateServiceWorker,
  } = useRegisterSW({
    onRegisteredSW(_url, registration) {
      if (!registration) return;
      setInterval(() => {
        if (navigator.onLine && !registration.installing) void registration.update().catch(() => undefined);
      }, UPDATE_CHECK_MS);
    },
    // Without this, workbox-window reloads by itself whenever a new version takes control, even one
    // another tab let in, in the middle of a clone here. The effect below decides instead.
    onNeedReload() {},
  });

  // The new version took control of this page: reload when this page asked for it (and nothing is being
  // written), otherwise only say so. Listened to here rather than through workbox-window, whose event
  // does not fire for a page that was first taken over by clientsClaim, i.e. any tab open since its first
  // visit.
  useEffect(() => {
    const container = navigator.serviceWorker;
    if (!container) return;
    let controlled = !!container.controller;
    const onChange = () => {
      const wasControlled = controlled;
      controlled = true;
      if (reloadAsked.current && !busyWith()) location.reload();
      else if (wasControlled) setUpdatedElsewhere(true);
    };
    container.addEventListener('controllerchange', onChange);
    return () => container.removeEventListener('controllerchange', onChange);
  }, []);

  if (!needRefresh && !updatedElsewhere) return null;
  return (
    <div class="update-prompt" role="status" data-testid="update-prompt">
      <span>
        {updatedElsewhere
          ? 'Blobless was updated in another tab. Reload to use the new version.'
          : 'An update of Blobless is available.'}
        {busy && ` It will be ready to apply when the ${busy} finishes.`}
      </span>
      <button
        type="button"
        data-testid="update-reload"
        disabled={busy !== null}
        onClick={() => {
          reloadAsked.current = true;
          if (updatedElsewhere) location.reload();
          else void updateServiceWorker(true);
        }}
      >
        Reload
      </button>
      <button
        type="button"
        class="secondary"
        onClick={() => {
          setNeedRefresh(false);
          setUpdatedElsewhere(false);
        }}
      >
        Later
      </button>
    </div>
  );
}
