/**
 * How many timer tasks ran while `work` did: a chain of `setTimeout(…, 0)` that goes on until `work`
 * settles. Work that yields to the event loop between its steps lets some run; work that never yields,
 * none.
 */
export async function timerTicksDuring(work: () => Promise<unknown>): Promise<number> {
  let ticks = 0;
  let ticking = true;
  const tick = () => {
    ticks++;
    if (ticking) setTimeout(tick, 0);
  };
  setTimeout(tick, 0);
  try {
    await work();
  } finally {
    ticking = false;
  }
  return ticks;
}
