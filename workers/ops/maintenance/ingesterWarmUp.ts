import { warmUpIngester } from '../../pack/warmUp.ts';

/** Rounds of the synthetic pack; chosen by the A/B table in docs/decisions/warm-up.md. */
export const ROUNDS = 3;

/** The page-load warm-up of the pack ingester, once per engine; any operation that begins stops it. */
export class IngesterWarmUp {
  private warming: { done: Promise<'done' | 'stopped'>; controller: AbortController } | undefined;

  /** Starts warming the ingester once; resolves when it is done or was stopped, never rejects. */
  once(rounds = ROUNDS): Promise<'done' | 'stopped'> {
    if (!this.warming) {
      const controller = new AbortController();
      const done = warmUpIngester(rounds, controller.signal).then(
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
