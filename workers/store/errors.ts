export type StoreErrorCode = 'STORAGE_FULL' | 'STORAGE_FAILED' | 'STORAGE_BLOCKED' | 'REPO_NOT_FOUND';

export class StoreError extends Error {
  override readonly name = 'StoreError';
  constructor(
    readonly code: StoreErrorCode,
    message: string,
  ) {
    super(message);
  }
}

/** Turns the browser's storage failures into errors that say what to do. */
export function storageError(err: unknown, what: string): StoreError {
  const e = err as { name?: string; message?: string };
  if (e?.name === 'QuotaExceededError' || /quota/i.test(e?.message ?? '')) {
    return new StoreError(
      'STORAGE_FULL',
      `The browser refused to store ${what}: its storage for this site is full. Delete repositories you no longer need, then try again.`,
    );
  }
  return new StoreError('STORAGE_FAILED', `Could not store ${what}: ${e?.message ?? String(err)}`);
}
