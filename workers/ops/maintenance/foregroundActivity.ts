// What the person asked for goes before background work in the worker's one thread: the engine counts
// the calls in flight, and long background work (the commit-graph's steps) stops at its next
// safe point while one runs, or ran a moment ago, and waits for a quiet moment before its next step.

/** How long after the last call the worker counts as quiet: a scrolling list asks every few 100 ms. */
export const FOREGROUND_QUIET_MS = 500;

/**
 * The longest background work waits for a quiet moment before it takes one step anyway (a step stops
 * again after its first few commits if calls still come), so that it is never held off for good.
 */
export const FOREGROUND_MAX_WAIT_MS = 10_000;

/** One engine's calls in flight, and when the last one ended. */
export class ForegroundActivity {
  private inFlight = 0;
  private lastActive = Number.NEGATIVE_INFINITY;
  /**
   * FOREGROUND_QUIET_MS in the app. Tests shorten it (test/support/engine.ts): at 500 ms every test that
   * waited for a clone's background graph idled half a second or more after its last call, minutes a run.
   */
  quietMs = FOREGROUND_QUIET_MS;

  /** Counts `call` as foreground work while it runs (the engine wraps every operation the page asks for). */
  track<T>(call: () => T): T {
    this.inFlight++;
    this.lastActive = performance.now();
    const done = () => {
      this.inFlight--;
      this.lastActive = performance.now();
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

  /** Whether a foreground call runs or ended less than `quietMs` ago. */
  active(): boolean {
    return this.inFlight > 0 || performance.now() - this.lastActive < this.quietMs;
  }

  /** Resolves once the engine is quiet, or after FOREGROUND_MAX_WAIT_MS. */
  async quiet(): Promise<void> {
    const until = performance.now() + FOREGROUND_MAX_WAIT_MS;
    while (this.active() && performance.now() < until) {
      await new Promise((resolve) => setTimeout(resolve, this.quietMs / 2));
    }
  }
}
