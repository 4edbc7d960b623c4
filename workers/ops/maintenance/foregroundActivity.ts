// What the person asked for goes before background work in the worker's one thread: the worker's entry
// point counts the calls in flight, and long background work (the commit-graph's steps) stops at its next
// safe point while one runs, or ran a moment ago, and waits for a quiet moment before its next step.

/** How long after the last call the worker counts as quiet: a scrolling list asks every few 100 ms. */
export const FOREGROUND_QUIET_MS = 500;

/**
 * The longest background work waits for a quiet moment before it takes one step anyway (a step stops
 * again after its first few commits if calls still come), so that it is never held off for good.
 */
export const FOREGROUND_MAX_WAIT_MS = 10_000;

let inFlight = 0;
let lastActive = Number.NEGATIVE_INFINITY;

/** Counts `call` as foreground work while it runs (the worker's entry point wraps every API call). */
export function asForeground<T>(call: () => T): T {
  inFlight++;
  lastActive = performance.now();
  const done = () => {
    inFlight--;
    lastActive = performance.now();
  };
  let result: T;
  try {
    result = call();
  } catch (err) {
    done();
    throw err;
  }
  if (result instanceof Promise) result.then(done, done);
  else done();
  return result;
}

/** Whether a foreground call runs or ended less than FOREGROUND_QUIET_MS ago. */
export function foregroundActive(): boolean {
  return inFlight > 0 || performance.now() - lastActive < FOREGROUND_QUIET_MS;
}

/** Resolves once the worker is quiet, or after FOREGROUND_MAX_WAIT_MS. */
export async function foregroundQuiet(): Promise<void> {
  const until = performance.now() + FOREGROUND_MAX_WAIT_MS;
  while (foregroundActive() && performance.now() < until) {
    await new Promise((resolve) => setTimeout(resolve, FOREGROUND_QUIET_MS / 2));
  }
}
