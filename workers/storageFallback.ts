// A worker whose page may not store anything still has to work: a widget in a cross-site iframe whose
// browser blocks third-party storage (Chromium with partitioning off, third-party cookies blocked,
// private windows) gets "UnknownError: The user denied permission to access the database" from IndexedDB
// and a SecurityError from Web Locks, and lightning-fs would wait ten minutes on a lock it never gets.
// Then the worker keeps everything in memory for its life: an in-memory IndexedDB (fake-indexeddb, loaded
// only then) under the same code, and no Web Locks (lightning-fs and repoLock.ts fall back to their own).

export type StorageMode = 'indexeddb' | 'memory';

let mode: Promise<StorageMode> | null = null;

/** Probes IndexedDB once; on a refusal, swaps in the in-memory one. Call before any storage is touched. */
export function ensureStorage(): Promise<StorageMode> {
  mode ??= probe().then(async (ok) => {
    if (ok) return 'indexeddb';
    const fake = await import('fake-indexeddb');
    const g = globalThis as Record<string, unknown>;
    Object.defineProperty(g, 'indexedDB', { value: fake.indexedDB, configurable: true, writable: true });
    g.IDBKeyRange = fake.IDBKeyRange;
    Object.defineProperty(g.navigator as object, 'locks', { value: undefined, configurable: true });
    return 'memory';
  });
  return mode;
}

function probe(): Promise<boolean> {
  return new Promise((resolve) => {
    try {
      const req = indexedDB.open('blobless-storage-probe');
      req.onsuccess = () => {
        req.result.close();
        resolve(true);
      };
      req.onerror = () => resolve(false);
      req.onblocked = () => resolve(true);
    } catch {
      resolve(false);
    }
  });
}
