/** Every code a StoreError carries; the type below is made from it, so the two cannot drift apart. */
export const STORE_ERROR_CODES = Object.freeze([
  'STORAGE_FULL',
  'STORAGE_FAILED',
  'STORAGE_BLOCKED',
  'REPO_NOT_FOUND',
  // A config value git's format cannot hold (a NUL, a line feed in a section name), or a malformed config.
  'CONFIG_INVALID',
  // A ref name git would refuse reached the store (a bug upstream: ops filters server names first).
  'REF_NAME_INVALID',
  // A wait for another tab's work on the repo, given up (the person cancelled).
  'ABORTED',
] as const);

export type StoreErrorCode = (typeof STORE_ERROR_CODES)[number];

/**
 * The browser's storage failed or refused (STORAGE_FULL, STORAGE_FAILED, STORAGE_BLOCKED), a repo is not
 * stored (REPO_NOT_FOUND), or something the store would write is invalid. A failed write keeps nothing of it.
 */
export class StoreError extends Error {
  /** Always `StoreError`. */
  override readonly name = 'StoreError';
  constructor(
    /** What went wrong, for programs to branch on (STORE_ERROR_CODES); the message is for people. */
    readonly code: StoreErrorCode,
    message: string,
  ) {
    super(message);
  }
}

/** Turns the browser's storage failures into errors that say what to do. */
export function storageError(err: unknown, what: string): StoreError {
  // Already ours (a commit's STORAGE_FULL with its figures): wrapping it again would lose its code.
  if (err instanceof StoreError) return err;
  const e = err as { name?: string; message?: string };
  if (e?.name === 'QuotaExceededError' || /quota/i.test(e?.message ?? '')) {
    return new StoreError(
      'STORAGE_FULL',
      `The browser refused to store ${what}: its storage for this site is full. Delete repositories you no longer need, then try again.`,
    );
  }
  return new StoreError('STORAGE_FAILED', `Could not store ${what}: ${e?.message ?? String(err)}`);
}

/** What the browser says of this origin's storage; absent where it says nothing (Node, old browsers). */
async function storageEstimate(): Promise<{ usage: number; quota: number } | undefined> {
  const storage = (globalThis.navigator as Navigator | undefined)?.storage;
  if (!storage?.estimate) return undefined;
  try {
    const { usage, quota } = await storage.estimate();
    return usage === undefined || quota === undefined ? undefined : { usage, quota };
  } catch {
    return undefined;
  }
}

/** Megabytes to a tenth, or kilobytes (rounded up) below a tenth: a write of 3 KB is never "0.0 MB". */
function mb(bytes: number): string {
  if (bytes >= 100_000) return `${(bytes / 1e6).toFixed(1)} MB`;
  return `${Math.ceil(bytes / 1e3)} KB`;
}

/**
 * storageError, with the figures a person needs to act on a full disk: how much this write needed and
 * how much the browser says is free for the site.
 */
export async function storageErrorWithFigures(
  err: unknown,
  what: string,
  neededBytes: number,
): Promise<StoreError> {
  const base = storageError(err, what);
  if (base.code !== 'STORAGE_FULL') return base;
  const estimate = await storageEstimate();
  return new StoreError(
    'STORAGE_FULL',
    `The browser refused to store ${what} (${mb(neededBytes)} needed${estimate ? `; ${room(estimate, neededBytes)}` : ''}): its storage for this site is full. Delete repositories you no longer need, then try again.`,
  );
}

/**
 * What is free, as navigator.storage.estimate() says. Chromium reports a made-up quota (what the site uses
 * plus 10 GiB, whatever the disk holds, so that the figure cannot identify the machine): a "free" figure
 * larger than what was refused is then said to be the browser's, next to the one that is true, the site's
 * own usage.
 */
function room(estimate: { usage: number; quota: number }, neededBytes: number): string {
  const free = Math.max(0, estimate.quota - estimate.usage);
  if (free < neededBytes) return `${mb(free)} free of ${mb(estimate.quota)}`;
  return `this site stores ${mb(estimate.usage)}; the browser reports ${mb(free)} free, yet refused it`;
}
