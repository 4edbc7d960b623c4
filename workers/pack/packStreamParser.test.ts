import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PackError } from './errors.ts';
import { Inflater } from './inflate.ts';
import { PackIngester, type PackIngesterOptions, type PackProgress } from './packIngester.ts';
import { gitIndexPack, makeSmallRepo, noise, type SampleRepo } from './testing/gitPacks.ts';
import { expectSameAsGit, failureOf, ingest } from './testing/ingest.ts';
import { buildPack, buildPackAt, makeDelta, objectId, resign } from './testing/packBuilder.ts';

// The receive half of the ingester (packStreamParser.ts), driven through PackIngester with small packs, made
// by git or by hand, with `git index-pack` as the oracle of what an accepted pack holds.

const enc = new TextEncoder();
const blob = (data: Uint8Array) => ({ type: 'blob' as const, data });

/** Pushes `chunks` one by one; the PackError thrown by push (not finish), or null if every push took its bytes. */
async function pushFailure(chunks: Uint8Array[], options: PackIngesterOptions = {}) {
  const ingester = await PackIngester.create(options);
  for (const chunk of chunks) {
    try {
      ingester.push(chunk);
    } catch (e) {
      if (e instanceof PackError) return e;
      throw e;
    }
  }
  return null;
}

/** Bytes of an entry header: type and size, as gitformat-pack encodes them, with the continuation bits given. */
const withTail = (pack: Uint8Array, tail: number[]) => {
  const out = new Uint8Array(pack.length + tail.length);
  out.set(pack);
  out.set(tail, pack.length);
  return out;
};

