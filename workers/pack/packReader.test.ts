import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PackError } from './errors.ts';
import { PackIngester } from './packIngester.ts';
import { PackReader } from './packReader.ts';
import { makeSampleRepo, type SampleRepo } from './testing/gitPacks.ts';
import { entryTypes } from './testing/packBuilder.ts';

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
