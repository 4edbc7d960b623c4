import { describe, expect, it, vi } from 'vitest';
import { timerTicksDuring } from '../../test/support/timerTicks.ts';
import { INFLATE_DONE, Inflater } from './inflate.ts';
import { PackIngester, type PackIngesterOptions } from './packIngester.ts';
import { PackReader } from './packReader.ts';
import { pushSize, warmUpIngester, warmUpPack } from './warmUp.ts';

describe('warming the ingester up', () => {
  it('ingests a valid pack of trees, delta chains and text blobs, with most deltas resolved as they arrive', async () => {
    const pack = await warmUpPack();
    let first: { resolved: number; total: number } | undefined;
    const ingester = await PackIngester.create({
      onProgress: (p) => {
        if (p.phase === 'resolving') first ??= p;
      },
    });
    ingester.push(pack);
    const result = await ingester.finish();
    expect(result.counts).toEqual({ commit: 0, tree: 1803, blob: 96, tag: 0 });
    // Each chain's objects differ: the delta results are not their bases. Each blob differs too.
    expect(new Set(result.objects.map((o) => o.oid)).size).toBe(333);
    expect(first!.total).toBe(1623);
    expect(first!.resolved).toBe(1623);
  });

  it("takes the inflater's and the parser's rarer branches: stored, fixed and dynamic blocks, far deltas", async () => {
    // What a real pack has and trees alone do not; a branch the warm-up skips is compiled at the first clone.
    const pack = await warmUpPack();
    const blockTypes = new Set<number>();
    let longestDistanceBytes = 0;
    let largestObject = 0;
    // applyDelta copies and inserts under 32 bytes in a loop, longer ones with `set`: real deltas have both.
    const deltaOps = new Set<string>();
    const inflater = new Inflater();
    let p = 12;
    while (p < pack.length - 20) {
      let c = pack[p++];
      const kind = (c >>> 4) & 7;
      let size = c & 15;
      for (let shift = 4; c & 0x80; shift += 7) {
        c = pack[p++];
        size += (c & 0x7f) * 2 ** shift;
      }
      if (kind === 6) {
        let bytes = 1;
        while (pack[p++] & 0x80) bytes++;
        longestDistanceBytes = Math.max(longestDistanceBytes, bytes);
      }
      largestObject = Math.max(largestObject, size);
      // The first block's type: bits 1-2 of the byte after the zlib header.
      blockTypes.add((pack[p + 2] >>> 1) & 3);
      const data = new Uint8Array(size);
      inflater.start(pack, p, data, size);
      expect(inflater.run(pack, pack.length)).toBe(INFLATE_DONE);
      p = inflater.inputEnd;
      if (kind === 6) for (const op of deltaInstructions(data)) deltaOps.add(op);
    }
    expect(p).toBe(pack.length - 20);
    expect([...blockTypes].sort()).toEqual([0, 1, 2]);
    expect(longestDistanceBytes).toBeGreaterThanOrEqual(3);
    // Past 16 KiB a stream has several blocks (zlib's default memLevel); past 64 KiB stored ones split too.
    expect(largestObject).toBeGreaterThan(64 * 1024);
    expect([...deltaOps].sort()).toEqual(['long copy', 'long insert', 'short copy', 'short insert']);
  });

  it("reads objects back from the ingested pack, as a checkout's tree reads do, in a round with a hook", async () => {
    // A checkout hands each object to a hook and reads trees from the stored pack: a fixed-length buffer the
    // receive never hands the inflater. Paths the warm-up skips are compiled at the first checkout.
    const created: PackIngesterOptions[] = [];
    const create = PackIngester.create;
    const creating = vi.spyOn(PackIngester, 'create').mockImplementation((options = {}) => {
      created.push(options);
      return create.call(PackIngester, options);
    });
    const reading = vi.spyOn(PackReader.prototype, 'read');
    try {
      await warmUpIngester(3, new AbortController().signal);
    } finally {
      creating.mockRestore();
    }
    expect(created.map((o) => typeof o.onObject)).toEqual(['undefined', 'function', 'undefined']);
    expect(created[1].limits).toEqual({ arrivalCacheBytes: 0 });
    // Some 100 objects of every kind and every blob (text in several blocks, noise in stored ones), not all 1,900.
    expect(reading.mock.calls.length).toBeGreaterThan(150);
    expect(reading.mock.calls.length).toBeLessThan(300);
    expect(new Set(reading.mock.results.map((r) => (r.value as { type: string }).type))).toEqual(
      new Set(['tree', 'blob']),
    );
    reading.mockRestore();
  });

  it('runs whole rounds, letting timers in between its pushes', async () => {
    const ticks = await timerTicksDuring(() => warmUpIngester(1, new AbortController().signal));
    // The pack is some 16 yields' worth (64 KiB each): a timer ran between them.
    expect(ticks).toBeGreaterThan(3);
  });

  it('pushes its first 24 KiB in pieces of 1 to 7 bytes and the trailer alone, as chunks cut anywhere do', async () => {
    // A clone's pack arrives cut at any byte: the careful paths (a stream stopped mid dynamic header, an end
    // of block among the last bytes received, the trailer after the last entry) must have run here first.
    const sizes: number[] = [];
    const push = PackIngester.prototype.push;
    const pushing = vi.spyOn(PackIngester.prototype, 'push').mockImplementation(function (
      this: PackIngester,
      chunk,
    ) {
      sizes.push(chunk.length);
      return push.call(this, chunk);
    });
    try {
      await warmUpIngester(1, new AbortController().signal);
    } finally {
      pushing.mockRestore();
    }
    const pack = await warmUpPack();
    expect(sizes.reduce((a, b) => a + b, 0)).toBe(pack.length);
    let at = 0;
    const tiny = new Set<number>();
    for (const size of sizes) {
      if (at >= 24 * 1024) break;
      tiny.add(size);
      at += size;
    }
    expect([...tiny].sort()).toEqual([1, 2, 3, 4, 5, 6, 7]);
    expect(sizes.at(-1)).toBe(20);
    expect(sizes.at(-2)).toBeGreaterThan(0);
    expect(pushSize(pack.length - 100, 0, pack.length)).toBe(80);
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

/** The kinds of instruction a delta holds (gitformat-pack: copy and insert), by length under 32 or not. */
function deltaInstructions(delta: Uint8Array): string[] {
  let p = 0;
  for (let sizes = 0; sizes < 2; sizes++) while (delta[p++] & 0x80);
  const kinds: string[] = [];
  while (p < delta.length) {
    const op = delta[p++];
    if (op & 0x80) {
      let size = 0;
      for (let bit = 0; bit < 7; bit++) {
        if (!(op & (1 << bit))) continue;
        const byte = delta[p++];
        if (bit >= 4) size |= byte << (8 * (bit - 4));
      }
      kinds.push(`${(size || 0x10000) < 32 ? 'short' : 'long'} copy`);
    } else {
      kinds.push(`${op < 32 ? 'short' : 'long'} insert`);
      p += op;
    }
  }
  return kinds;
}
