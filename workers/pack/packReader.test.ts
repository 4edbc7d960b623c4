import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PackError } from './errors.ts';
import { PackIngester } from './packIngester.ts';
import { PackReader } from './packReader.ts';
import { makeSampleRepo, type SampleRepo } from './testing/gitPacks.ts';
import { buildPackAt, entryTypes, makeDelta, objectId, type PackEntry } from './testing/packBuilder.ts';

/** Every object's bytes as git has them, by id: one `git cat-file --batch`. */
function gitObjects(sample: SampleRepo, oids: string[]): Map<string, Buffer> {
  const out = sample.git(['cat-file', '--batch'], { input: `${oids.join('\n')}\n` });
  const objects = new Map<string, Buffer>();
  let at = 0;
  while (at < out.length) {
    const eol = out.indexOf(10, at);
    const [oid, , size] = out.subarray(at, eol).toString().split(' ');
    objects.set(oid, out.subarray(eol + 1, eol + 1 + Number(size)));
    at = eol + 1 + Number(size) + 1;
  }
  return objects;
}

async function ingest(pack: Uint8Array) {
  const ingester = await PackIngester.create();
  ingester.push(pack);
  return ingester.finish();
}

describe('PackReader against git cat-file', () => {
  let sample: SampleRepo;
  beforeAll(() => {
    sample = makeSampleRepo();
  });
  afterAll(() => sample.cleanup());

  for (const [what, options, deltaType] of [
    ['ofs-deltas', ['--delta-base-offset'], 6],
    ['ref-deltas', [], 7],
  ] as const) {
    it(`reads every object of a pack with ${what}, in any order, as git has it`, async () => {
      const pack = sample.pack([...options]);
      expect(entryTypes(pack)).toContain(deltaType);
      const { objects } = await ingest(pack);
      const offsets = new Map(objects.map((o) => [o.oid, o.offset]));
      const reader = new PackReader(pack, (oid) => offsets.get(oid));
      const expected = gitObjects(
        sample,
        objects.map((o) => o.oid),
      );
      // Last to first (every delta's base read after it), then in pack order (bases from the cache).
      for (const o of [...[...objects].reverse(), ...objects]) {
        const read = reader.read(o.offset);
        expect(read.type).toBe(o.type);
        expect(Buffer.from(read.data).equals(expected.get(o.oid)!)).toBe(true);
      }
    });
  }

  it('refuses an offset that is not an entry, and a pack cut short, with a PackError', async () => {
    const pack = sample.pack(['--delta-base-offset']);
    const { objects } = await ingest(pack);
    const reader = new PackReader(pack, () => undefined);
    expect(() => reader.read(3)).toThrow(PackError);
    expect(() => reader.read(pack.length)).toThrow(PackError);
    const deltas = objects.filter((o) => entryTypes(pack)[objects.indexOf(o)] === 6);
    const cut = new PackReader(pack.subarray(0, deltas[0].offset + 4), () => undefined);
    expect(() => cut.read(deltas[0].offset)).toThrow(PackError);
  });
});

