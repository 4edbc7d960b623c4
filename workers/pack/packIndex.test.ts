import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PackError } from './errors.ts';
import { createWasmSha1, oidFromHex, toHex } from './objectHash.ts';
import { type PackIndex, parsePackIndexV2 } from './packIndex.ts';
import { sortByOid, writePackIndexV2, writePackIndexV2Tables } from './packIndexWriter.ts';
import { PackIngester } from './packIngester.ts';
import { type GitIndexOfPack, gitIndexPack, makeSmallRepo, type SampleRepo } from './testing/gitPacks.ts';
import { sha1Hex } from './testing/packBuilder.ts';

describe('pack index v2', () => {
  let small: SampleRepo;
  let oracle: GitIndexOfPack;
  let crcs: Map<string, number>;
  beforeAll(async () => {
    small = makeSmallRepo();
    const pack = small.pack();
    oracle = gitIndexPack(small.git, small.root, pack);
    const ingester = await PackIngester.create();
    ingester.push(pack);
    crcs = new Map((await ingester.finish()).objects.map((o) => [o.oid, o.crc32]));
  });
  afterAll(() => small.cleanup());

  it("reads git's index: every object at its offset, sorted ids, the pack checksum", () => {
    const index: PackIndex = parsePackIndexV2(oracle.idx);
    expect(index.count).toBe(oracle.objects.length);
    expect(index.packChecksum).toBe(oracle.checksum);
    for (const o of oracle.objects) {
      expect(index.find(o.oid)).toBe(o.offset);
      expect(index.find(oidFromHex(o.oid))).toBe(o.offset);
      expect(index.has(o.oid)).toBe(true);
    }
    expect(index.oids()).toEqual(oracle.objects.map((o) => o.oid).sort());
    const first = index.entry(0);
    expect(first.crc32).toBe(crcs.get(first.oid));
    expect(index.find('0000000000000000000000000000000000000000')).toBeNull();
    expect(index.has('ffffffffffffffffffffffffffffffffffffffff')).toBe(false);
    expect(() => index.entry(index.count)).toThrow(RangeError);
  });

  it("writes git's bytes from a list of objects", () => {
    const objects = oracle.objects.map((o) => ({ oid: o.oid, offset: o.offset, crc32: crcs.get(o.oid)! }));
    const idx = writePackIndexV2(objects.reverse(), oracle.checksum);
    expect(Buffer.from(idx).equals(Buffer.from(oracle.idx))).toBe(true);
  });

  it('writes offsets from 2^31 on to the 8-byte table, as git reads them', () => {
    const objects = [
      { oid: sha1Hex(new Uint8Array([1])), offset: 12, crc32: 1 },
      { oid: sha1Hex(new Uint8Array([2])), offset: 2 ** 31 - 1, crc32: 2 },
      { oid: sha1Hex(new Uint8Array([3])), offset: 2 ** 31, crc32: 0xffffffff },
      { oid: sha1Hex(new Uint8Array([4])), offset: 2 ** 33 + 5, crc32: 4 },
    ];
    const idx = writePackIndexV2(objects, 'ab'.repeat(20));
    expect(idx.length).toBe(8 + 1024 + 4 * 28 + 2 * 8 + 40);
    // git show-index prints "offset oid (crc)" for each entry.
    const shown = small.git(['show-index'], { input: idx }).toString().trim().split('\n');
    const parsed = shown.map((line) => {
      const [offset, oid, crc] = line.split(' ');
      return { oid, offset: Number(offset), crc32: Number.parseInt(crc.slice(1, -1), 16) };
    });
    expect(parsed.sort((a, b) => a.offset - b.offset)).toEqual(objects);
    const index = parsePackIndexV2(idx);
    for (const o of objects) expect(index.find(o.oid)).toBe(o.offset);
  });

  it('writes offset 0 as it writes any other, as git reads it back', () => {
    // No object starts inside the pack's 12-byte header, but the .idx format and git's pack-write.c put
    // no floor on an offset, and git show-index reads one back; whether an offset names an object is the
    // pack parser's to know. The writer refuses only numbers its 4- and 8-byte fields cannot hold.
    const objects = [
      { oid: sha1Hex(new Uint8Array([5])), offset: 0, crc32: 7 },
      { oid: sha1Hex(new Uint8Array([6])), offset: 11, crc32: 8 },
    ];
    const idx = writePackIndexV2(objects, 'ab'.repeat(20));
    const shown = small.git(['show-index'], { input: idx }).toString().trim().split('\n');
    const offsets = new Map(shown.map((line) => [line.split(' ')[1], Number(line.split(' ')[0])]));
    expect(offsets).toEqual(new Map(objects.map((o) => [o.oid, o.offset])));
    expect(parsePackIndexV2(idx).find(objects[0].oid)).toBe(0);
  });

  it('refuses damaged indexes', () => {
    const code = (idx: Uint8Array, options?: { verifyChecksum?: boolean }) => {
      try {
        parsePackIndexV2(idx, options);
        return 'accepted';
      } catch (e) {
        expect(e).toBeInstanceOf(PackError);
        return `${(e as PackError).code}: ${(e as PackError).message}`;
      }
    };
    expect(code(oracle.idx.subarray(0, 100))).toMatch(/PACK_INDEX_INVALID.*only 100 bytes/);
    const v1 = oracle.idx.slice();
    v1[0] = 0;
    expect(code(v1)).toMatch(/version-2 signature/);
    const v3 = oracle.idx.slice();
    v3[7] = 3;
    expect(code(v3)).toMatch(/version 3/);
    const flipped = oracle.idx.slice();
    flipped[8 + 1024 + 5] ^= 1;
    expect(code(flipped)).toMatch(/checksum does not match/);
    expect(code(flipped, { verifyChecksum: false })).toBe('accepted');
    const fanout = oracle.idx.slice();
    fanout.set([0, 0, 0xff, 0xff], 8);
    expect(code(fanout, { verifyChecksum: false })).toMatch(/not monotonic/);
    const count = oracle.objects.length;
    expect(code(oracle.idx.subarray(0, oracle.idx.length - 4), { verifyChecksum: false })).toMatch(
      `too short for ${count} objects`,
    );
    const partial = new Uint8Array(oracle.idx.length + 4);
    partial.set(oracle.idx);
    expect(code(partial, { verifyChecksum: false })).toMatch(/its 8-byte offset table has a partial entry/);
    expect(code(oracle.idx.subarray(0, 8 + 1024 + 39))).toMatch(/only 1071 bytes long/);
  });
});