describe('PackStreamParser: what it accepts, against git index-pack', () => {
  let small: SampleRepo;
  beforeAll(() => {
    small = makeSmallRepo();
  });
  afterAll(() => small.cleanup());

  it('parses git packs of ofs-deltas and of ref-deltas in any split as git indexes them', async () => {
    for (const options of [[], ['--no-delta-base-offset']]) {
      // makeSmallRepo's packs ask for ofs-deltas; without --delta-base-offset git writes ref-deltas.
      const pack =
        options.length === 0
          ? small.pack()
          : new Uint8Array(
              small.git(['pack-objects', '--revs', '--stdout', '-q'], {
                input: small.git(['for-each-ref', '--format=%(objectname)']),
              }),
            );
      const oracle = gitIndexPack(small.git, small.root, pack, 'split');
      for (const chunk of [1, 7, 20, 21, 4096]) expectSameAsGit(await ingest(pack, chunk), oracle);
      // With no arrival ring, nothing is told of arrivals.
      expectSameAsGit(await ingest(pack, 4096, { limits: { arrivalCacheBytes: 0 } }), oracle);
      // Every entry, deltas too, past wholeObjectLimit: streamed, and only whole objects hashed.
      expectSameAsGit(await ingest(pack, 4096, { wholeObjectLimit: 16 }), oracle);
    }
  });

  it('keeps every entry of a pack of more than 65,536 objects, past the room the header first reserves', async () => {
    // The tables start with room for min(count, 2^16) entries; each entry past that grows them first.
    const data = Array.from({ length: 2 ** 16 + 2 }, (_, i) => enc.encode(`${i}\n`));
    const { pack, offsets } = buildPackAt(data.map(blob));
    const result = await ingest(pack);
    const byOffset = new Map(result.objects.map((o) => [o.offset, o.oid]));
    expect(byOffset.size).toBe(data.length);
    for (const i of [0, 2 ** 16 - 1, 2 ** 16, 2 ** 16 + 1]) {
      expect(byOffset.get(offsets[i])).toBe(objectId('blob', data[i]));
    }
  });

  it('reads version 3 as version 2, and refuses every other version by its number', async () => {
    const v3 = buildPack([blob(enc.encode('three\n'))], { version: 3 });
    expect((await ingest(v3)).objects.map((o) => o.oid)).toEqual([objectId('blob', enc.encode('three\n'))]);
    for (const version of [0, 1, 4]) {
      const failure = await failureOf(buildPack([blob(enc.encode('x'))], { version }));
      expect(failure.code).toBe('PACK_VERSION');
      expect(failure.message).toMatch(new RegExp(`^The pack is version ${version}\\. `));
    }
  });

  it('grows its receive scratch for objects past 64 KiB, and streams those past wholeObjectLimit through a window', async () => {
    const big = noise(200_000, 11);
    const huge = noise(2_500_000, 12);
    const edited = new Uint8Array(huge);
    edited.set(enc.encode('an edit in the middle'), 1_250_000);
    const toEdited = makeDelta(huge.length, [
      { copy: [0, 1_250_000] },
      { insert: 'an edit in the middle' },
      { copy: [1_250_021, huge.length - 1_250_021] },
    ]);
    const pack = buildPack([
      blob(enc.encode('small\n')),
      blob(big),
      blob(huge),
      { ofsDelta: 2, delta: toEdited },
      { type: 'tree', data: new Uint8Array(0) },
    ]);
    const oracle = gitIndexPack(small.git, small.root, pack, 'big');
    expect(oracle.objects.map((o) => o.oid)).toContain(objectId('blob', edited));
    const runs: [number | undefined, number][] = [
      [undefined, 65536],
      [65536, 65536],
      [200_000, 1 << 20],
      [199_999, 4093],
    ];
    for (const [wholeObjectLimit, chunk] of runs) {
      expectSameAsGit(await ingest(pack, chunk, { wholeObjectLimit }), oracle);
    }
  });

  it('gives the arrival ring an entry of exactly wholeObjectLimit bytes: its delta resolves as it arrives', async () => {
    const base = enc.encode('0123456789abcdef'.repeat(4));
    const pack = buildPack([blob(base), { ofsDelta: 0, delta: makeDelta(base.length, [{ copy: [0, 10] }]) }]);
    const resolving = async (wholeObjectLimit: number) => {
      const events: PackProgress[] = [];
      await ingest(pack, 65536, { wholeObjectLimit, onProgress: (p) => events.push(p) });
      return events.filter((e) => e.phase === 'resolving').map((e) => e.resolved);
    };
    // Held whole, so the ring has it: resolved on arrival, one report at the total.
    expect(await resolving(base.length)).toEqual([1]);
    // One byte over: streamed, never in the ring, so resolved after the last byte (from 0).
    expect(await resolving(base.length - 1)).toEqual([0, 1]);
  });

  it('reports receiving progress every 64 KiB exactly, then once when the last entry is in', async () => {
    const pack = buildPack([blob(noise(100_000, 1)), blob(noise(100_000, 2)), blob(noise(100_000, 3))]);
    const events: PackProgress[] = [];
    await ingest(pack, 16 * 1024, { onProgress: (p) => events.push(p) });
    const receiving = events.filter((e) => e.phase === 'receiving');
    const entriesEnd = pack.length - 20;
    const everyStep = [1, 2, 3, 4].map((k) => k * 65536);
    expect(receiving.map((e) => e.bytes)).toEqual([...everyStep, pack.length]);
    expect(receiving.map((e) => e.totalObjects)).toEqual([3, 3, 3, 3, 3]);
    // Object k of 3 is whole once the bytes up to its end have arrived.
    const ends = [0, 1, 2].map((k) => 12 + (k + 1) * ((entriesEnd - 12) / 3));
    expect(receiving.map((e) => e.objects)).toEqual(
      [...everyStep, pack.length].map((bytes) => ends.filter((end) => end <= bytes).length),
    );
  });

  it('stops between two entries of one chunk once aborted', async () => {
    const controller = new AbortController();
    let runs = 0;
    const pack = buildPack([
      blob(enc.encode('one\n')),
      blob(enc.encode('two\n')),
      blob(enc.encode('three\n')),
    ]);
    const failure = await pushFailure([pack], {
      signal: controller.signal,
      inflater: () =>
        new (class extends Inflater {
          override run(input: Uint8Array, end: number) {
            // Aborted while the first entry inflates: the parser must not go on to the next.
            if (++runs === 1) controller.abort();
            return super.run(input, end);
          }
        })(),
    });
    expect(failure?.code).toBe('ABORTED');
    expect(runs).toBe(1);
  });
});

describe('PackStreamParser: the header', () => {
  it('refuses a stream that is not a pack from its first differing byte', async () => {
    for (const bytes of [[0x3c], [0x50, 0x58], [0x50, 0x41, 0x43, 0x4a]]) {
      const failure = await pushFailure([new Uint8Array(bytes)]);
      expect(failure?.code).toBe('PACK_SIGNATURE');
      expect(failure?.message).toMatch(/does not start with "PACK"/);
    }
    // A correct start waits for the rest.
    expect(await pushFailure([enc.encode('P'), enc.encode('AC')])).toBeNull();
  });

  it('says where a stream ended inside the header', async () => {
    expect((await failureOf(new Uint8Array(0))).message).toMatch(/^No pack data was received\. /);
    const failure = await failureOf(enc.encode('PAC'));
    expect(failure.code).toBe('PACK_TRUNCATED');
    expect(failure.message).toMatch(/^The pack ended after 3 bytes, inside its header\. /);
    const eleven = buildPack([]).subarray(0, 11);
    expect((await failureOf(eleven, 1)).message).toMatch(/after 11 bytes, inside its header/);
  });
});