describe('PackReader, rule by rule (hand-made packs)', () => {
  const enc = (text: string) => new TextEncoder().encode(text);
  const packOf = (entries: PackEntry[]) => buildPackAt(entries);
  const none = () => undefined;
  function failure(run: () => unknown): PackError {
    try {
      run();
    } catch (error) {
      expect(error).toBeInstanceOf(PackError);
      return error as PackError;
    }
    throw new Error('expected a throw');
  }
  const base = enc('hello, world');

  it('reads a chain of ofs-deltas from its top, and a ref-delta through offsetOf', () => {
    const { pack, offsets } = packOf([
      { type: 'blob', data: base },
      { ofsDelta: 0, delta: makeDelta(12, [{ copy: [0, 5] }]) },
      { ofsDelta: 1, delta: makeDelta(5, [{ copy: [0, 4] }, { insert: '!' }]) },
      { refDelta: objectId('blob', base), delta: makeDelta(12, [{ copy: [7, 5] }]) },
    ]);
    const reader = new PackReader(pack, (oid) => (oid === objectId('blob', base) ? offsets[0] : undefined));
    expect(new TextDecoder().decode(reader.read(offsets[2]).data)).toBe('hell!');
    expect(new TextDecoder().decode(reader.read(offsets[1]).data)).toBe('hello');
    expect(reader.read(offsets[3])).toEqual({ type: 'blob', data: enc('world') });
    const missing = failure(() => new PackReader(pack, none).read(offsets[3]));
    expect(missing.code).toBe('PACK_DELTA_BASE_MISSING');
    expect(missing.message).toMatch(`The pack lacks the delta base ${objectId('blob', base)}.`);
  });

  it('reads entries only between the 12-byte header and the 20-byte trailer', () => {
    const { pack } = packOf([{ type: 'blob', data: base }]);
    const reader = new PackReader(pack, none);
    expect(reader.read(12).data).toEqual(base);
    for (const offset of [11, 12.5, pack.length - 20]) {
      expect(failure(() => reader.read(offset)).message).toMatch(
        `The pack cannot be read back: no entry at ${offset}.`,
      );
    }
  });

  it('refuses type 0 and 5, a size over maxObjectSize, and data that does not inflate to the size', () => {
    const { pack } = packOf([{ type: 'blob', data: enc('abcd') }]);
    expect(new PackReader(pack, none, 4).read(12).data).toEqual(enc('abcd'));
    expect(failure(() => new PackReader(pack, none, 3).read(12)).message).toMatch(
      /the entry at 12 declares 4 bytes/,
    );
    for (const type of [0, 5]) {
      const odd = pack.slice();
      odd[12] = (odd[12] & 0x8f) | (type << 4);
      expect(failure(() => new PackReader(odd, none).read(12)).message).toMatch(
        `the entry at 12 has type ${type}`,
      );
    }
    // The compressed data cut short by the trailer: zlib wants more than the entry has.
    const cut = new Uint8Array(12 + 1 + 4 + 20);
    cut.set(pack.subarray(0, 12 + 1 + 4));
    expect(failure(() => new PackReader(cut, none).read(12)).message).toMatch(
      /an entry does not inflate to its 4 bytes/,
    );
    // Every byte inflated, but the stream cut before its Adler-32: not a whole entry either.
    const noAdler = new Uint8Array(pack.length - 4);
    noAdler.set(pack.subarray(0, pack.length - 24));
    expect(failure(() => new PackReader(noAdler, none).read(12))).toMatchObject({
      code: 'PACK_CORRUPT',
      message: expect.stringMatching(/an entry does not inflate to its 4 bytes/),
    });
  });

  it('refuses a header or a base offset that runs into the trailer', () => {
    const { pack } = packOf([{ type: 'blob', data: base }]);
    // Five header bytes, each saying another follows, then the trailer.
    const endless = new Uint8Array(12 + 5 + 20);
    endless.set(pack.subarray(0, 12));
    endless.fill(0xbf, 12, 13);
    endless.fill(0xff, 13, 17);
    expect(failure(() => new PackReader(endless, none).read(12)).message).toMatch(
      /the entry at 12 has a broken header/,
    );
    const { pack: ofs, offsets } = packOf([
      { type: 'blob', data: base },
      { ofsDelta: 0, delta: makeDelta(12, [{ copy: [0, 5] }]) },
    ]);
    const at = offsets[1];
    const cut = ofs.slice(0, at + 1 + 20);
    expect(failure(() => new PackReader(cut, none).read(at)).message).toMatch(
      `the delta at ${at} is cut short`,
    );
    const runaway = ofs.slice(0, at + 3 + 20);
    runaway.fill(0xff, at + 1, at + 3);
    // The trailer's first byte would end the offset: a read past the entry must not take it.
    runaway[at + 3] = 0;
    expect(failure(() => new PackReader(runaway, none).read(at)).message).toMatch(
      `the delta at ${at} has a broken base offset`,
    );
    // Within the pack, but longer than any size or offset can be: refused at the byte that makes it so, not
    // read on into a number past 2^53.
    const long = ofs.slice();
    long.set([0xbf, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01], 12);
    expect(failure(() => new PackReader(long, none).read(12)).message).toMatch(
      /the entry at 12 has a broken header/,
    );
    const far = ofs.slice();
    far.set([0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x00], at + 1);
    expect(failure(() => new PackReader(far, none).read(at)).message).toMatch(
      `the delta at ${at} has a broken base offset`,
    );
    // A base offset of exactly 2^45 with a byte to follow is read on (2^52 + 128 still exact), and is then
    // outside the pack; one more than 2^45 is refused before the next byte.
    const bound = (last: number) => {
      const pack = ofs.slice();
      pack.set([0x86, 0xfe, 0xfe, 0xfe, 0xfe, 0xff, last, 0x00], at + 1);
      return failure(() => new PackReader(pack, none).read(at)).message;
    };
    expect(bound(0x80)).toMatch(`the delta at ${at} points outside the pack`);
    expect(bound(0x81)).toMatch(`the delta at ${at} has a broken base offset`);
    const { pack: ref, offsets: refOffsets } = packOf([
      { refDelta: 'ab'.repeat(20), delta: makeDelta(1, [{ copy: [0, 1] }]) },
    ]);
    const refCut = ref.slice(0, refOffsets[0] + 1 + 19 + 20);
    expect(failure(() => new PackReader(refCut, none).read(12)).message).toMatch(
      'the delta at 12 is cut short',
    );
    // The id whole, ending where the trailer starts: the header reads, and the data that is missing is the
    // inflater's to find.
    const { pack: based, offsets: basedAt } = packOf([
      { type: 'blob', data: base },
      { refDelta: objectId('blob', base), delta: makeDelta(12, [{ copy: [0, 1] }]) },
    ]);
    const idOnly = new Uint8Array(basedAt[1] + 1 + 20 + 20);
    idOnly.set(based.subarray(0, basedAt[1] + 1 + 20));
    expect(failure(() => new PackReader(idOnly, () => 12).read(basedAt[1])).message).toMatch(
      'an entry does not inflate to its 4 bytes',
    );
  });

  it('refuses an ofs-delta whose base would be the delta itself or before the first entry', () => {
    const entries = (distance?: number): PackEntry[] => [
      { type: 'blob', data: base },
      { ofsDelta: 0, delta: makeDelta(12, [{ copy: [0, 5] }]), distance },
    ];
    const at = packOf(entries()).offsets[1];
    // at - 12 reaches the first entry; one more, the pack's header.
    expect(new PackReader(packOf(entries(at - 12)).pack, none).read(at).data).toEqual(enc('hello'));
    for (const distance of [0, at - 11]) {
      expect(failure(() => new PackReader(packOf(entries(distance)).pack, none).read(at)).message).toMatch(
        `the delta at ${at} points outside the pack`,
      );
    }
  });

  it('refuses a delta chain longer than 10,000, and reads one of 10,000', () => {
    const entries: PackEntry[] = [{ type: 'blob', data: enc('x') }];
    const step = makeDelta(1, [{ copy: [0, 1] }]);
    for (let k = 0; k < 10_001; k++) entries.push({ ofsDelta: k, delta: step });
    const { pack, offsets } = packOf(entries);
    expect(new PackReader(pack, none).read(offsets[10_000]).data).toEqual(enc('x'));
    expect(failure(() => new PackReader(pack, none).read(offsets[10_001])).message).toMatch(
      `a delta chain at ${offsets[10_001]} is longer than 10000`,
    );
  });
});
