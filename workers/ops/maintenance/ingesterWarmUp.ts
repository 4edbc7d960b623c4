import { warmUpIngester } from '../../pack/warmUp.ts';

/** Rounds of the synthetic pack; chosen by the A/B table in docs/decisions/warm-up.md. */
export const ROUNDS = 3;

/**
 * The warm-up when a clone is likely, once per engine; any operation that begins stops it. First one
 * request (`warmRequest`), then the pack ingester's rounds, then what the engine adds (`thenWarm`).
 *
 * The request: Chromium sets a worker's network path up on its first request, and that first request
 * was the clone's. The clone's GET of info/refs then began 2.9 to 13.7 ms after the clone did (3 runs), and
 * 2.1 to 4.7 ms after one request of the warm-up's (8 runs; small, docs/decisions/warm-up.md, 2026-12-05).
 */
export class IngesterWarmUp {
  private warming: { done: Promise<'done' | 'stopped'>; controller: AbortController } | undefined;

  /**
   * @param warmRequest one request of no consequence (the engine: a HEAD of the worker's own script), or
   * none where there is no network path to set up (Node, tests).
   * @param thenWarm what else to warm up after the ingester's rounds, given by the engine since this
   * folder may not import the ops that a clone runs (the engine: sync/refsWarmUp.ts, a clone's refs).
   */
  constructor(
    private readonly warmRequest?: (signal: AbortSignal) => Promise<unknown>,
    private readonly thenWarm?: (signal: AbortSignal) => Promise<unknown>,
  ) {}

  /** Starts warming up once; resolves when it is done or was stopped, never rejects. */
  once(rounds = ROUNDS): Promise<'done' | 'stopped'> {
    if (!this.warming) {
      const controller = new AbortController();
      const { signal } = controller;
      // No rounds is the bench's "off": no request either.
      const requested =
        rounds > 0 && this.warmRequest ? this.warmRequest(signal).catch(() => undefined) : null;
      const done = Promise.resolve(requested)
        .then(() => warmUpIngester(rounds, signal))
        .then(() => (rounds > 0 ? this.thenWarm?.(signal) : undefined))
        .then(
          () => 'done' as const,
          () => 'stopped' as const,
        );
      this.warming = { done, controller };
    }
    return this.warming.done;
  }

  /** An operation begins: a warm-up still running stops, so that it takes no time from it. */
  stop(): void {
    this.warming?.controller.abort();
  }
}
