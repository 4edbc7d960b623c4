import { getEventListeners } from 'node:events';
import { describe, expect, it } from 'vitest';
import { TransportError } from './errors.ts';
import {
  DEFAULT_RETRY_POLICY,
  formatDelay,
  isRetryable,
  parseRetryAfter,
  type RetryNotice,
  retryDelay,
  retryPolicy,
  sleep,
  withRetry,
} from './retryPolicy.ts';

const policy = { attempts: 4, baseDelayMs: 500, maxDelayMs: 8000, stallTimeoutMs: 1 };

describe('retry policy', () => {
  it('is the defaults with the overrides on top', () => {
    expect(retryPolicy()).toEqual({
      attempts: 4,
      baseDelayMs: 500,
      maxDelayMs: 8000,
      stallTimeoutMs: 60_000,
    });
    expect(retryPolicy({ attempts: 2 })).toEqual({ ...DEFAULT_RETRY_POLICY, attempts: 2 });
  });

  it('retries a 429, a 5xx and a reset before the response; nothing else', () => {
    const http = (status?: number) => new TransportError('HTTP_ERROR', 'x', status);
    expect([429, 500, 503, 599].map((s) => isRetryable(http(s)))).toEqual([true, true, true, true]);
    expect([400, 428, 430, 499, 600].map((s) => isRetryable(http(s)))).toEqual([
      false,
      false,
      false,
      false,
      false,
    ]);
    expect(isRetryable(http())).toBe(false);
    expect(isRetryable(new TransportError('HTTP_NOT_FOUND', 'x', 503))).toBe(false);
    expect(isRetryable(new TransportError('NETWORK_ERROR', 'x', undefined, { beforeResponse: true }))).toBe(
      true,
    );
    expect(isRetryable(new TransportError('NETWORK_ERROR', 'x'))).toBe(false);
    expect(isRetryable(new TransportError('NETWORK_ERROR', 'x', undefined, { beforeResponse: false }))).toBe(
      false,
    );
    expect(isRetryable(Object.assign(new Error('x'), { code: 'HTTP_ERROR', status: 503 }))).toBe(false);
  });
});

describe('retry delays', () => {
  it('doubles from the base, with at most 20 % added, capped', () => {
    expect([1, 2, 3].map((a) => retryDelay(a, {}, policy, () => 0))).toEqual([500, 1000, 2000]);
    expect(retryDelay(2, {}, policy, () => 1)).toBe(1200);
    expect(retryDelay(10, {}, policy, () => 0)).toBe(8000);
    // Rounded to whole milliseconds: 3 × 1.1.
    expect(retryDelay(1, {}, { ...policy, baseDelayMs: 3 }, () => 0.5)).toBe(3);
  });
  it('takes Retry-After as given under the cap, never below 0', () => {
    expect(retryDelay(1, { retryAfterMs: 3000 }, policy)).toBe(3000);
    expect(retryDelay(1, { retryAfterMs: 120_000 }, policy)).toBe(8000);
    expect(retryDelay(1, { retryAfterMs: -5 }, policy)).toBe(0);
    expect(retryDelay(3, { retryAfterMs: 0 }, policy, () => 0)).toBe(0);
  });
  it('reads Retry-After as seconds or an HTTP date', () => {
    expect(parseRetryAfter('7')).toBe(7000);
    expect(parseRetryAfter(' 12 ')).toBe(12_000);
    const now = Date.parse('Mon, 30 Nov 2026 12:00:00 GMT');
    expect(parseRetryAfter('Mon, 30 Nov 2026 12:00:05 GMT', now)).toBe(5000);
    expect(parseRetryAfter('Mon, 30 Nov 2026 11:59:00 GMT', now)).toBe(0);
    expect(parseRetryAfter('12', now)).toBe(12_000);
    for (const bad of ['soon', 'x12', '12x']) expect(parseRetryAfter(bad, now)).toBeUndefined();
    expect(parseRetryAfter(null)).toBeUndefined();
    expect(parseRetryAfter('')).toBeUndefined();
  });
  it('are told in tenths of a second below one, in seconds above', () => {
    expect([0, 40, 250, 999, 1000, 1499, 1500, 8000].map(formatDelay)).toEqual([
      '0 s',
      '0 s',
      '0.3 s',
      '1 s',
      '1 s',
      '1 s',
      '2 s',
      '8 s',
    ]);
  });
});

