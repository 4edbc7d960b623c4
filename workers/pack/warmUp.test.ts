import { describe, expect, it, vi } from 'vitest';
import { PackIngester } from './packIngester.ts';
import { warmUpIngester, warmUpPack } from './warmUp.ts';

describe('warming the ingester up', () => {
  it('ingests a valid pack of trees and delta chains, with most deltas resolved as they arrive', async () => {
    const pack = await warmUpPack();
    let first: { resolved: number; total: number } | undefined;
    const ingester = await PackIngester.create({
      onProgress: (p) => {
        if (p.phase === 'resolving') first ??= p;
      },
    });
    ingester.push(pack);
    const result = await ingester.finish();
    expect(result.counts).toEqual({ commit: 0, tree: 3000, blob: 0, tag: 0 });
    // Each chain's objects differ: the delta results are not their bases.
    expect(new Set(result.objects.map((o) => o.oid)).size).toBe(300);
    expect(first!.total).toBe(2700);
    expect(first!.resolved).toBe(2700);
  });

  it('runs whole rounds, letting timers in between its pushes', async () => {
    let ticks = 0;
    let ticking = true;
    const tick = () => {
      ticks++;
      if (ticking) setTimeout(tick, 0);
    };
    setTimeout(tick, 0);
    await warmUpIngester(1, new AbortController().signal);
    ticking = false;
    // The pack is some 9 pushes of 64 KiB: a timer ran between them.
    expect(ticks).toBeGreaterThan(3);
  });

  it('stops at once when an operation begins', async () => {
    const controller = new AbortController();
    const warming = warmUpIngester(3, controller.signal);
    controller.abort();
    await expect(warming).rejects.toMatchObject({ code: 'ABORTED' });
  });

  it('stops when an operation begins while a round finishes, after its last push', async () => {
    const controller = new AbortController();
    const finish = PackIngester.prototype.finish;
    const finishing = vi.spyOn(PackIngester.prototype, 'finish').mockImplementation(function (
      this: PackIngester,
      options,
    ) {
      controller.abort();
      return finish.call(this, options);
    });
    try {
      // One round: nothing after its finish checks the signal, so only the ingester's own check stops it.
      await expect(warmUpIngester(1, controller.signal)).rejects.toMatchObject({ code: 'ABORTED' });
      expect(finishing).toHaveBeenCalledOnce();
    } finally {
      finishing.mockRestore();
    }
  });
});
