import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PackError } from './errors.ts';
import {
  type IngestedPack,
  PackIngester,
  type PackIngesterOptions,
  type PackProgress,
} from './packIngester.ts';
import { DEFAULT_PACK_LIMITS } from './packLimits.ts';
import { gitIndexPack, makeSampleRepo, makeSmallRepo, noise, type SampleRepo } from './testing/gitPacks.ts';
import { expectSameAsGit, failureOf, ingest } from './testing/ingest.ts';
import { buildPack, entryTypes, makeDelta, objectId, resign } from './testing/packBuilder.ts';

describe('PackIngester against git index-pack', () => {
  let sample: SampleRepo;
  beforeAll(() => {
    sample = makeSampleRepo();
  });
  afterAll(() => sample.cleanup());

  it('indexes a pack with ofs-deltas exactly as git does', async () => {
    const pack = sample.pack(['--delta-base-offset']);
    const oracle = gitIndexPack(sample.git, sample.root, pack);
    const types = entryTypes(pack);
    expect(types.filter((t) => t === 6).length).toBeGreaterThan(30);
    expect(types).not.toContain(7);
    const result = await ingest(pack);
    expectSameAsGit(result, oracle);
    expect(result.pack).toEqual(pack);
    expect(result.counts).toEqual({
      commit: 30,
      tree: oracle.objects.filter((o) => o.type === 'tree').length,
      blob: oracle.objects.filter((o) => o.type === 'blob').length,
      tag: 1,
    });
    const sizes = result.objects.map((o) => o.size);
    expect(sizes).toContain(0); // the empty blob
    expect(Math.max(...sizes)).toBeGreaterThan(1_000_000);
  });

  it('hands over the pack in a buffer of exactly its size, however it grew while arriving', async () => {
    const pack = sample.pack(['--delta-base-offset']);
    expect(pack.length).toBeGreaterThan(1024 * 1024); // past the first receive buffer's size
    const result = await ingest(pack, 4096);
    expect(result.pack.byteOffset).toBe(0);
    expect(result.pack.buffer.byteLength).toBe(pack.length);
    expect((result.pack.buffer as ArrayBuffer).resizable).toBe(false);
    expect(result.pack).toEqual(pack);
  });

  it('received() hands over the verified pack before finish(), which then indexes the same bytes as git', async () => {
    const pack = sample.pack(['--delta-base-offset']);
    const oracle = gitIndexPack(sample.git, sample.root, pack);
    const ingester = await PackIngester.create();
    for (let i = 0; i < pack.length; i += 4096) ingester.push(pack.subarray(i, i + 4096));
    const received = ingester.received();
    expect(received.checksum).toBe(oracle.checksum);
    expect(received.pack).toEqual(pack);
    expect(received.pack.buffer.byteLength).toBe(pack.length);
    const result = await ingester.finish();
    expectSameAsGit(result, oracle);
    expect(result.pack).toBe(received.pack);
  });

  it('finish({ objects: false }) indexes as git does and frees the objects, which it then refuses to list', async () => {
    const pack = sample.pack(['--delta-base-offset']);
    const oracle = gitIndexPack(sample.git, sample.root, pack);
    const ingester = await PackIngester.create();
    for (let i = 0; i < pack.length; i += 4096) ingester.push(pack.subarray(i, i + 4096));
    const result = await ingester.finish({ objects: false });
    expect(Buffer.from(result.idx).equals(Buffer.from(oracle.idx))).toBe(true);
    expect(result.checksum).toBe(oracle.checksum);
    expect(result.pack).toEqual(pack);
    const counts = { commit: 0, tree: 0, blob: 0, tag: 0 };
    for (const o of oracle.objects) counts[o.type as keyof typeof counts]++;
    expect(result.counts).toEqual(counts);
    expect(() => result.objects).toThrow(/kept no objects/);
  });

  it('received() refuses a pack cut short, or one that outside bases would complete', async () => {
    const pack = sample.pack(['--delta-base-offset']);
    const cut = await PackIngester.create();
    cut.push(pack.subarray(0, pack.length - 7));
    expect(() => cut.received()).toThrow(PackError);
    await expect(cut.finish()).rejects.toThrow(PackError);
    const thin = await PackIngester.create({ externalBase: async () => null });
    thin.push(pack);
    expect(() => thin.received()).toThrow(/completed by nothing else/);
  });

  it('indexes a pack with ref-deltas (no --delta-base-offset) exactly as git does', async () => {
    const pack = sample.pack();
    const types = entryTypes(pack);
    expect(types.filter((t) => t === 7).length).toBeGreaterThan(30);
    expect(types).not.toContain(6);
    const oracle = gitIndexPack(sample.git, sample.root, pack);
    expectSameAsGit(await ingest(pack), oracle);
  });

  it('indexes a blob:none pack of commits, trees and tags', async () => {
    const pack = sample.pack(['--delta-base-offset', '--filter=blob:none']);
    expect(entryTypes(pack).filter((t) => t === 6).length).toBeGreaterThan(10);
    const oracle = gitIndexPack(sample.git, sample.root, pack);
    const result = await ingest(pack);
    expectSameAsGit(result, oracle);
    expect(result.counts.blob).toBe(0);
    expect(result.counts.commit).toBe(30);
  });

  it('gives the same result whatever the chunk sizes', async () => {
    const pack = sample.pack(['--delta-base-offset']);
    const whole = await ingest(pack, pack.length);
    for (const size of [1000, 4093, 65536, 1 << 20]) {
      const r = await ingest(pack, size);
      expect(Buffer.from(r.idx).equals(Buffer.from(whole.idx))).toBe(true);
      expect(r.objects).toEqual(whole.objects);
    }
  });

  it('resolves deltas as they arrive, after the last byte, or both, exactly as git does', async () => {
    const pack = sample.pack(['--delta-base-offset']);
    const oracle = gitIndexPack(sample.git, sample.root, pack);
    // 0: all after the last byte; 4 KiB: a ring that comes round every few objects (bases lost, and the
    // bigger blobs' results made outside it); the default: nearly all on arrival.
    const shares: number[] = [];
    for (const arrivalCacheBytes of [0, 16384, DEFAULT_PACK_LIMITS.arrivalCacheBytes]) {
      const events: PackProgress[] = [];
      const result = await ingest(pack, 4093, {
        limits: { arrivalCacheBytes },
        onProgress: (p) => events.push(p),
      });
      expectSameAsGit(result, oracle);
      const resolving = events.filter((e) => e.phase === 'resolving');
      shares.push(resolving[0].resolved / resolving[0].total);
      expect(resolving.at(-1)!.resolved).toBe(resolving[0].total);
    }
    expect(shares[0]).toBe(0);
    expect(shares[1]).toBeGreaterThan(0);
    expect(shares[1]).toBeLessThan(shares[2]);
    // The default keeps objects up to 1 MiB: the deltas of the sample's biggest blobs wait for the walk.
    expect(shares[2]).toBeGreaterThan(0.9);
  });

  it('tells onObject of every object held whole, once, with the bytes git cat-file gives, however resolved', async () => {
    const pack = sample.pack(['--delta-base-offset']);
    const oracle = gitIndexPack(sample.git, sample.root, pack);
    // Every object's bytes, from git: `cat-file --batch` answers "<oid> <type> <size>\n<bytes>\n" each.
    const all = sample.git(['cat-file', '--batch'], { input: oracle.objects.map((o) => o.oid).join('\n') });
    const contents = new Map<string, { type: string; data: string }>();
    for (let at = 0; at < all.length; ) {
      const eol = all.indexOf(10, at);
      const [oid, type, size] = all.subarray(at, eol).toString().split(' ');
      contents.set(oid, { type, data: all.subarray(eol + 1, eol + 1 + Number(size)).toString('hex') });
      at = eol + 1 + Number(size) + 1;
    }
    expect(contents.size).toBe(oracle.objects.length);
    // Resolved on arrival, after the last byte, with bases dropped and rebuilt; big ones through a window.
    for (const options of [
      {},
      { limits: { arrivalCacheBytes: 0 }, deltaBaseCacheLimit: 1 },
      { wholeObjectLimit: 65536 },
    ] satisfies PackIngesterOptions[]) {
      const told = new Map<string, { type: string; data: string }>();
      let twice = 0;
      const result = await ingest(pack, 4093, {
        ...options,
        onObject: ({ oid, type, data }) => {
          if (told.has(oid)) twice++;
          told.set(oid, { type, data: Buffer.from(data).toString('hex') });
        },
      });
      expectSameAsGit(result, oracle);
      expect(twice).toBe(0);
      // Whole objects past the window are hashed in pieces, never held whole: not told. Deltas always are.
      const limit = options.wholeObjectLimit ?? Number.POSITIVE_INFINITY;
      const streamed = (o: (typeof oracle.objects)[number]) =>
        !o.deltaBase && oracle.sizes.get(o.oid)! > limit;
      for (const o of oracle.objects) {
        expect(told.get(o.oid), o.oid).toEqual(streamed(o) ? undefined : contents.get(o.oid));
      }
      expect(told.size).toBe(oracle.objects.filter((o) => !streamed(o)).length);
    }
  });

  it('never resolves on arrival from a base the ring has come round over, nor from one moved ahead', async () => {
    // A 1 KiB ring keeps objects up to 256 bytes. `a` is used once it is in the older half (moved ahead),
    // `b` only after other objects have pushed it out (its delta waits for the last byte), and `a` again
    // after the ring has come round over where it first was: found where it was moved, and right.
    const blob = (c: string) => new TextEncoder().encode(c.repeat(200));
    const [a, b, c, d, e, f] = ['a', 'b', 'c', 'd', 'e', 'f'].map(blob);
    const onA = makeDelta(a.length, [{ copy: [0, 100] }, { insert: 'tail of a' }]);
    const onB = makeDelta(b.length, [{ copy: [0, 150] }, { insert: 'tail of b' }]);
    const whole = (data: Uint8Array) => ({ type: 'blob' as const, data });
    const entries = [
      whole(a),
      whole(b),
      whole(c),
      { ofsDelta: 0, delta: onA },
      whole(d),
      whole(e),
      whole(f),
      { ofsDelta: 1, delta: onB },
      { ofsDelta: 0, delta: onA },
    ];
    const events: PackProgress[] = [];
    const result = await ingest(buildPack(entries), 100, {
      limits: { arrivalCacheBytes: 1024 },
      onProgress: (p) => events.push(p),
    });
    const fromA = new Uint8Array([...a.subarray(0, 100), ...new TextEncoder().encode('tail of a')]);
    const fromB = new Uint8Array([...b.subarray(0, 150), ...new TextEncoder().encode('tail of b')]);
    expect(result.objects.map((o) => o.oid)).toEqual(
      [a, b, c, fromA, d, e, f, fromB, fromA].map((data) => objectId('blob', data)),
    );
    const resolving = events.filter((e) => e.phase === 'resolving');
    expect(resolving[0]).toEqual({ phase: 'resolving', resolved: 2, total: 3 });
  });

  it('reports progress: receiving at most every 64 KiB, then resolving up to the total', async () => {
    const pack = sample.pack(['--delta-base-offset']);
    const events: PackProgress[] = [];
    // Nothing resolved on arrival, so that resolving has steps to report.
    await ingest(pack, 16 * 1024, { onProgress: (p) => events.push(p), limits: { arrivalCacheBytes: 0 } });
    const receiving = events.filter((e) => e.phase === 'receiving');
    const resolving = events.filter((e) => e.phase === 'resolving');
    expect(receiving.length).toBeGreaterThan(2);
    expect(receiving.length).toBeLessThanOrEqual(Math.ceil(pack.length / 65536) + 2);
    const last = receiving.at(-1)!;
    expect(last.objects).toBe(last.totalObjects);
    expect(last.bytes).toBeGreaterThan(pack.length - 20 - 16 * 1024);
    expect(resolving.length).toBeGreaterThan(1);
    expect(resolving.at(-1)).toEqual({
      phase: 'resolving',
      resolved: resolving[0].total,
      total: resolving[0].total,
    });
    // Resolving comes after receiving, and counts up.
    expect(events.indexOf(resolving[0])).toBeGreaterThan(events.indexOf(last));
    for (let i = 1; i < resolving.length; i++)
      expect(resolving[i].resolved).toBeGreaterThan(resolving[i - 1].resolved);
  });

  it('streams big objects through a window while receiving', async () => {
    const pack = sample.pack(['--delta-base-offset']);
    const oracle = gitIndexPack(sample.git, sample.root, pack);
    for (const chunk of [4093, 1 << 20])
      expectSameAsGit(await ingest(pack, chunk, { wholeObjectLimit: 65536 }), oracle);
  });

  it('keeps a small delta-base cache correct: dropped bases are rebuilt', async () => {
    const pack = sample.pack(['--delta-base-offset']);
    const oracle = gitIndexPack(sample.git, sample.root, pack);
    expectSameAsGit(await ingest(pack, 65536, { deltaBaseCacheLimit: 1 }), oracle);
  });

  it('refuses a thin pack: a ref-delta against an object outside the pack', async () => {
    const head = sample.git(['rev-parse', 'HEAD']).toString().trim();
    const pack = sample.pack(['--thin'], `${head}\n^${head}~3\n`);
    expect(entryTypes(pack)).toContain(7);
    const failure = await failureOf(pack);
    expect(failure.code).toBe('PACK_DELTA_BASE_MISSING');
    expect(failure.message).toMatch(/needs object [0-9a-f]{40}, which is not in the pack/);
  });

  it('completes a thin pack from the repo, as index-pack --fix-thin does, into a pack that stands alone', async () => {
    const head = sample.git(['rev-parse', 'HEAD']).toString().trim();
    const thin = sample.pack(['--thin'], `${head}\n^${head}~3\n`);
    const asked: string[] = [];
    const externalBase: PackIngesterOptions['externalBase'] = async (oid) => {
      asked.push(oid);
      const type = sample.git(['cat-file', '-t', oid]).toString().trim() as 'blob';
      return { type, data: new Uint8Array(sample.git(['cat-file', type, oid])) };
    };
    const result = await ingest(thin, 4096, { externalBase });
    expect(result.appendedBases).toBeGreaterThan(0);
    expect(result.appendedBases).toBe(new Set(asked).size);
    // git reads it with no repository around it: every delta's base is inside.
    expectSameAsGit(result, gitIndexPack(sample.git, sample.root, result.pack));
    // The same objects as git's own completion of the same thin pack.
    const fixed = sample.git(['index-pack', '--fix-thin', '--stdin'], { input: thin }).toString().trim();
    const theirs = sample.git(['show-index'], {
      input: readFileSync(
        join(sample.repo, '.git/objects/pack', `pack-${fixed.replace(/^pack\s+/, '')}.idx`),
      ),
    });
    const theirOids = theirs
      .toString()
      .trim()
      .split('\n')
      .map((l) => l.split(' ')[1])
      .sort();
    expect(result.objects.map((o) => o.oid).sort()).toEqual(theirOids);
  });

  it('still refuses a thin pack whose base the repo lacks too', async () => {
    const head = sample.git(['rev-parse', 'HEAD']).toString().trim();
    const thin = sample.pack(['--thin'], `${head}\n^${head}~3\n`);
    const failure = await failureOf(thin, 65536, { externalBase: async () => null });
    expect(failure.code).toBe('PACK_DELTA_BASE_MISSING');
    expect(failure.message).toMatch(/not in the pack nor in the repository/);
  });
});

