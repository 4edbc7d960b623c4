import type { ComponentType, FunctionComponent } from 'preact';
import { useEffect, useState } from 'preact/hooks';

/**
 * A component whose code is fetched the first time it is shown, so its chunk stays out of the main bundle
 * (which holds only what the first paint needs). The service worker precaches every chunk, so this works
 * offline too; a chunk that fails to load (an old tab after an update) is tried again on the next show.
 */
export function lazyView<P extends object>(
  load: () => Promise<ComponentType<P>>,
): FunctionComponent<P> & { preload: () => void } {
  let loaded: ComponentType<P> | null = null;
  let loading: Promise<ComponentType<P>> | null = null;
  const start = () => {
    loading ??= load().then(
      (c) => (loaded = c),
      (err: unknown) => {
        loading = null;
        throw err;
      },
    );
    return loading;
  };
  function Lazy(props: P) {
    const [, setReady] = useState(false);
    const [failed, setFailed] = useState<string | null>(null);
    useEffect(() => {
      if (loaded) return;
      let live = true;
      start().then(
        () => live && setReady(true),
        (err: Error) => live && setFailed(err.message),
      );
      return () => {
        live = false;
      };
    }, []);
    if (loaded) {
      const Loaded = loaded;
      return <Loaded {...props} />;
    }
    return failed ? (
      <p class="error" role="alert">
        This part of Blobless could not be loaded ({failed}). Reload the page to try again.
      </p>
    ) : null;
  }
  /** Fetches the code ahead of the first show (on hover, say), so it appears at once. */
  Lazy.preload = () => void start().catch(() => undefined);
  return Lazy;
}
