/** Stable codes callers may branch on; the message is for people. */
export const PACK_ERROR_CODES = Object.freeze([
  'PACK_SIGNATURE',
  'PACK_VERSION',
  'PACK_TRUNCATED',
  'PACK_CORRUPT',
  'PACK_CHECKSUM_MISMATCH',
  'PACK_DELTA_BASE_MISSING',
  'PACK_DELTA_INVALID',
  'PACK_TRAILING_DATA',
  'PACK_INDEX_INVALID',
  // An object (or a delta's declared result) is larger than `maxObjectSize`.
  'PACK_OBJECT_TOO_LARGE',
  // The pack inflates to more than its budget (`inflateRatio` times its size, at least `inflateFloor`).
  'PACK_INFLATE_BUDGET',
  'ABORTED',
] as const);

export type PackErrorCode = (typeof PACK_ERROR_CODES)[number];

// What the person should do next, appended to every message of that code.
const ADVICE: Readonly<Record<PackErrorCode, string>> = Object.freeze({
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
  PACK_OBJECT_TOO_LARGE:
    'Nothing was stored. If the repository really holds objects this large, raise the limit in the clone options.',
  PACK_INFLATE_BUDGET:
    'Nothing was stored. The server may be hostile; if the repository is genuine, raise the limit in the clone options.',
  ABORTED: 'Nothing was stored.',
});

/**
 * A pack the server sent (or one stored) is not a valid git pack, breaks a cap of PackLimits, or its receipt
 * was cancelled. A pack that fails is never stored; the message ends with what to do.
 */
export class PackError extends Error {
  /** What went wrong, for programs to branch on (PACK_ERROR_CODES); the message is for people. */
  readonly code: PackErrorCode;
  /** What was found, without the advice: for wrapping in a more precise message. */
  readonly detail: string;
  /** For a limit's error, the name of the setting that was exceeded (`maxObjectSize`, `inflateRatio`). */
  readonly limit?: string;

  /** `detail` is a sentence saying what was found; the advice for the code is appended. */
  constructor(code: PackErrorCode, detail: string, options?: { cause?: unknown; limit?: string }) {
    super(`${detail} ${ADVICE[code]}`, options?.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'PackError';
    this.code = code;
    this.detail = detail;
    this.limit = options?.limit;
  }
}

/** The error for an object larger than the `maxObjectSize` setting. */
export function objectTooLarge(what: string, size: number, limit: number): PackError {
  return new PackError(
    'PACK_OBJECT_TOO_LARGE',
    `${what} declares ${formatBytes(size)}, more than the limit of ${formatBytes(limit)} (maxObjectSize).`,
    { limit: 'maxObjectSize' },
  );
}

export function formatBytes(n: number): string {
  if (n < 1024) return `${n} bytes`;
  const units = ['KiB', 'MiB', 'GiB', 'TiB', 'PiB'];
  let v = n / 1024;
  let u = 0;
  while (v >= 1024 && u < units.length - 1) {
    v /= 1024;
    u++;
  }
  return `${v >= 100 ? Math.round(v) : v.toFixed(1)} ${units[u]}`;
}

/** Throws the abort as a PackError so callers see one error type; the signal's reason is the cause. */
export function throwIfAborted(signal: AbortSignal | undefined): void {
  if (signal?.aborted) {
    throw new PackError('ABORTED', 'Receiving the pack was cancelled.', { cause: signal.reason });
  }
}
