// Long synchronous work in a worker leaves every other call to it waiting: the tab's only git worker must
// answer a second call while a first one checks a hostile tree. Work done in a loop asks `due()` now and
// then, and yields a task when it is.

/**
 * How long a loop may keep the worker before letting queued calls in: well under the 1 s a call may wait.
 * A yield costs 0.005-0.15 ms here (setTimeout: 1.2-3 ms). Walking hostile-deep.git's 5,001 trees (Node,
 * least / median of 5, 2 shared cores at load 17): 1,341 / 1,719 ms never yielding, 1,501 / 1,715 every
 * 50 ms, 1,497 / 1,997 every 10 ms: at 50 ms the yields do not show.
 */
export const SLICE_MS = 50;

export class TimeSlice {
  private started = performance.now();
  /** This slice's own channel, made on its first yield: nothing is shared between operations or engines. */
  private channel: MessageChannel | null = null;
  private readonly waiting: (() => void)[] = [];

  constructor(private readonly ms = SLICE_MS) {}

  /** Whether this slice has run its time. */
  due(): boolean {
    return performance.now() - this.started >= this.ms;
  }

  /**
   * Lets queued tasks run: a task of its own, posted on a MessageChannel behind the messages already queued
   * (a call to the worker is one of them). Not a microtask, nor scheduler.yield, whose continuation runs
   * ahead of the calls waiting (as warmUpIngester in warmUp.ts found); not setTimeout, which a browser holds
   * back 4 ms once timeouts nest and which, on a loaded machine, puts the process to sleep.
   */
  async yield(): Promise<void> {
    await this.nextTask();
    this.started = performance.now();
  }

  private nextTask(): Promise<void> {
    if (typeof MessageChannel === 'undefined') return new Promise((resolve) => setTimeout(resolve, 0));
    if (!this.channel) {
      const made = new MessageChannel();
      made.port1.onmessage = () => {
        this.waiting.shift()?.();
        // Closed once no yield waits: an open port would keep Node's process alive, and a slice may be
        // dropped at any time.
        if (this.waiting.length === 0) {
          made.port1.close();
          made.port2.close();
          if (this.channel === made) this.channel = null;
        }
      };
      this.channel = made;
    }
    const port = this.channel.port2;
    return new Promise((resolve) => {
      this.waiting.push(resolve);
      port.postMessage(null);
    });
  }

  /** `yield()` when due. */
  async pause(): Promise<void> {
    if (this.due()) await this.yield();
  }
}
