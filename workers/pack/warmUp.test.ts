import { describe, expect, it } from 'vitest';
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

  it('stops at once when an operation begins', async () => {
    const controller = new AbortController();
    const warming = warmUpIngester(3, controller.signal);
    controller.abort();
    await expect(warming).rejects.toMatchObject({ code: 'ABORTED' });
  });
});
