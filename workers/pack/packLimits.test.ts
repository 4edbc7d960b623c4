import { describe, expect, it } from 'vitest';
import { applyDelta } from './delta.ts';
import { PackError } from './errors.ts';
import { PackIngester, type PackIngesterOptions } from './packIngester.ts';
import { DEFAULT_PACK_LIMITS, InflateMeter, inflateBudget, packLimits } from './packLimits.ts';
import { amplifyingDelta, buildPack, makeDelta } from './testing/packBuilder.ts';

const MiB = 1024 * 1024;

async function ingestError(pack: Uint8Array, options: PackIngesterOptions = {}): Promise<PackError> {
  try {
    const ingester = await PackIngester.create(options);
    for (let i = 0; i < pack.length; i += 65536) ingester.push(pack.subarray(i, i + 65536));
    await ingester.finish();
  } catch (e) {
    if (e instanceof PackError) return e;
    throw e;
  }
  throw new Error('the pack was accepted');
}

describe('delta result size is checked before allocation', () => {
  it('a 12-byte delta declaring 1 TiB fails with PACK_OBJECT_TOO_LARGE and allocates nothing', () => {
    const delta = makeDelta(3, [{ copy: [0, 3] }], { resultSize: 2 ** 40 });
    expect(delta.length).toBeLessThanOrEqual(12);
    const allocations: number[] = [];
    let error: unknown;
    try {
      applyDelta(new Uint8Array(3), delta, (n) => {
        allocations.push(n);
        return new Uint8Array(n);
      });
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(PackError);
    expect((error as PackError).code).toBe('PACK_OBJECT_TOO_LARGE');
    expect((error as PackError).limit).toBe('maxObjectSize');
    expect((error as PackError).message).toMatch(/1\.0 TiB.*512 MiB \(maxObjectSize\)/);
    expect(allocations).toEqual([]);
  });

  it('the limit is a parameter: a result at the limit applies, one byte over does not', () => {
    const base = new TextEncoder().encode('abcdefgh');
    expect(applyDelta(base, makeDelta(8, [{ copy: [0, 8] }]), undefined, 8).length).toBe(8);
    expect(() => applyDelta(base, makeDelta(8, [{ copy: [0, 8] }, { insert: 'x' }]), undefined, 8)).toThrow(
      expect.objectContaining({ code: 'PACK_OBJECT_TOO_LARGE' }),
    );
  });
});

describe('InflateMeter', () => {
  const limits = { ...DEFAULT_PACK_LIMITS, inflateRatio: 10, inflateFloor: 1000 };

  it('budgets the larger of the floor and ratio times the pack', () => {
    expect(inflateBudget(limits, 50)).toBe(1000);
    expect(inflateBudget(limits, 101)).toBe(1010);
  });

  it('counts every spend against the budget, which may be reached but not passed', () => {
    const meter = new InflateMeter(limits);
    meter.spend(600, 10);
    meter.spend(400, 10);
    let error: unknown;
    try {
      meter.spend(1, 10);
    } catch (e) {
      error = e;
    }
    expect(error).toMatchObject({ code: 'PACK_INFLATE_BUDGET', limit: 'inflateRatio' });
    expect((error as Error).message).toMatch(
      /^The pack inflates to more than 1000 bytes from 10 bytes received: over the limit of 10 times its size, at least 1000 bytes \(inflateRatio, inflateFloor\)\./,
    );
    // The budget follows the bytes received so far.
    const growing = new InflateMeter(limits);
    growing.spend(1000, 10);
    growing.spend(1000, 200);
    expect(() => growing.spend(1, 200)).toThrow(/more than 2.0 KiB from 200 bytes received/);
  });
});

describe('PackIngester holds a pack to its limits', () => {
  it("the issue's bomb: a 265-byte delta turning a 16 MiB zero blob into 1 GiB", async () => {
    const delta = amplifyingDelta(16 * MiB, 1024 * MiB);
    expect(delta.length).toBeLessThan(400);
    const pack = buildPack([
      { type: 'blob', data: new Uint8Array(16 * MiB) },
      { ofsDelta: 0, delta },
    ]);
    const error = await ingestError(pack);
    expect(error.code).toBe('PACK_OBJECT_TOO_LARGE');
    expect(error.message).toMatch(/offset \d+ does not apply.*1\.0 GiB/);
  });

  it('chained deltas under the object limit run into the inflate budget', async () => {
    // Each link is 4 MiB of delta result from a few bytes; eight of them exceed a 16 MiB budget.
    const entries: Parameters<typeof buildPack>[0] = [{ type: 'blob', data: new Uint8Array(MiB) }];
    let size = MiB;
    for (let i = 0; i < 8; i++) {
      entries.push({ ofsDelta: i, delta: amplifyingDelta(size, 4 * MiB) });
      size = 4 * MiB;
    }
    const pack = buildPack(entries);
    const limits = { maxObjectSize: 8 * MiB, inflateFloor: 16 * MiB, inflateRatio: 1024 };
    const error = await ingestError(pack, { limits });
    expect(error.code).toBe('PACK_INFLATE_BUDGET');
    expect(error.limit).toBe('inflateRatio');
    expect(error.message).toMatch(/inflateRatio, inflateFloor/);
    // The same pack with room to spare is fine: the limit, not the shape, refused it.
    const ingester = await PackIngester.create({ limits: { ...limits, inflateFloor: 64 * MiB } });
    ingester.push(pack);
    expect((await ingester.finish()).objects.length).toBe(9);
  });

  it('a whole object declared larger than maxObjectSize fails as its header is read', async () => {
    const pack = buildPack([{ type: 'blob', data: new Uint8Array(5000) }]);
    const error = await ingestError(pack, { limits: { maxObjectSize: 4096 } });
    expect(error.code).toBe('PACK_OBJECT_TOO_LARGE');
    expect(error.limit).toBe('maxObjectSize');
    expect(error.message).toMatch(/Object 1 of 1 \(at offset 12\).*4\.9 KiB.*4\.0 KiB \(maxObjectSize\)/);
  });

  it('zlib bombs while receiving: many zero blobs beyond ratio times the bytes received', async () => {
    const blobs = Array.from({ length: 40 }, (_, i) => {
      const data = new Uint8Array(MiB);
      data[0] = i;
      return { type: 'blob' as const, data };
    });
    const pack = buildPack(blobs);
    const error = await ingestError(pack, { limits: { inflateRatio: 100, inflateFloor: 8 * MiB } });
    expect(error.code).toBe('PACK_INFLATE_BUDGET');
  });

  it('defaults are what the docs say', () => {
    expect(DEFAULT_PACK_LIMITS).toEqual({
      maxObjectSize: 512 * MiB,
      inflateRatio: 1024,
      inflateFloor: 1024 * MiB,
      arrivalCacheBytes: 4 * MiB,
      maxTreeEntries: 100_000,
      maxTreeDepth: 4096,
      maxSymlinkTargetBytes: 4095,
    });
  });

  it("are one object shape whatever the caller's limits hold, so the parser's compiled code is kept", () => {
    // An engine's limits carry more than the pack's (wire caps, here); spread in, they made the object the
    // parser reads per entry a second shape to V8, and the first clone lost the warm-up's compiled code.
    const engine = { maxLsRefsBytes: 1, ...DEFAULT_PACK_LIMITS, maxInfoRefsBytes: 2, maxObjectSize: 5 };
    const limits = packLimits(engine);
    expect(Object.keys(limits)).toEqual(Object.keys(packLimits()));
    expect(Object.keys(limits)).toEqual(Object.keys(DEFAULT_PACK_LIMITS));
    expect(limits).toEqual({ ...DEFAULT_PACK_LIMITS, maxObjectSize: 5 });
    expect(packLimits({ inflateRatio: undefined }).inflateRatio).toBe(1024);
  });
});

describe('PackIngester terminates on self-referencing deltas', () => {
  it('a ref-delta whose result has its own base id is refused, not walked forever (found by fuzzing)', async () => {
    // The empty blob, then a ref-delta on it that produces the empty blob again: its result's children
    // are its own siblings, and the walk used to go round forever. git index-pack refuses it ("REF_DELTA at
    // offset 21 already resolved (duplicate base …)"; deltaResolver.test.ts has git as the oracle).
    const empty = new Uint8Array(0);
    const id = 'e69de29bb2d1d6434b8b29ae775ad8c2e48c5391';
    const pack = buildPack([
      { type: 'blob', data: empty },
      // Sizes 0 and 0 in two bytes each (varints git reads too): the 4 bytes git asks of any delta.
      { refDelta: id, delta: Uint8Array.of(0x80, 0x00, 0x80, 0x00) },
      { refDelta: id, delta: makeDelta(0, [{ insert: 'x' }]) },
    ]);
    const ingester = await PackIngester.create();
    ingester.push(pack);
    await expect(ingester.finish()).rejects.toMatchObject({
      code: 'PACK_DELTA_INVALID',
      message: expect.stringMatching(/^The delta at offset 21 was already resolved/),
    });
  });
});