describe('PackIngester on a small pack split anywhere', () => {
  let small: SampleRepo;
  let pack: Uint8Array;
  let reference: IngestedPack;
  beforeAll(async () => {
    small = makeSmallRepo();
    pack = small.pack();
    reference = await ingest(pack, pack.length);
    expectSameAsGit(reference, gitIndexPack(small.git, small.root, pack));
  });
  afterAll(() => small.cleanup());

  it('is small and has deltas to resolve', () => {
    expect(pack.length).toBeGreaterThan(1000);
    expect(pack.length).toBeLessThan(8000);
    expect(entryTypes(pack)).toContain(6);
  });

  it('gives the same result for a split at every byte boundary', async () => {
    for (let cut = 0; cut <= pack.length; cut++) {
      // Sized to the pack, as a fetch's Content-Length sizes it: the default 1 MiB receive buffer, zeroed
      // once per cut, was most of this test's time, and the buffer never grows here either way.
      const ingester = await PackIngester.create({ expectedSizeHint: pack.length });
      ingester.push(pack.subarray(0, cut));
      ingester.push(pack.subarray(cut));
      const r = await ingester.finish();
      if (!Buffer.from(r.idx).equals(Buffer.from(reference.idx)))
        throw new Error(`differs when cut at ${cut}`);
    }
  });

  it('gives the same result when fed one byte at a time', async () => {
    const r = await ingest(pack, 1);
    expect(Buffer.from(r.idx).equals(Buffer.from(reference.idx))).toBe(true);
    expect(r.objects).toEqual(reference.objects);
  });
});

