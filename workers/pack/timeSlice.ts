// Long synchronous work in a worker leaves every other call to it waiting: the tab's only git worker must
// answer a second call while a first one checks a hostile tree. Work done in a loop asks `due()` now and
// then, and yields a task when it is.

/** How long a loop may keep the worker before letting queued calls in: well under the 1 s a call may wait. */
export const SLICE_MS = 50;

export class TimeSlice {
  private started = performance.now();

  constructor(private readonly ms = SLICE_MS) {}

  /** Whether this slice has run its time. */
  due(): boolean {
    return performance.now() - this.started >= this.ms;
  }

  /**
   * Lets queued tasks run: a task, not a microtask nor scheduler.yield, whose continuation would run ahead
   * of the calls waiting to be answered (as warmUpIngester in warmUp.ts found).
   */
  async yield(): Promise<void> {
    await new Promise((resolve) => setTimeout(resolve, 0));
    this.started = performance.now();
  }

  /** `yield()` when due. */
  async pause(): Promise<void> {
    if (this.due()) await this.yield();
  }
}