describe('pack index v2, rule by rule', () => {
  const objects = [0, 1, 2, 0x80, 0xff].map((first, i) => {
    const oid = oidFromHex(sha1Hex(new Uint8Array([i])));
    oid[0] = first;
    return { oid: toHex(oid), offset: 12 + i * 100, crc32: i };
  });

  it('reads an index of no objects, the shortest there is', () => {
    const idx = writePackIndexV2([], 'cd'.repeat(20));
    expect(idx.length).toBe(8 + 1024 + 40);
    const index = parsePackIndexV2(idx);
    expect(index.count).toBe(0);
    expect(index.oids()).toEqual([]);
    expect(index.has(objects[0].oid)).toBe(false);
  });

  it('finds ids whose first byte is 0 and 255, at either end of the fan-out', () => {
    const index = parsePackIndexV2(writePackIndexV2(objects, 'cd'.repeat(20)));
    for (const o of objects) expect(index.find(o.oid)).toBe(o.offset);
    // Absent ids that share a present one's first byte, or all but its last.
    for (const o of objects) {
      const near = oidFromHex(o.oid);
      near[19] ^= 1;
      expect(index.find(near)).toBeNull();
      near[19] ^= 1;
      near[1] ^= 0x80;
      expect(index.has(near)).toBe(false);
    }
    expect(index.entry(0)).toEqual(objects[0]);
    expect(index.entry(4)).toEqual(objects[4]);
  });

  it('searches a fan-out bucket of many ids', () => {
    const many = Array.from({ length: 40 }, (_, i) => {
      const oid = oidFromHex(sha1Hex(new Uint8Array([i, 7])));
      oid[0] = 0x42;
      return { oid: toHex(oid), offset: 12 + i, crc32: i };
    });
    const index = parsePackIndexV2(writePackIndexV2(many, 'cd'.repeat(20)));
    for (const o of many) expect(index.find(o.oid)).toBe(o.offset);
    const absent = oidFromHex(many[0].oid);
    for (const last of [0x00, 0x7f, 0xff]) {
      absent[19] = last;
      if (!many.some((o) => o.oid === toHex(absent))) expect(index.find(absent)).toBeNull();
    }
  });

  it('refuses entry numbers that are not one, and ids that are not 20 bytes', () => {
    const index = parsePackIndexV2(writePackIndexV2(objects, 'cd'.repeat(20)));
    expect(() => index.entry(-1)).toThrow(RangeError);
    expect(() => index.entry(0.5)).toThrow(RangeError);
    expect(() => index.entry(5)).toThrow(new RangeError('No entry 5 in an index of 5'));
    expect(() => index.find(new Uint8Array(19))).toThrow(new TypeError('An object id must be 20 bytes'));
  });

  it('refuses an offset that points past the 8-byte table', () => {
    const large = [{ ...objects[0], offset: 2 ** 31 }, objects[1]];
    const idx = writePackIndexV2(large, 'cd'.repeat(20));
    const index = parsePackIndexV2(idx);
    expect(index.find(large[0].oid)).toBe(2 ** 31);
    // Entry 0's 4-byte offset names the 8-byte table's entry 1, of 1.
    const offsetTable = 8 + 1024 + 2 * 24;
    new DataView(idx.buffer).setUint32(offsetTable, 0x80000001);
    expect(() => parsePackIndexV2(idx, { verifyChecksum: false }).find(large[0].oid)).toThrow(
      /object 0 points past the 8-byte offset table/,
    );
  });

  it('writes the same bytes whether the given hasher or the built-in SHA-1 signs them', async () => {
    const n = objects.length;
    const oids = new Uint8Array(n * 20);
    for (const [i, o] of objects.entries()) oids.set(oidFromHex(o.oid), i * 20);
    const offsets = objects.map((o) => o.offset);
    const crcs = objects.map((o) => o.crc32);
    const checksum = oidFromHex('cd'.repeat(20));
    const signed = writePackIndexV2Tables(oids, offsets, crcs, n, checksum, await createWasmSha1());
    expect(signed).toEqual(writePackIndexV2(objects, checksum));
    expect(() => parsePackIndexV2(signed)).not.toThrow();
  });

  it('refuses a pack checksum, an id or an offset it cannot write', () => {
    expect(() => writePackIndexV2(objects, new Uint8Array(19))).toThrow(/pack checksum must be 20 bytes/);
    expect(() => writePackIndexV2([{ ...objects[0], oid: new Uint8Array(21) }], 'cd'.repeat(20))).toThrow(
      /object id must be 20 bytes/,
    );
    for (const offset of [-1, 1.5, 2 ** 53]) {
      expect(() => writePackIndexV2([{ ...objects[0], offset }], 'cd'.repeat(20))).toThrow(
        /Invalid pack offset/,
      );
    }
  });
});