describe('PackStreamParser: entry headers', () => {
  const base = enc.encode('the base object of the deltas below\n');
  const delta = makeDelta(base.length, [{ copy: [0, 8] }, { insert: 'changed' }]);

  it('refuses the two invalid types, 0 and 5, naming the entry and its offset', async () => {
    for (const type of [0, 5]) {
      const { pack, offsets } = buildPackAt([blob(base), blob(enc.encode('second\n'))]);
      pack[offsets[1]] = (pack[offsets[1]] & 0x8f) | (type << 4);
      const failure = await failureOf(resign(pack));
      expect(failure.code).toBe('PACK_CORRUPT');
      expect(failure.message).toMatch(
        new RegExp(
          `^Object 2 of 2 \\(at offset ${offsets[1]}\\) in the pack is damaged: it has the invalid type ${type}\\. `,
        ),
      );
    }
  });

  it('refuses a size of more than 53 bits, and one past maxObjectSize, and takes one at it', async () => {
    const header = buildPack([], { count: 1 }).subarray(0, 12);
    // A blob whose size varint runs to 8 continuation bytes: 4 + 7 * 8 = 60 bits.
    const long = withTail(header, [
      0xbf,
      0xff,
      0xff,
      0xff,
      0xff,
      0xff,
      0xff,
      0xff,
      0x01,
      ...new Array(30).fill(0),
    ]);
    const failure = await failureOf(long);
    expect(failure.code).toBe('PACK_CORRUPT');
    expect(failure.message).toMatch(
      /at offset 12\) in the pack is damaged: its size does not fit in 53 bits/,
    );
    // 7 continuation bytes: 53 bits, a size that fits, but far past any limit.
    const big = withTail(header, [0xbf, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f, ...new Array(30).fill(0)]);
    expect((await failureOf(big)).code).toBe('PACK_OBJECT_TOO_LARGE');

    const data = enc.encode('x'.repeat(100));
    const pack = buildPack([blob(enc.encode('first\n')), blob(data)]);
    expect((await ingest(pack, 65536, { limits: { maxObjectSize: 100 } })).objects).toHaveLength(2);
    const over = await failureOf(pack, 65536, { limits: { maxObjectSize: 99 } });
    expect(over.code).toBe('PACK_OBJECT_TOO_LARGE');
    expect(over.message).toMatch(
      /^Object 2 of 2 \(at offset \d+\) in the pack declares 100 bytes, more than the limit of 99 bytes/,
    );
  });

  it('reads ofs-delta distances as gitformat-pack encodes them, and refuses those that point nowhere', async () => {
    // A first entry of 300 incompressible bytes puts the delta past offset 128: its distance takes two bytes.
    const first = noise(300, 5);
    const entries = (distance?: number) => [blob(first), blob(base), { ofsDelta: 1, delta, distance }];
    const { pack, offsets } = buildPackAt(entries());
    expect(offsets[2] - offsets[1]).toBeGreaterThan(0);
    const oracle = gitIndexPack(makeGitOnce().git, makeGitOnce().root, pack, 'ofs');
    for (const chunk of [1, 65536]) expectSameAsGit(await ingest(pack, chunk), oracle);
    const at = offsets[2];
    expect(at).toBeGreaterThan(128);
    const damaged = (distance: number) => failureOf(buildPack(entries(distance)));
    const prefix = `^Object 3 of 3 \\(at offset ${at}\\) in the pack is damaged: `;
    expect((await damaged(0)).message).toMatch(
      new RegExp(`${prefix}its delta base offset is out of bounds\\. `),
    );
    // To offset 11, inside the pack's header; to offset 0, its start.
    expect((await damaged(at - 11)).message).toMatch(/its delta base offset is out of bounds/);
    expect((await damaged(at)).message).toMatch(/its delta base offset is out of bounds/);
    expect((await damaged(at + 1)).message).toMatch(/its delta base offset points before the pack/);
    expect((await damaged(200_000)).message).toMatch(/its delta base offset points before the pack/);
    expect((await damaged(at - offsets[1] - 1)).message).toMatch(
      new RegExp(`${prefix}its delta base offset ${offsets[1] + 1} is not the start of an object\\. `),
    );
    // The base the distance names is found, whichever entry it is.
    const onFirst = makeDelta(first.length, [{ copy: [0, 10] }]);
    const r = await ingest(buildPack([blob(first), blob(base), { ofsDelta: 0, delta: onFirst }]), 3);
    expect(r.objects[2].oid).toBe(objectId('blob', first.subarray(0, 10)));
  });
});

