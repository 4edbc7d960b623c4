import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { PackError } from './errors.ts';
import { PackIngester, type PackIngesterOptions } from './packIngester.ts';
import { gitIndexPack, makeSmallRepo, type SampleRepo } from './testing/gitPacks.ts';
import { expectSameAsGit, failureOf, ingest } from './testing/ingest.ts';
import { buildPack } from './testing/packBuilder.ts';

// The ingester's life, on a small pack git made: push, received, finish, what a failure leaves, misuse. Fast
// beside packIngester.test.ts, whose sample repo makes each run cost ~20 s.

describe('PackIngester: push, received, finish', () => {
  let small: SampleRepo;
  let pack: Uint8Array;
  let oracle: ReturnType<typeof gitIndexPack>;
  beforeAll(() => {
    small = makeSmallRepo();
    pack = small.pack();
    oracle = gitIndexPack(small.git, small.root, pack, 'life');
  });
  afterAll(() => small.cleanup());

  const started = async (options: PackIngesterOptions = {}, bytes = pack) => {
    const ingester = await PackIngester.create(options);
    for (let i = 0; i < bytes.length; i += 50) ingester.push(bytes.subarray(i, i + 50));
    return ingester;
  };

  it('counts the objects of each type as git lists them', async () => {
    const result = await ingest(pack, 33);
    const count = (type: string) => oracle.objects.filter((o) => o.type === type).length;
    expect(result.counts).toEqual({ commit: 4, tree: count('tree'), blob: count('blob'), tag: 1 });
    expect(result.appendedBases).toBe(0);
  });

  it('received() hands over the verified pack, and finish() then indexes those same bytes as git does', async () => {
    const ingester = await started();
    const received = ingester.received();
    expect(received.checksum).toBe(oracle.checksum);
    expect(received.pack).toEqual(pack);
    const result = await ingester.finish();
    expectSameAsGit(result, oracle);
    expect(result.pack).toBe(received.pack);
  });

  it('received() refuses a cut pack, and the ingester stays failed; and a pack outside bases may complete', async () => {
    const cut = await started({}, pack.subarray(0, pack.length - 3));
    let thrown: unknown;
    try {
      cut.received();
    } catch (e) {
      thrown = e;
    }
    expect((thrown as PackError).code).toBe('PACK_TRUNCATED');
    expect(() => cut.received()).toThrow(thrown as Error);
    await expect(cut.finish()).rejects.toBe(thrown);
    const thin = await started({ externalBase: async () => null });
    expect(() => thin.received()).toThrow(/for packs completed by nothing else/);
  });

  it('finish({ objects: false }) makes the same .idx and counts, and then refuses to list objects', async () => {
    const whole = await ingest(pack);
    const ingester = await started();
    const lean = await ingester.finish({ objects: false });
    expect(Buffer.from(lean.idx).equals(Buffer.from(oracle.idx))).toBe(true);
    expect(lean.checksum).toBe(oracle.checksum);
    expect(lean.counts).toEqual(whole.counts);
    expect(() => lean.objects).toThrow(/kept no objects to list/);
    // Listed objects are made once.
    expect(whole.objects).toBe(whole.objects);
  });

  it('keeps the first error: a failed push is thrown again by every later call', async () => {
    const bad = new Uint8Array(pack);
    bad[0] = 0x51;
    const ingester = await PackIngester.create();
    let thrown: unknown;
    try {
      ingester.push(bad.subarray(0, 10));
    } catch (e) {
      thrown = e;
    }
    expect((thrown as PackError).code).toBe('PACK_SIGNATURE');
    expect(() => ingester.push(pack)).toThrow(thrown as Error);
    expect(() => ingester.received()).toThrow(thrown as Error);
    await expect(ingester.finish()).rejects.toBe(thrown);
  });

  it('refuses to be used after finish', async () => {
    const ingester = await started();
    await ingester.finish();
    expect(() => ingester.push(pack)).toThrow(/PackIngester.push called after finish/);
    await expect(ingester.finish()).rejects.toThrow(/PackIngester.finish called twice/);
  });

  it('is cancelled by an abort before finish, or during it', async () => {
    const before = new AbortController();
    const ingester = await started({ signal: before.signal });
    before.abort();
    await expect(ingester.finish()).rejects.toMatchObject({ code: 'ABORTED' });
    // Aborted as the last resolving step is reported: finish checks once more before the result.
    const during = new AbortController();
    const failure = await failureOf(pack, 65536, {
      signal: during.signal,
      onProgress: (p) => {
        if (p.phase === 'resolving' && p.resolved === p.total) during.abort();
      },
    });
    expect(failure.code).toBe('ABORTED');
  });

  it('sizes its receive buffer from a hint, whatever the hint, with the same result', async () => {
    for (const expectedSizeHint of [0, -1, 10, pack.length, 10 * pack.length]) {
      const result = await ingest(pack, 64, { expectedSizeHint });
      expectSameAsGit(result, oracle);
      expect(result.pack.buffer.byteLength).toBe(pack.length);
    }
  });

  it('caps maxObjectSize at 4 GiB - 1, the most its 32-bit size tables hold', async () => {
    // A blob declaring exactly 2^32 bytes: size bits 0 in the first byte, then 2^28 in four more.
    const header = buildPack([], { count: 1 }).subarray(0, 12);
    const entry = [0xb0, 0x80, 0x80, 0x80, 0x80, 0x01];
    const bytes = new Uint8Array([...header, ...entry, ...new Array(40).fill(0)]);
    const failure = await failureOf(bytes, 65536, { limits: { maxObjectSize: 2 ** 40 } });
    expect(failure.code).toBe('PACK_OBJECT_TOO_LARGE');
    expect(failure.message).toMatch(/declares 4\.0 GiB, more than the limit of 4\.0 GiB/);
  });
});
