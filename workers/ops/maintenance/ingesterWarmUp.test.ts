import { describe, expect, it } from 'vitest';
import { IngesterWarmUp } from './ingesterWarmUp.ts';

describe('the warm-up before a clone', () => {
  it('makes its one request first, once, then ingests its rounds', async () => {
    const requests: AbortSignal[] = [];
    const warmUp = new IngesterWarmUp(async (signal) => {
      requests.push(signal);
    });
    expect(await warmUp.once(1)).toBe('done');
    expect(await warmUp.once(1)).toBe('done');
    expect(requests).toHaveLength(1);
    expect(requests[0].aborted).toBe(false);
  });

  it('goes on with its rounds when the request fails, and a stop reaches the request', async () => {
    let signal: AbortSignal | undefined;
    const warmUp = new IngesterWarmUp(async (s) => {
      signal = s;
      throw new TypeError('Failed to fetch');
    });
    expect(await warmUp.once(1)).toBe('done');
    warmUp.stop();
    expect(signal?.aborted).toBe(true);
  });

  it('is stopped while its request is on the way', async () => {
    let answer: () => void = () => {};
    const warmUp = new IngesterWarmUp(() => new Promise<void>((resolve) => (answer = resolve)));
    const done = warmUp.once(3);
    warmUp.stop();
    answer();
    expect(await done).toBe('stopped');
  });

  it('is not started by a stop, which every operation sends whether or not a warm-up ran', async () => {
    let requests = 0;
    const warmUp = new IngesterWarmUp(async () => {
      requests++;
    });
    expect(() => warmUp.stop()).not.toThrow();
    expect(requests).toBe(0);
    expect(await warmUp.once(1)).toBe('done');
  });

  it("warms up what the engine adds after the ingester's rounds, with the signal a stop aborts", async () => {
    const order: string[] = [];
    let given: AbortSignal | undefined;
    const warmUp = new IngesterWarmUp(
      async () => {
        order.push('request');
      },
      async (signal) => {
        given = signal;
        order.push('then');
      },
    );
    expect(await warmUp.once(1)).toBe('done');
    expect(order).toEqual(['request', 'then']);
    warmUp.stop();
    expect(given?.aborted).toBe(true);
  });

  it('reports stopped when what the engine adds is stopped', async () => {
    const warmUp = new IngesterWarmUp(undefined, async (signal) => {
      await new Promise((resolve) => setTimeout(resolve, 0));
      if (signal.aborted) throw new Error('stopped');
    });
    const done = warmUp.once(1);
    // The ingester's round takes many tasks; the stop lands before the added step ends.
    setTimeout(() => warmUp.stop(), 0);
    expect(await done).toBe('stopped');
  });

  it('makes no request with no rounds, the bench off', async () => {
    let requests = 0;
    const warmUp = new IngesterWarmUp(async () => {
      requests++;
    });
    expect(await warmUp.once(0)).toBe('done');
    expect(requests).toBe(0);
    let added = 0;
    const withMore = new IngesterWarmUp(undefined, async () => {
      added++;
    });
    expect(await withMore.once(0)).toBe('done');
    expect(added).toBe(0);
  });
});