let gitOnce: SampleRepo | undefined;
/** A repository only for git's index-pack, made once for the file. */
function makeGitOnce(): SampleRepo {
  gitOnce ??= makeSmallRepo();
  return gitOnce;
}
afterAll(() => gitOnce?.cleanup());

describe('PackStreamParser: the end of the stream', () => {
  const { pack, offsets } = buildPackAt([
    blob(enc.encode('alpha\n')),
    blob(enc.encode('beta\n')),
    blob(enc.encode('gamma\n')),
  ]);

  it('says how far into an object, or how short of the checksum, a stream ended', async () => {
    const at = offsets[1] + 3;
    const cut = await failureOf(pack.subarray(0, at));
    expect(cut.code).toBe('PACK_TRUNCATED');
    expect(cut.message).toMatch(new RegExp(`^The pack ended after ${at} bytes, inside object 2 of 3\\. `));
    const short = await failureOf(pack.subarray(0, pack.length - 5));
    expect(short.code).toBe('PACK_TRUNCATED');
    expect(short.message).toMatch(/^The pack ended 5 bytes short of its trailing checksum\. /);
    const noTrailer = await failureOf(pack.subarray(0, pack.length - 20));
    expect(noTrailer.message).toMatch(/^The pack ended 20 bytes short of its trailing checksum\. /);
  });

  it('refuses bytes after the trailer as soon as they arrive, and counts them', async () => {
    const longer = withTail(pack, [1, 2, 3, 4, 5, 6, 7]);
    const early = await pushFailure([longer]);
    expect(early?.code).toBe('PACK_TRAILING_DATA');
    expect(early?.message).toMatch(/^The pack is followed by 7 unexpected bytes\. /);
    // The pack alone is taken; a single byte more, in the next chunk, is refused as it arrives.
    expect(await pushFailure([pack])).toBeNull();
    const one = await pushFailure([pack, new Uint8Array([9])]);
    expect(one?.code).toBe('PACK_TRAILING_DATA');
    expect(one?.message).toMatch(/^The pack is followed by 1 unexpected bytes\. /);
    // Bytes after a wrong checksum: the checksum is what failed.
    const wrong = withTail(pack, new Array(30).fill(0));
    wrong[pack.length - 1] ^= 1;
    const mismatch = await failureOf(wrong);
    expect(mismatch.code).toBe('PACK_CHECKSUM_MISMATCH');
    expect(mismatch.message).toMatch(
      /^The pack's checksum does not match its contents: the download was corrupted\. /,
    );
  });

  it('tells a header that counts one object too many, or too few, from a damaged checksum', async () => {
    const more = buildPack([blob(enc.encode('alpha\n')), blob(enc.encode('beta\n'))], { count: 3 });
    for (const chunk of [1, 65536]) {
      const failure = await failureOf(more, chunk);
      expect(failure.code).toBe('PACK_CORRUPT');
      expect(failure.message).toMatch(/^The pack header declares 3 objects but the pack holds only 2\. /);
    }
    const one = buildPack([], { count: 1 });
    expect((await failureOf(one)).message).toMatch(
      /^The pack header declares 1 object but the pack holds only 0\. /,
    );
    const fewer = buildPack([blob(enc.encode('alpha\n')), blob(enc.encode('beta\n'))], { count: 1 });
    const failure = await failureOf(fewer);
    expect(failure.code).toBe('PACK_CORRUPT');
    expect(failure.message).toMatch(/^The pack header declares 1 object but the pack holds more\. /);
    // The same bytes with a damaged trailer are only a checksum mismatch.
    fewer[fewer.length - 1] ^= 1;
    expect((await failureOf(fewer)).code).toBe('PACK_CHECKSUM_MISMATCH');
  });

  it('takes an entry that fails near the end for a trailer only until more bytes come', async () => {
    // An invalid type in the last entry, followed by its data and a trailer: more than 20 bytes follow it.
    const { pack: bad, offsets } = buildPackAt([blob(enc.encode('alpha\n')), blob(noise(40, 3))]);
    bad[offsets[1]] = (bad[offsets[1]] & 0x8f) | (5 << 4);
    resign(bad);
    for (const chunk of [1, 5, 65536]) {
      const failure = await pushFailure(
        Array.from({ length: Math.ceil(bad.length / chunk) }, (_, k) =>
          bad.subarray(k * chunk, (k + 1) * chunk),
        ),
      );
      expect(failure?.code).toBe('PACK_CORRUPT');
      expect(failure?.message).toMatch(/invalid type 5/);
    }
  });

  it('takes a header with no entries and no trailer for a pack 20 bytes short of its checksum', async () => {
    const failure = await failureOf(buildPack([]).subarray(0, 12));
    expect(failure.message).toMatch(/^The pack ended 20 bytes short of its trailing checksum\. /);
  });

  it('refuses a header counting 2^32 - 1 objects by what the pack holds, not by reserving room for them', async () => {
    const failure = await failureOf(buildPack([blob(enc.encode('one\n'))], { count: 2 ** 32 - 1 }));
    expect(failure.code).toBe('PACK_CORRUPT');
    expect(failure.message).toMatch(
      /^The pack header declares 4294967295 objects but the pack holds only 1\. /,
    );
  });

  it("says which entry a damaged zlib stream is in, with the inflater's finding as the cause", async () => {
    const { pack: bad, offsets } = buildPackAt([
      blob(enc.encode('alpha\n')),
      blob(enc.encode('beta beta\n')),
    ]);
    bad[offsets[1] + 1] ^= 0x0f; // the zlib header after a one-byte entry header
    const e = await pushFailure([resign(bad)]);
    expect(e?.code).toBe('PACK_CORRUPT');
    expect(e?.message).toMatch(
      new RegExp(
        `^Object 2 of 2 \\(at offset ${offsets[1]}\\) in the pack is damaged: [^.]*[^. ]\\. The download`,
      ),
    );
    const cause = e?.cause as PackError;
    expect(cause).toBeInstanceOf(PackError);
    expect(e?.message).toContain(cause.detail.replace(/\.$/, ''));
    // The inflater's sentence ends with its own full stop: it is taken off, not doubled or kept before ours.
    expect(cause.detail).toMatch(/[^.]\.$/);
    expect(e?.message).toContain(`damaged: ${cause.detail.slice(0, -1)}. The download`);
  });

  it('takes a trailer that parses as a damaged entry for the end of a pack short of its count', async () => {
    // Find a pack whose trailer starts with an invalid type (0 or 5): read as an entry, it fails at once.
    let pack: Uint8Array | undefined;
    for (let k = 0; !pack; k++) {
      const candidate = buildPack([blob(enc.encode(`content ${k}\n`))], { count: 2 });
      const type = (candidate[candidate.length - 20] >> 4) & 7;
      if (type === 0 || type === 5) pack = candidate;
    }
    for (const chunk of [1, 65536]) {
      const failure = await failureOf(pack, chunk);
      expect(failure.message).toMatch(/^The pack header declares 2 objects but the pack holds only 1\. /);
    }
  });

  it('takes a short pack followed by one more byte for a stream cut inside the next object, not for a short pack', async () => {
    // The trailer read as the next entry's header must wait for more: a REF_DELTA header byte (type 7, no
    // continuation) then wants 20 bytes of base id, which the rest of the trailer and one byte give.
    let pack: Uint8Array | undefined;
    for (let k = 0; !pack; k++) {
      const candidate = buildPack([blob(enc.encode(`content ${k}\n`))], { count: 2 });
      if ((candidate[candidate.length - 20] & 0xf0) === 0x70) pack = withTail(candidate, [0]);
    }
    for (const chunk of [1, 65536]) {
      const failure = await failureOf(pack, chunk);
      expect(failure.code).toBe('PACK_TRUNCATED');
      expect(failure.message).toMatch(/^The pack ended after \d+ bytes, inside object 2 of 2\. /);
    }
    // Without that byte it is a consistent pack of fewer objects than its header says.
    const short = pack.subarray(0, pack.length - 1);
    expect((await failureOf(short)).message).toMatch(
      /^The pack header declares 2 objects but the pack holds only 1\. /,
    );
  });

  it('reports an entry that failed near the end as damaged when no trailer explains it', async () => {
    const { pack: bad, offsets } = buildPackAt([blob(enc.encode('alpha\n')), blob(noise(40, 3))]);
    bad[offsets[1]] = (bad[offsets[1]] & 0x8f) | (5 << 4);
    const failure = await failureOf(bad.subarray(0, offsets[1] + 10));
    expect(failure.code).toBe('PACK_CORRUPT');
    expect(failure.message).toMatch(/^Object 2 of 2 .*invalid type 5/);
  });

  it('refuses a delta that fails as it arrives in the last entry, never taking it for a trailer', async () => {
    const base = enc.encode('0123456789abcdef'.repeat(4));
    const pack = buildPack([
      blob(base),
      { ofsDelta: 0, delta: makeDelta(base.length, [{ copy: [60, 10] }]) },
    ]);
    const failure = await failureOf(pack);
    expect(failure.code).toBe('PACK_DELTA_INVALID');
  });
});
