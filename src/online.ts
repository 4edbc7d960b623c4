import { useEffect, useState } from 'preact/hooks';

/**
 * Whether the browser says it has a network (`navigator.onLine`, kept current by the online and offline
 * events). False is reliable: there is no network. True only means there may be one; the worker's
 * requests still say what went wrong.
 */
export function useOnline(): boolean {
  const [online, setOnline] = useState(() => navigator.onLine);
  useEffect(() => {
    const update = () => setOnline(navigator.onLine);
    window.addEventListener('online', update);
    window.addEventListener('offline', update);
    update();
    return () => {
      window.removeEventListener('online', update);
      window.removeEventListener('offline', update);
    };
  }, []);
  return online;
}
