import { afterEach, describe, expect, it, vi } from 'vitest';
import { SLICE_MS, TimeSlice } from './timeSlice.ts';

// The clock is the test's: a slice is judged by the time it reads, never by how busy the machine is.
let now = 0;
afterEach(() => vi.restoreAllMocks());
function fakeClock(): void {
  now = 1000;
  vi.spyOn(performance, 'now').mockImplementation(() => now);
}

/** Resolves after the tasks queued before it (a MessageChannel message is a task of its own). */
const afterQueuedTask = () => new Promise<void>((resolve) => setImmediate(resolve));

describe('TimeSlice', () => {
  it('is due once its time has run, from the moment it was made', () => {
    fakeClock();
    const slice = new TimeSlice(50);
    expect(slice.due()).toBe(false);
    now += 49.9;
    expect(slice.due()).toBe(false);
    now += 0.1;
    expect(slice.due()).toBe(true);
    const standard = new TimeSlice();
    now += SLICE_MS - 0.1;
    expect(standard.due()).toBe(false);
    now += 0.1;
    expect(standard.due()).toBe(true);
  });

  it('starts a new slice after a yield, and pause yields only when due', async () => {
    fakeClock();
    const slice = new TimeSlice(50);
    now += 30;
    await slice.pause(); // not due: the slice keeps its start
    now += 20;
    expect(slice.due()).toBe(true);
    await slice.pause(); // due: yields and starts again now
    expect(slice.due()).toBe(false);
    now += 49;
    expect(slice.due()).toBe(false);
    now += 1;
    await slice.yield();
    expect(slice.due()).toBe(false);
  });

  it('yields a task: work queued before the yield runs before it returns, and pause when not due does not', async () => {
    const slice = new TimeSlice(Number.POSITIVE_INFINITY);
    const order: string[] = [];
    setImmediate(() => order.push('queued'));
    await slice.pause();
    order.push('after pause');
    await afterQueuedTask();
    const second = new TimeSlice(0);
    const ticks: string[] = [];
    // A microtask chain longer than a yield through microtasks would take: a task runs after all of it.
    let chain = Promise.resolve();
    for (let i = 0; i < 100; i++) chain = chain.then(() => void ticks.push('micro'));
    await second.yield();
    expect(ticks.length).toBe(100);
    expect(order).toEqual(['after pause', 'queued']);
  });

  it('serves yields waiting at once, and yields again after they are done', async () => {
    const slice = new TimeSlice(0);
    await Promise.all([slice.yield(), slice.yield(), slice.yield()]);
    for (let i = 0; i < 3; i++) await slice.yield();
    await Promise.all([slice.pause(), slice.pause()]);
  });

  it('closes both ports of its channel once no yield waits, and makes a new one for the next', async () => {
    const channels: { closed: number }[] = [];
    const Native = MessageChannel;
    vi.stubGlobal(
      'MessageChannel',
      class extends Native {
        constructor() {
          super();
          const record = { closed: 0 };
          channels.push(record);
          for (const port of [this.port1, this.port2]) {
            const close = port.close.bind(port);
            port.close = () => {
              record.closed++;
              close();
            };
          }
        }
      },
    );
    try {
      const slice = new TimeSlice(0);
      await Promise.all([slice.yield(), slice.yield()]);
      expect(channels).toEqual([{ closed: 2 }]);
      await slice.yield();
      expect(channels).toEqual([{ closed: 2 }, { closed: 2 }]);
    } finally {
      vi.unstubAllGlobals();
    }
  });

  it('falls back to a timer where there is no MessageChannel', async () => {
    vi.stubGlobal('MessageChannel', undefined);
    try {
      const slice = new TimeSlice(0);
      await slice.yield();
      await slice.pause();
    } finally {
      vi.unstubAllGlobals();
    }
  });
});
