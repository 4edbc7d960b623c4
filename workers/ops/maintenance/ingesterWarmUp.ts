import { warmUpIngester } from '../../pack/warmUp.ts';

// Three rounds of the synthetic pack: the only count measured (clone of medium.git 484 against 667 ms cold;
// 482-507 ms of the worker's time at page load). Fewer might do; not measured. docs/decisions/warm-up.md.
const ROUNDS = 3;

let warming: { done: Promise<'done' | 'stopped'>; controller: AbortController } | undefined;

/** Starts warming the ingester once per worker; resolves when it is done or was stopped, never rejects. */
export function warmUpOnce(): Promise<'done' | 'stopped'> {
  if (!warming) {
    const controller = new AbortController();
    const done = warmUpIngester(ROUNDS, controller.signal).then(
      () => 'done' as const,
      () => 'stopped' as const,
    );
    warming = { done, controller };
  }
  return warming.done;
}

/** An operation begins: a warm-up still running stops, so that it takes no time from it. */
export function stopWarmUp(): void {
  warming?.controller.abort();
}