describe('PackIngester on malformed packs', () => {
  let small: SampleRepo;
  let pack: Uint8Array;
  beforeAll(() => {
    small = makeSmallRepo();
    pack = small.pack();
  });
  afterAll(() => small.cleanup());
  const copy = () => new Uint8Array(pack);

  it('refuses data that is not a pack', async () => {
    const bad = copy();
    bad[3] = 0x58; // PACX
    expect((await failureOf(bad)).code).toBe('PACK_SIGNATURE');
    expect((await failureOf(new TextEncoder().encode('<html>Not Found</html>'))).code).toBe('PACK_SIGNATURE');
  });

  it('refuses pack version 4', async () => {
    const bad = copy();
    bad[7] = 4;
    expect((await failureOf(resign(bad))).code).toBe('PACK_VERSION');
  });

  it('accepts version 3, which git reads as version 2', async () => {
    const v3 = copy();
    v3[7] = 3;
    const r = await ingest(resign(v3));
    expect(r.objects.length).toBeGreaterThan(0);
  });

  it.each([
    ['nothing at all', 0],
    ['inside the header', 8],
    ['just after the header', 12],
    ['inside the first entry', 14],
    ['inside a later entry', -200],
    ['just before the trailer', -20],
    ['inside the trailer', -5],
  ])('reports truncation %s', async (_, cut) => {
    const end = cut < 0 ? pack.length + cut : cut;
    const failure = await failureOf(pack.subarray(0, end));
    expect(failure.code).toBe('PACK_TRUNCATED');
    expect(failure.message).toMatch(/Try again/);
  });

  it('reports corrupted compressed data', async () => {
    // The first entry's zlib header (right after a 2-byte entry header) no longer says "deflate".
    const bad = copy();
    const first = 12 + (bad[12] & 0x80 ? 2 : 1);
    bad[first] ^= 0x0f;
    const failure = await failureOf(resign(bad));
    expect(failure.code).toBe('PACK_CORRUPT');
    expect(failure.message).toMatch(/Object 1 of \d+ \(at offset 12\)/);
  });

  it('reports data that inflates to something else (Adler-32) even with a valid trailer', async () => {
    // zlib stores incompressible data as is, so a flipped bit inflates fine and only the Adler-32 knows.
    const data = noise(3000, 3);
    const bad = buildPack([{ type: 'blob', data }]);
    const at = Buffer.from(bad).indexOf(Buffer.from(data.subarray(100, 132)));
    expect(at).toBeGreaterThan(12);
    bad[at] ^= 1;
    const failure = await failureOf(resign(bad));
    expect(failure.code).toBe('PACK_CORRUPT');
    expect(failure.message).toMatch(/Adler-32/);
  });

  it('reports a bit flipped in transit by the trailing checksum', async () => {
    // Version 2 -> 3 keeps every entry valid: only the checksum can tell.
    const flipped = copy();
    flipped[7] ^= 1;
    const failure = await failureOf(flipped);
    expect(failure.code).toBe('PACK_CHECKSUM_MISMATCH');
    expect(failure.message).toMatch(/checksum does not match.*nothing was stored/);
    const trailer = copy();
    trailer[trailer.length - 1] ^= 0x80;
    expect((await failureOf(trailer)).code).toBe('PACK_CHECKSUM_MISMATCH');
  });

  it('reports a header that counts more objects than the pack holds', async () => {
    const bad = copy();
    bad[11] += 1;
    const failure = await failureOf(resign(bad));
    expect(failure.code).toBe('PACK_CORRUPT');
    expect(failure.message).toMatch(/declares \d+ objects but the pack holds only \d+/);
    // Fed a byte at a time, the trailer is first taken for an entry: same verdict.
    expect((await failureOf(resign(bad), 1)).message).toMatch(/holds only/);
    const none = buildPack([], { count: 1 });
    expect((await failureOf(none)).message).toMatch(/declares 1 object but the pack holds only 0/);
  });

  it('reports a header that counts fewer objects than the pack holds', async () => {
    const bad = copy();
    bad[11] -= 1;
    const failure = await failureOf(resign(bad));
    expect(failure.code).toBe('PACK_CORRUPT');
    expect(failure.message).toMatch(/declares \d+ objects but the pack holds more/);
    // Without a consistent trailer it is just a checksum mismatch.
    const unsigned = copy();
    unsigned[11] -= 1;
    expect((await failureOf(unsigned)).code).toBe('PACK_CHECKSUM_MISMATCH');
  });

  it('refuses trailing data after the pack', async () => {
    const longer = new Uint8Array(pack.length + 7);
    longer.set(pack);
    longer.set([1, 2, 3, 4, 5, 6, 7], pack.length);
    expect((await failureOf(longer)).code).toBe('PACK_TRAILING_DATA');
    expect((await failureOf(longer, 1)).code).toBe('PACK_TRAILING_DATA');
    const twice = new Uint8Array(pack.length * 2);
    twice.set(pack);
    twice.set(pack, pack.length);
    expect((await failureOf(twice)).code).toBe('PACK_TRAILING_DATA');
  });

  it('refuses an entry of an invalid type', async () => {
    const bad = buildPack([{ type: 'blob', data: new TextEncoder().encode('x') }]);
    bad[12] = (bad[12] & 0x8f) | (5 << 4);
    const failure = await failureOf(resign(bad));
    expect(failure.code).toBe('PACK_CORRUPT');
    expect(failure.message).toMatch(/invalid type 5/);
  });

  it('refuses an ofs-delta whose base offset is not an entry', async () => {
    const base = new TextEncoder().encode('hello world, this is the base\n');
    const delta = makeDelta(base.length, [{ copy: [0, 5] }]);
    const inside = buildPack([
      { type: 'blob', data: base },
      { ofsDelta: 0, delta, distance: 5 },
    ]);
    const failure = await failureOf(inside);
    expect(failure.code).toBe('PACK_CORRUPT');
    expect(failure.message).toMatch(/not the start of an object/);
    const before = buildPack([
      { type: 'blob', data: base },
      { ofsDelta: 0, delta, distance: 100_000 },
    ]);
    expect((await failureOf(before)).message).toMatch(/points before the pack|out of bounds/);
  });

  it('refuses a ref-delta to a missing base', async () => {
    const missing = objectId('blob', new TextEncoder().encode('never sent\n'));
    const bad = buildPack([
      { type: 'blob', data: new TextEncoder().encode('present\n') },
      { refDelta: missing, delta: makeDelta(11, [{ copy: [0, 5] }]) },
    ]);
    const failure = await failureOf(bad);
    expect(failure.code).toBe('PACK_DELTA_BASE_MISSING');
    expect(failure.message).toContain(missing);
  });

  it('refuses invalid deltas', async () => {
    const base = new TextEncoder().encode('0123456789abcdef');
    const cases = [
      makeDelta(base.length, [{ copy: [10, 10] }]), // copy out of range
      makeDelta(base.length + 1, [{ copy: [0, 4] }]), // base size mismatch
      makeDelta(base.length, [{ copy: [0, 4] }], { resultSize: 5 }), // result size mismatch
      makeDelta(base.length, [{ insert: 'abc' }], { rawTail: [0] }), // reserved opcode 0
    ];
    // On arrival (the base is at hand) and after the last byte.
    for (const arrivalCacheBytes of [DEFAULT_PACK_LIMITS.arrivalCacheBytes, 0]) {
      for (const delta of cases) {
        const failure = await failureOf(
          buildPack([
            { type: 'blob', data: base },
            { ofsDelta: 0, delta },
          ]),
          undefined,
          { limits: { arrivalCacheBytes } },
        );
        expect(failure.code).toBe('PACK_DELTA_INVALID');
        expect(failure.message).toMatch(/The delta at offset \d+ does not apply/);
      }
    }
  });

  it('resolves ref-deltas whose base is itself a delta, mixed with ofs-deltas, as git does', async () => {
    const enc = new TextEncoder();
    const base = enc.encode('first version of the file\nwith two lines\n');
    const d1 = makeDelta(base.length, [{ copy: [0, 26] }, { insert: 'with three lines\nnow\n' }]);
    const v1 = enc.encode('first version of the file\nwith three lines\nnow\n');
    const d2 = makeDelta(v1.length, [{ insert: 'second' }, { copy: [5, v1.length - 5] }]);
    const v2 = enc.encode(`second${new TextDecoder().decode(v1.subarray(5))}`);
    const d3 = makeDelta(v2.length, [{ copy: [0, 6] }, { insert: ' and last\n' }]);
    const pack = buildPack([
      { refDelta: objectId('blob', v1), delta: d2 }, // before its base, whose id is known only later
      { type: 'blob', data: base },
      { ofsDelta: 1, delta: d1 },
      { ofsDelta: 0, delta: d3 },
    ]);
    const oracle = gitIndexPack(small.git, small.root, pack, 'mixed');
    const result = await ingest(pack, 7);
    expectSameAsGit(result, oracle);
    expect(result.objects.map((o) => o.oid)).toContain(objectId('blob', v2));
  });

  it('accepts an empty pack', async () => {
    const empty = small.pack([], '');
    expect(empty.length).toBe(32);
    const r = await ingest(empty);
    expect(r.objects).toEqual([]);
    expect(
      Buffer.from(r.idx).equals(Buffer.from(gitIndexPack(small.git, small.root, empty, 'empty').idx)),
    ).toBe(true);
  });
});

