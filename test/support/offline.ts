/**
 * Runs `fn` with `navigator.onLine` false, as a browser reports it with no network, then restores it. The
 * Node test environment's navigator (test/nodeBrowserEnv.ts) has no onLine, which the code reads as online.
 */
export async function whileOffline<T>(fn: () => Promise<T>): Promise<T> {
  const nav = (globalThis as { navigator: object }).navigator;
  Object.defineProperty(nav, 'onLine', { value: false, configurable: true });
  try {
    return await fn();
  } finally {
    delete (nav as { onLine?: boolean }).onLine;
  }
}
