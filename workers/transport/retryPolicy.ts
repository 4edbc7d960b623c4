// When a request to a git server is sent again. Only reads are retried (info/refs, upload-pack POSTs: ls-refs,
// a clone's fetch, lazy blob batches), and only while nothing of the answer reached the caller: a 5xx, a 429,
// or a connection reset before the response began. A pack that was half received is never retried here: the
// lazy blob fetcher resumes by asking again for the blobs still not stored (ops/sync/lazyBlobs.ts). Pushes
// (receive-pack POSTs) are never retried: a reset does not say whether the server applied them.

import { TransportError } from './errors.ts';

/**
 * Attempts per request, the first included. Four attempts with the delays below span about 0.5 + 1 + 2 =
 * 3.5 s of waiting: long enough for a proxy's restart or a load balancer's failover (what a 502 or a reset
 * usually is), short enough that a server that is really down is reported within seconds, not minutes.
 */
export const RETRY_ATTEMPTS = 4;
/** The first wait; each next one doubles it (exponential backoff, as git's http.c does for its own retries). */
export const RETRY_BASE_DELAY_MS = 500;
/**
 * The longest wait this policy picks by itself, and the cap on a server's Retry-After. GitHub answers a
 * secondary rate limit with `Retry-After: 60`; a person watching a progress bar should rather get an error
 * that says "try again in a minute" than a minute of "retrying". Under the cap, Retry-After is honoured.
 */
export const RETRY_MAX_DELAY_MS = 8_000;
/** Up to this share of each backoff delay is added at random, so many tabs do not retry in step. */
export const RETRY_JITTER = 0.2;

export interface RetryNotice {
  /** The attempt about to be made (2 for the first retry). */
  attempt: number;
  attempts: number;
  delayMs: number;
  /** Why, for a person: "HTTP 503", "connection reset". */
  reason: string;
  /** "example.com answered HTTP 503; retrying in 2 s (attempt 2 of 4)…" */
  text: string;
}

export interface RetryOptions {
  signal?: AbortSignal;
  onRetry?: (notice: RetryNotice) => void;
  /** Overrides the constants above; for tests that must not wait seconds. */
  policy?: Partial<RetryPolicy>;
  /** Named in the notice's text. */
  host: string;
  /** false: a connection reset is not retried (default true). */
  resets?: boolean;
}

/**
 * How long a response may send nothing before the transfer is given up as stalled (TransportError
 * `TIMEOUT`). git's own guard is http.lowSpeedLimit/lowSpeedTime, off by default; a browser tab has no
 * such guard at all, so a server that dribbles or hangs would hold an operation forever. upload-pack keeps
 * a live connection busy: with progress on it sends a line at least every second, and without it git's
 * pack-objects still sends keep-alive packets every 5 s (upload-pack's keepalive) while it counts objects.
 * 60 s is twelve keep-alives missed.
 */
export const STALL_TIMEOUT_MS = 60_000;

/** When a request that failed in a way worth repeating is sent again, and when a silent one is given up. */
export interface RetryPolicy {
  /** Attempts per request, the first included (RETRY_ATTEMPTS, 4). */
  attempts: number;
  /** The first wait in milliseconds; each next one doubles it (RETRY_BASE_DELAY_MS, 500). */
  baseDelayMs: number;
  /** The longest wait in milliseconds, and the cap on a server's Retry-After (RETRY_MAX_DELAY_MS, 8,000). */
  maxDelayMs: number;
  /** Milliseconds without a byte before a response is given up with TIMEOUT (STALL_TIMEOUT_MS, 60,000). */
  stallTimeoutMs: number;
}

export const DEFAULT_RETRY_POLICY: Readonly<RetryPolicy> = Object.freeze({
  attempts: RETRY_ATTEMPTS,
  baseDelayMs: RETRY_BASE_DELAY_MS,
  maxDelayMs: RETRY_MAX_DELAY_MS,
  stallTimeoutMs: STALL_TIMEOUT_MS,
});