describe('PackIngester agrees with git index-pack on damaged packs', () => {
  let small: SampleRepo;
  beforeAll(() => {
    small = makeSmallRepo();
  });
  afterAll(() => small.cleanup());

  it('accepts what git accepts (with the same .idx) and refuses what git refuses', async () => {
    const pack = small.pack();
    let seed = 42;
    const random = () => {
      seed = (seed * 1103515245 + 12345) & 0x7fffffff;
      return seed / 0x7fffffff;
    };
    for (let round = 0; round < 200; round++) {
      // Flip a bit or two anywhere between the header and the trailer, then re-sign, so that only the
      // entries' own checks (zlib, Adler-32, sizes, deltas) can catch it.
      const bad = pack.slice();
      for (let f = 1 + Math.floor(random() * 2); f > 0; f--) {
        bad[12 + Math.floor(random() * (bad.length - 32))] ^= 1 << Math.floor(random() * 8);
      }
      resign(bad);
      let gitIdx: Uint8Array | null = null;
      try {
        gitIdx = gitIndexPack(small.git, small.root, bad, 'damaged').idx;
      } catch {
        // git refused it
      }
      let ours: Uint8Array | string;
      try {
        ours = (await ingest(bad, 1 + Math.floor(random() * 300))).idx;
      } catch (e) {
        if (!(e instanceof PackError)) throw e;
        ours = e.code;
      }
      if (gitIdx) expect(Buffer.from(ours as Uint8Array).equals(Buffer.from(gitIdx))).toBe(true);
      else expect(ours).toBeTypeOf('string');
    }
  });
});