describe('withRetry', () => {
  const fast = { attempts: 3, baseDelayMs: 1, maxDelayMs: 4 };
  const http503 = () => new TransportError('HTTP_ERROR', 'HTTP 503 there', 503, { retryAfterMs: 2 });
  const reset = () => new TransportError('NETWORK_ERROR', 'reset', undefined, { beforeResponse: true });

  /** A send that fails with each of `errors` in turn, then answers `ok`. */
  function sender(errors: Error[]) {
    const calls = { n: 0 };
    const send = async () => {
      const err = errors[calls.n++];
      if (err) throw err;
      return 'ok';
    };
    return { send, calls };
  }

  it('sends again after a retryable failure, telling each wait', async () => {
    const { send, calls } = sender([http503(), reset()]);
    const notices: RetryNotice[] = [];
    const result = await withRetry(send, {
      host: 'git.example',
      policy: fast,
      onRetry: (n) => notices.push(n),
    });
    expect(result).toBe('ok');
    expect(calls.n).toBe(3);
    expect(notices).toEqual([
      {
        attempt: 2,
        attempts: 3,
        delayMs: 2,
        reason: 'answered HTTP 503',
        text: 'git.example answered HTTP 503; retrying in 0 s… (attempt 2 of 3)',
      },
      {
        attempt: 3,
        attempts: 3,
        delayMs: expect.any(Number),
        reason: 'reset the connection',
        text: expect.stringMatching(
          /^git\.example reset the connection; retrying in 0 s… \(attempt 3 of 3\)$/,
        ),
      },
    ]);
    // The second wait is the backoff's: 1 ms doubled, with at most 20 % more.
    expect(notices[1]?.delayMs).toBeGreaterThanOrEqual(2);
    expect(notices[1]?.delayMs).toBeLessThanOrEqual(3);
  });

  it('gives up after the attempts with the last error, the count and the wait the server asked', async () => {
    const { send, calls } = sender([http503(), http503(), http503(), http503()]);
    const err = await withRetry(send, { host: 'h', policy: fast }).catch((e: unknown) => e);
    expect(calls.n).toBe(3);
    expect(err).toBeInstanceOf(TransportError);
    expect(err).toMatchObject({
      code: 'HTTP_ERROR',
      status: 503,
      retryAfterMs: 2,
      beforeResponse: undefined,
    });
    expect((err as Error).message).toBe('HTTP 503 there (3 attempts. The server asked to wait 0 s.)');

    const resets = sender([reset(), reset()]);
    const last = await withRetry(resets.send, { host: 'h', policy: { ...fast, attempts: 2 } }).catch(
      (e: unknown) => e,
    );
    expect(resets.calls.n).toBe(2);
    expect(last).toMatchObject({
      code: 'NETWORK_ERROR',
      message: 'reset (2 attempts.)',
      beforeResponse: true,
    });
  });

  it('does not send again what is not retryable, a reset when told not to, or once aborted', async () => {
    const notFound = new TransportError('HTTP_NOT_FOUND', '404', 404);
    const a = sender([notFound]);
    expect(await withRetry(a.send, { host: 'h', policy: fast }).catch((e: unknown) => e)).toBe(notFound);
    expect(a.calls.n).toBe(1);

    const firstReset = reset();
    const b = sender([firstReset]);
    expect(await withRetry(b.send, { host: 'h', policy: fast, resets: false }).catch((e: unknown) => e)).toBe(
      firstReset,
    );
    expect(b.calls.n).toBe(1);
    // resets: false still retries a 503.
    const c = sender([http503()]);
    expect(await withRetry(c.send, { host: 'h', policy: fast, resets: false })).toBe('ok');

    const controller = new AbortController();
    controller.abort();
    const first503 = http503();
    const d = sender([first503]);
    expect(
      await withRetry(d.send, { host: 'h', policy: fast, signal: controller.signal }).catch((e) => e),
    ).toBe(first503);
    expect(d.calls.n).toBe(1);
  });

  it('ends its wait at once on abort, as ABORTED', async () => {
    const controller = new AbortController();
    const { send, calls } = sender([new TransportError('HTTP_ERROR', 'HTTP 503', 503)]);
    const started = Date.now();
    const err = await withRetry(send, {
      host: 'h',
      policy: { attempts: 2, baseDelayMs: 60_000, maxDelayMs: 60_000 },
      signal: controller.signal,
      onRetry: () => setTimeout(() => controller.abort(), 5),
    }).catch((e: unknown) => e);
    expect(err).toMatchObject({ code: 'ABORTED', message: 'The operation was cancelled.' });
    expect(calls.n).toBe(1);
    // A deadline, not a timing: the wait it ended was a minute.
    expect(Date.now() - started).toBeLessThan(30_000);
  });
});

describe('sleep', () => {
  it('waits the time given', async () => {
    const started = performance.now();
    await sleep(30);
    // setTimeout may fire a millisecond early by its own rounding.
    expect(performance.now() - started).toBeGreaterThanOrEqual(28);
    // A wait that ended leaves no listener on the signal, which outlives it (one per retry of a long clone).
    const signal = new AbortController().signal;
    await sleep(1, signal);
    expect(getEventListeners(signal, 'abort')).toEqual([]);
  });
  it('rejects with ABORTED when the signal fired before or fires during the wait', async () => {
    const before = new AbortController();
    before.abort();
    await expect(sleep(1, before.signal)).rejects.toMatchObject({
      code: 'ABORTED',
      message: 'The operation was cancelled.',
    });
    const during = new AbortController();
    const wait = sleep(60_000, during.signal);
    during.abort();
    await expect(wait).rejects.toMatchObject({ code: 'ABORTED', message: 'The operation was cancelled.' });
    expect(getEventListeners(during.signal, 'abort')).toEqual([]);
  });
});