/**
 * The policy in force: the defaults, with the engine's (createEngine's `retry`: the fault table's tests
 * wait milliseconds, not seconds) and a request's own overrides on top.
 */
export function retryPolicy(overrides?: Partial<RetryPolicy>): RetryPolicy {
  return { ...DEFAULT_RETRY_POLICY, ...overrides };
}

/** Whether a request that failed this way may be sent again as it was. */
export function isRetryable(err: unknown): err is TransportError {
  if (!(err instanceof TransportError)) return false;
  if (err.code === 'NETWORK_ERROR') return err.beforeResponse === true;
  if (err.code !== 'HTTP_ERROR' || err.status === undefined) return false;
  return err.status === 429 || (err.status >= 500 && err.status <= 599);
}

/** The wait before attempt `attempt + 1`: the server's Retry-After when it gave one, else backoff; capped. */
export function retryDelay(
  attempt: number,
  err: { retryAfterMs?: number },
  policy: RetryPolicy,
  random = Math.random,
): number {
  if (err.retryAfterMs !== undefined) return Math.min(Math.max(0, err.retryAfterMs), policy.maxDelayMs);
  const backoff = policy.baseDelayMs * 2 ** (attempt - 1);
  return Math.min(policy.maxDelayMs, Math.round(backoff * (1 + RETRY_JITTER * random())));
}

/**
 * Parses Retry-After (RFC 9110 10.2.3): seconds, or an HTTP date. Null when absent or unreadable, so the
 * policy's own backoff applies.
 */
export function parseRetryAfter(value: string | null, now = Date.now()): number | undefined {
  if (!value) return undefined;
  const trimmed = value.trim();
  if (/^\d+$/.test(trimmed)) return Number(trimmed) * 1000;
  const date = Date.parse(trimmed);
  return Number.isNaN(date) ? undefined : Math.max(0, date - now);
}

/**
 * Runs `attempt` until it succeeds, fails with an error that is not retryable, or the attempts run out; the
 * last error is thrown with the number of attempts added to its message. The waits end at once on abort.
 */
export async function withRetry<T>(send: () => Promise<T>, opts: RetryOptions): Promise<T> {
  const policy = retryPolicy(opts.policy);
  for (let attempt = 1; ; attempt++) {
    try {
      return await send();
    } catch (err) {
      if (!isRetryable(err) || opts.signal?.aborted) throw err;
      if (err.code === 'NETWORK_ERROR' && opts.resets === false) throw err;
      if (attempt >= policy.attempts) throw gaveUp(err, attempt);
      const delayMs = retryDelay(attempt, err, policy);
      const reason = err.code === 'NETWORK_ERROR' ? 'reset the connection' : `answered HTTP ${err.status}`;
      opts.onRetry?.({
        attempt: attempt + 1,
        attempts: policy.attempts,
        delayMs,
        reason,
        text: `${opts.host} ${reason}; retrying in ${formatDelay(delayMs)}… (attempt ${attempt + 1} of ${policy.attempts})`,
      });
      await sleep(delayMs, opts.signal);
    }
  }
}

function gaveUp(err: TransportError, attempts: number): TransportError {
  const wait =
    err.retryAfterMs !== undefined ? ` The server asked to wait ${formatDelay(err.retryAfterMs)}.` : '';
  return new TransportError(err.code, `${err.message} (${attempts} attempts.${wait})`, err.status, {
    retryAfterMs: err.retryAfterMs,
    beforeResponse: err.beforeResponse,
  });
}

export function formatDelay(ms: number): string {
  return ms < 1000 ? `${Math.round(ms / 100) / 10} s` : `${Math.round(ms / 1000)} s`;
}

/** Waits `ms`; rejects with TransportError ABORTED at once when the signal fires. */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) {
      reject(new TransportError('ABORTED', 'The operation was cancelled.'));
      return;
    }
    const onAbort = () => {
      clearTimeout(timer);
      reject(new TransportError('ABORTED', 'The operation was cancelled.'));
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}
