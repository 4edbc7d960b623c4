/**
 * This browser's storage for the app: how much is used, how much is available, and whether it is
 * persistent (never evicted under storage pressure). Repositories are worth keeping, so persistence is
 * asked for once, after the first clone: browsers grant it more readily to a site that is in use, and
 * Firefox shows a prompt, which a person understands better once there is something to keep.
 */
export interface StorageState {
  usage: number | null;
  quota: number | null;
  /** null where the browser has no Storage API persistence (older Safari). */
  persisted: boolean | null;
  /** The answer of the one request made, if it was made in this browser. */
  asked: 'granted' | 'denied' | null;
}

const ASKED_KEY = 'blobless.persistAsked';

export async function readStorage(): Promise<StorageState> {
  const storage = navigator.storage;
  const estimate = await storage?.estimate?.().catch(() => undefined);
  const persisted = storage?.persisted ? await storage.persisted().catch(() => null) : null;
  const asked = localStorage.getItem(ASKED_KEY);
  return {
    usage: estimate?.usage ?? null,
    quota: estimate?.quota ?? null,
    persisted,
    asked: asked === 'granted' || asked === 'denied' ? asked : null,
  };
}

/** Asks for persistent storage, unless it already is or was asked for before. Returns the answer. */
export async function askPersistenceOnce(): Promise<boolean | null> {
  const storage = navigator.storage;
  if (!storage?.persist) return null;
  if (await storage.persisted()) return true;
  if (localStorage.getItem(ASKED_KEY)) return false;
  return askPersistence();
}

/** Asks now (the home page's button does, when the first answer was no). */
export async function askPersistence(): Promise<boolean | null> {
  const storage = navigator.storage;
  if (!storage?.persist) return null;
  const granted = await storage.persist().catch(() => false);
  localStorage.setItem(ASKED_KEY, granted ? 'granted' : 'denied');
  return granted;
}
