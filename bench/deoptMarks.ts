import type { Page } from '@playwright/test';

/**
 * Puts a mark into V8's deoptimization trace (`--js-flags=--trace-deopt-verbose`) in every worker of
 * `page`: a function named `bloblessPhase_<phase>` is run until V8 has compiled it, then called with a
 * string, which V8 reports as a bailout by that name. The trace has no clock, and Chromium hands its
 * output over in blocks, so this is how bench/traceDeopts.ts tells the warm-up's bailouts from the
 * clone's and the clone's from the checkout's. `--mark-phases` of bench/run.ts calls it.
 */
export async function markPhase(page: Page, phase: string): Promise<void> {
  const source = `(async () => {
    const f = new Function('return function bloblessPhase_${phase.replace(/\W/g, '_')}(x) { return x + 1; }')();
    let sum = 0;
    for (let round = 0; round < 6; round++) {
      for (let i = 0; i < 200000; i++) sum = f(i) & 0xffff;
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
    return f('mark') + sum;
  })()`;
  for (const worker of page.workers()) await worker.evaluate(source).catch(() => undefined);
}
