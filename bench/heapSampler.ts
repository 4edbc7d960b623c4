import type { CDPSession, Page } from '@playwright/test';

const MB = 1024 * 1024;
const SAMPLE_TIMEOUT_MS = 2000;
/** A profile of a long checkout is tens of MB of JSON: its Profiler.stop may take seconds to answer. */
const COMMAND_TIMEOUT_MS = 60_000;

/**
 * Samples the JS heap of a page's dedicated workers every `intervalMs` over the Chrome DevTools Protocol.
 * `performance.memory` does not exist in workers (measured: Chromium 156 has it on window only), and a
 * worker timing itself would miss its own peaks while busy; DevTools commands interrupt running JS, so
 * `Runtime.getHeapUsage` answers in the middle of a pack parse.
 *
 * One sample is V8's used heap plus the backing stores of ArrayBuffers (`backingStorageSize`), because
 * packs, inflated objects and IndexedDB writes live in typed arrays outside the V8 heap proper.
 */
export class HeapSampler {
  private readonly workers = new Map<string, string>();
  private readonly peaks = new Map<string, number>();
  private readonly pending = new Map<number, (result: unknown) => void>();
  private nextId = 1;
  private timer: ReturnType<typeof setInterval> | undefined;
  private sampling = false;

  private constructor(private readonly cdp: CDPSession) {}

  static async attach(page: Page, intervalMs = 100): Promise<HeapSampler> {
    const cdp = await page.context().newCDPSession(page);
    const sampler = new HeapSampler(cdp);
    cdp.on('Target.attachedToTarget', (e) => {
      if (e.targetInfo.type === 'worker') sampler.workers.set(e.sessionId, e.targetInfo.url);
    });
    cdp.on('Target.detachedFromTarget', (e) => {
      sampler.workers.delete(e.sessionId);
    });
    cdp.on('Target.receivedMessageFromTarget', (e) => {
      const message = JSON.parse(e.message) as { id?: number; result?: unknown; error?: unknown };
      const resolve = message.id === undefined ? undefined : sampler.pending.get(message.id);
      if (resolve) {
        sampler.pending.delete(message.id!);
        resolve(message.error ? undefined : message.result);
      }
    });
    // Not flattened: Playwright's CDPSession cannot address child sessions, so messages go through
    // Target.sendMessageToTarget. Existing workers are attached too.
    await cdp.send('Target.setAutoAttach', {
      autoAttach: true,
      waitForDebuggerOnStart: false,
      flatten: false,
    });
    sampler.timer = setInterval(() => void sampler.sample(), intervalMs);
    return sampler;
  }

  /** Starts a new window: peaks from now on. */
  reset(): void {
    this.peaks.clear();
  }

  /** Takes one more sample now, so an operation's last moments count. */
  async sample(): Promise<void> {
    if (this.sampling) return;
    this.sampling = true;
    try {
      await Promise.all(
        [...this.workers].map(async ([sessionId, url]) => {
          const usage = (await this.send(sessionId, 'Runtime.getHeapUsage')) as
            | { usedSize: number; backingStorageSize?: number }
            | undefined;
          if (!usage) return;
          const bytes = usage.usedSize + (usage.backingStorageSize ?? 0);
          // Every sample, to see in which step of an operation a peak falls (newWorktree.ts's table).
          if (process.env.HEAP_TRACE) {
            const mb = (n: number) => (n / MB).toFixed(1);
            process.stderr.write(
              `heap ${Date.now()} ${url} used ${mb(usage.usedSize)} backing ${mb(usage.backingStorageSize ?? 0)}\n`,
            );
          }
          this.peaks.set(url, Math.max(this.peaks.get(url) ?? 0, bytes));
        }),
      );
    } finally {
      this.sampling = false;
    }
  }

  /** Peak MB since the last reset of the workers whose script URL contains `urlPart`; null if none ran. */
  peakMB(urlPart: string): number | null {
    let peak: number | null = null;
    for (const [url, bytes] of this.peaks) if (url.includes(urlPart)) peak = Math.max(peak ?? 0, bytes);
    return peak === null ? null : peak / MB;
  }

  /**
   * Evaluates `expression` (which must produce a string) in the first worker whose script URL contains
   * `urlPart`: how `--profile` reads a worker's User Timing measures without an API for it in the worker.
   */
  async evaluate(urlPart: string, expression: string): Promise<string | null> {
    for (const [sessionId, url] of this.workers) {
      if (!url.includes(urlPart)) continue;
      const answer = (await this.send(sessionId, 'Runtime.evaluate', { expression, returnByValue: true })) as
        | { result?: { value?: unknown } }
        | undefined;
      const value = answer?.result?.value;
      return typeof value === 'string' ? value : null;
    }
    return null;
  }

  /**
   * One DevTools command to the first worker whose script URL contains `urlPart`, its answer or undefined:
   * how `--cpu-profile` starts and stops the git worker's profiler around an operation.
   */
  async command(urlPart: string, method: string, params?: object): Promise<unknown> {
    for (const [sessionId, url] of this.workers) {
      if (url.includes(urlPart)) return this.send(sessionId, method, params, COMMAND_TIMEOUT_MS);
    }
    return undefined;
  }

  async stop(): Promise<void> {
    clearInterval(this.timer);
    for (const resolve of this.pending.values()) resolve(undefined);
    this.pending.clear();
    await this.cdp.detach().catch(() => undefined);
  }

  /**
   * One DevTools command to a worker. A worker terminated mid-command never answers, so an answer that
   * takes longer than `timeoutMs` counts as no sample.
   */
  private send(
    sessionId: string,
    method: string,
    params?: object,
    timeoutMs = SAMPLE_TIMEOUT_MS,
  ): Promise<unknown> {
    const id = this.nextId++;
    return new Promise((resolve) => {
      const done = (result: unknown) => {
        clearTimeout(timer);
        this.pending.delete(id);
        resolve(result);
      };
      const timer = setTimeout(() => done(undefined), timeoutMs);
      this.pending.set(id, done);
      this.cdp
        .send('Target.sendMessageToTarget', { sessionId, message: JSON.stringify({ id, method, params }) })
        // The worker went away between two samples (terminated at its cap, or the page closed).
        .catch(() => done(undefined));
    });
  }
}
