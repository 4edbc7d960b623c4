/** Stable codes callers may branch on; the message is for people. */
export type PackErrorCode =
  | 'PACK_SIGNATURE'
  | 'PACK_VERSION'
  | 'PACK_TRUNCATED'
  | 'PACK_CORRUPT'
  | 'PACK_CHECKSUM_MISMATCH'
  | 'PACK_DELTA_BASE_MISSING'
  | 'PACK_DELTA_INVALID'
  | 'PACK_TRAILING_DATA'
  | 'PACK_INDEX_INVALID'
  | 'ABORTED';

// What the person should do next, appended to every message of that code.
const ADVICE: Record<PackErrorCode, string> = {
  PACK_SIGNATURE: 'The server did not send a git pack; check the repository URL.',
  PACK_VERSION: 'This pack format is not supported; only versions 2 and 3 are.',
  PACK_TRUNCATED: 'The download ended early; nothing was stored. Try again.',
  PACK_CORRUPT: 'The download or the server copy is damaged; nothing was stored. Try again.',
  PACK_CHECKSUM_MISMATCH: 'The download was corrupted; nothing was stored. Try again.',
  PACK_DELTA_BASE_MISSING:
    'The server sent a thin pack, which Blobless never asks for; nothing was stored. Try again, and report it if it persists.',
  PACK_DELTA_INVALID:
    'The server copy is damaged; nothing was stored. Try again, and report it if it persists.',
  PACK_TRAILING_DATA: 'The server sent more than one pack; nothing was stored. Try again.',
  PACK_INDEX_INVALID: 'The stored pack index is damaged; delete the repository and clone it again.',
  ABORTED: 'Nothing was stored.',
};

export class PackError extends Error {
  readonly code: PackErrorCode;
  /** What was found, without the advice: for wrapping in a more precise message. */
  readonly detail: string;

  /** `detail` is a sentence saying what was found; the advice for the code is appended. */
  constructor(code: PackErrorCode, detail: string, options?: { cause?: unknown }) {
    super(`${detail} ${ADVICE[code]}`, options);
    this.name = 'PackError';
    this.code = code;
    this.detail = detail;
  }
}

/** Throws the abort as a PackError so callers see one error type; the signal's reason is the cause. */
export function throwIfAborted(signal: AbortSignal | undefined): void {
  if (signal?.aborted) {
    throw new PackError('ABORTED', 'Receiving the pack was cancelled.', { cause: signal.reason });
  }
}
