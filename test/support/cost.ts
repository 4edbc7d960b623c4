/**
 * Cost properties: whether work grows in proportion to its input. A time per element is compared at a size
 * and at eight times that size, so the machine's speed cancels out. The time is this process's CPU time, not
 * the clock's: on a shared machine the clock also counts the time other processes ran. Each figure is the
 * least of a few samples, each long enough for the timer (interference only adds time, so the least is the
 * cleanest), and the two sizes are sampled in turn, so whatever disturbs one falls on both.
 */

/** Milliseconds of CPU this process has used (Node); the clock where there is no such count. */
function cpuMs(): number {
  if (typeof process === 'undefined' || !process.cpuUsage) return performance.now();
  const { user, system } = process.cpuUsage();
  return (user + system) / 1000;
}

type Run = (size: number) => unknown;

/** Milliseconds per element of `run(size)`: the least of `samples` samples, each at least `minMs` long. */
async function perElement(run: Run, size: number, minMs: number): Promise<number> {
  let reps = 0;
  let spent = 0;
  const started = cpuMs();
  while (spent < minMs) {
    await run(size);
    reps++;
    spent = cpuMs() - started;
  }
  return spent / (reps * size);
}

/**
 * How much more each element costs at `8 * n` than at `n`: about 1 for linear work, about 8 for quadratic.
 * `run(size)` must do work proportional to `size` when linear. A figure over `bound` is measured again (up
 * to `attempts` times, the least kept): the CPU time of a process also counts its compiler and collector
 * threads, which now and then land on one size; quadratic work is over the bound every time.
 */
export async function growthAtEightfold(
  run: Run,
  n: number,
  bound = LINEAR_GROWTH_BOUND,
  attempts = 3,
): Promise<number> {
  let growth = Number.POSITIVE_INFINITY;
  for (let a = 0; a < attempts && growth >= bound; a++) {
    for (let warm = 0; warm < 2; warm++) {
      await run(n);
      await run(8 * n);
    }
    let small = Number.POSITIVE_INFINITY;
    let large = Number.POSITIVE_INFINITY;
    for (let s = 0; s < 3; s++) {
      small = Math.min(small, await perElement(run, n, 4));
      large = Math.min(large, await perElement(run, 8 * n, 4));
    }
    growth = Math.min(growth, large / small);
  }
  return growth;
}

/** Linear work stays under this growth at eight times the size; quadratic is near 8. */
export const LINEAR_GROWTH_BOUND = 3;