describe('sortByOid', () => {
  it('puts a run of one prefix in order whole, and equal ids by offset alone', () => {
    const id = (first: number, last: number) => {
      const oid = new Uint8Array(20).fill(0x11);
      oid[0] = first;
      oid[19] = last;
      return oid;
    };
    // Three ids of one prefix, in the pack against their order.
    const run = [id(0x11, 3), id(0x11, 2), id(0x11, 1)];
    const oids = new Uint8Array(60);
    for (const [i, oid] of run.entries()) oids.set(oid, i * 20);
    expect(Array.from(sortByOid(oids, [10, 20, 30], 3))).toEqual([2, 1, 0]);
    // One id twice (entries 0 and 2); what follows each in memory must not decide.
    const twice = [id(0x50, 0), id(0xff, 0), id(0x50, 0), id(0x00, 0)];
    const table = new Uint8Array(80);
    for (const [i, oid] of twice.entries()) table.set(oid, i * 20);
    expect(Array.from(sortByOid(table, [1, 2, 3, 4], 4))).toEqual([3, 0, 2, 1]);
  });

  it('orders ids that share their first 32 bits, and duplicates by offset', () => {
    const n = 500;
    const oids = new Uint8Array(n * 20);
    for (let i = 0; i < n; i++) {
      const id = oidFromHex(sha1Hex(new Uint8Array([i & 0xff, i >> 8])));
      if (i % 3 === 0) id.set([0xaa, 0xbb, 0xcc, 0xdd]); // a third share one prefix
      oids.set(id, i * 20);
    }
    oids.set(oids.subarray(0, 20), 20 * 450); // a duplicate of entry 0, later in the pack
    const offsets = Float64Array.from({ length: n }, (_, i) => 1000 + i);
    const order = Array.from(sortByOid(oids, offsets, n));
    // The oracle orders by hex text, not by the comparator under test; equal ids by their place in the pack.
    const hex = (i: number) => toHex(oids, i * 20, 20);
    const expected = Array.from({ length: n }, (_, i) => i).sort((a, b) =>
      hex(a) < hex(b) ? -1 : hex(a) > hex(b) ? 1 : offsets[a] - offsets[b],
    );
    expect(order).toEqual(expected);
    expect(order.indexOf(450)).toBe(order.indexOf(0) + 1);
    expect(toHex(oids, order[0] * 20, 20) <= toHex(oids, order[1] * 20, 20)).toBe(true);
  });

  it('sorts more than 2^21 ids, too many to pack with their position into one double, by the full comparison', () => {
    // 2^21 + 1 ids: 1.2 s of sorting on this machine (2 cores, load 3), 3 s for the whole case.
    const n = 2 ** 21 + 1;
    const oids = new Uint8Array(n * 20);
    let x = 0x9e3779b9; // xorshift32: the same ids every run
    for (let i = 0; i < oids.length; i += 4) {
      x ^= x << 13;
      x ^= x >>> 17;
      x ^= x << 5;
      oids.set([x, x >>> 8, x >>> 16, x >>> 24], i);
    }
    const offsets = Float64Array.from({ length: n }, (_, i) => 12 + i * 10);
    // One id three times, its offsets against its places: the offsets alone order them.
    const twins = [7, 1_000_000, n - 1];
    for (const i of twins) oids.copyWithin(i * 20, 3 * 20, 4 * 20);
    oids.copyWithin(3 * 20, 4 * 20, 5 * 20);
    offsets[7] = 25;
    offsets[1_000_000] = 35;
    offsets[n - 1] = 15;
    const order = sortByOid(oids, offsets, n);
    const seen = new Uint8Array(n);
    for (const i of order) seen[i]++;
    expect(seen.every((c) => c === 1)).toBe(true);
    // Buffer.compare is the oracle, not the comparator under test.
    const bytes = Buffer.from(oids.buffer);
    let unordered = 0;
    for (let k = 1; k < n; k++) {
      const a = order[k - 1] * 20;
      const b = order[k] * 20;
      const c = bytes.compare(bytes, b, b + 20, a, a + 20);
      if (c > 0 || (c === 0 && offsets[order[k - 1]] > offsets[order[k]])) unordered++;
    }
    expect(unordered).toBe(0);
    const first = order.indexOf(n - 1);
    expect(Array.from(order.subarray(first, first + 3))).toEqual([n - 1, 7, 1_000_000]);
  });
});