describe('PackIngester cancellation and misuse', () => {
  let small: SampleRepo;
  let pack: Uint8Array;
  beforeAll(() => {
    small = makeSmallRepo();
    pack = small.pack();
  });
  afterAll(() => small.cleanup());

  it('stops receiving once aborted', async () => {
    const controller = new AbortController();
    const reason = new Error('user cancelled');
    const ingester = await PackIngester.create({ signal: controller.signal });
    ingester.push(pack.subarray(0, 100));
    controller.abort(reason);
    let thrown: unknown;
    try {
      ingester.push(pack.subarray(100));
    } catch (e) {
      thrown = e;
    }
    expect(thrown).toBeInstanceOf(PackError);
    expect((thrown as PackError).code).toBe('ABORTED');
    expect((thrown as PackError).cause).toBe(reason);
    // The ingester stays failed.
    await expect(ingester.finish()).rejects.toBe(thrown);
  });

  it('stops resolving once aborted', async () => {
    const sample = makeSampleRepo();
    try {
      const big = sample.pack(['--delta-base-offset']);
      const controller = new AbortController();
      const failure = await failureOf(big, 65536, {
        signal: controller.signal,
        limits: { arrivalCacheBytes: 0 },
        onProgress: (p) => {
          if (p.phase === 'resolving' && p.resolved > 0) controller.abort();
        },
      });
      expect(failure.code).toBe('ABORTED');
    } finally {
      sample.cleanup();
    }
  });

  it('refuses to be used after finish', async () => {
    const ingester = await PackIngester.create();
    ingester.push(pack);
    await ingester.finish();
    expect(() => ingester.push(pack)).toThrow(/after finish/);
    await expect(ingester.finish()).rejects.toThrow(/twice/);
  });

  it('names its errors', async () => {
    const e = new PackError('PACK_CHECKSUM_MISMATCH', 'x.');
    expect(e.name).toBe('PackError');
    expect(e).toBeInstanceOf(Error);
  });
});
