import { useEffect, useState } from 'preact/hooks';

/** Chromium's install offer (not in the DOM typings). */
interface InstallPromptEvent extends Event {
  prompt(): Promise<void>;
  userChoice: Promise<{ outcome: 'accepted' | 'dismissed' }>;
}

// Listened for from the module's load: the browser may offer before the first render.
let offer: InstallPromptEvent | null = null;
const listeners = new Set<() => void>();
const changed = () => {
  for (const l of listeners) l();
};
addEventListener('beforeinstallprompt', (e) => {
  // The app's own button asks instead of the browser's mini-infobar.
  e.preventDefault();
  offer = e as InstallPromptEvent;
  changed();
});
addEventListener('appinstalled', () => {
  offer = null;
  changed();
});

function installed(): boolean {
  return (
    matchMedia('(display-mode: standalone)').matches ||
    matchMedia('(display-mode: window-controls-overlay)').matches
  );
}

/**
 * "Install" where the browser offers it (`beforeinstallprompt`): null when there is nothing to offer
 * (another browser, or Blobless installed already, or running as the installed app).
 */
export function useInstall(): (() => Promise<void>) | null {
  const [, setTick] = useState(0);
  useEffect(() => {
    const update = () => setTick((n) => n + 1);
    listeners.add(update);
    return () => void listeners.delete(update);
  }, []);
  if (!offer || installed()) return null;
  const event = offer;
  return async () => {
    await event.prompt();
    const { outcome } = await event.userChoice;
    // The offer is spent either way; the browser makes a new one later if it wants to.
    if (outcome === 'accepted' || offer === event) offer = null;
    changed();
  };
}
