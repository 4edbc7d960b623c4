import { constants, deflateRawSync, deflateSync, inflateRawSync, inflateSync } from 'node:zlib';
import { describe, expect, it, vi } from 'vitest';
import { smallInputs } from '../../test/support/fuzz.ts';
import { PackError } from './errors.ts';
import { adler32, INFLATE_DONE, INFLATE_NEED_INPUT, INFLATE_OUTPUT_FULL, Inflater } from './inflate.ts';
import {
  BitWriter,
  canonicalCodes,
  completeLengths,
  FIXED_DIST_LENS,
  FIXED_LIT_LENS,
  prng,
  writeDynamicHeader,
  writeSymbols,
  zlibWrap,
} from './testing/craftedDeflate.ts';
import { noise } from './testing/gitPacks.ts';

/** Under `npm run mutate` (SMALL_INPUTS=1) every case runs, at sizes that keep a mutant's run to seconds. */
const SMALL = smallInputs();
const size = (full: number, small: number) => (SMALL ? small : full);

const text = (n: number) => {
  const words = ['tree ', 'blob ', 'parent ', '100644 ', 'author ', '\n', 'x', '\0'];
  let s = '';
  for (let i = 0; s.length < n; i++) s += words[(i * 7919) % words.length] + String(i % 97);
  return new TextEncoder().encode(s.slice(0, n));
};

/**
 * Inflates `stream` placed at `at` in a larger buffer, feeding `chunk` bytes at a time. Bytes not fed yet are
 * garbage (0xee), so reading past `end` shows; now and then a call gets a new array holding the same bytes at
 * the same offsets, as the pack buffer after it grew.
 */
function inflateChunked(
  stream: Uint8Array,
  size: number,
  chunk: number,
  window = 0,
  inflater = new Inflater(),
) {
  const at = 5;
  let src = new Uint8Array(at + stream.length + 30).fill(0xee);
  inflater.start(src, at, new Uint8Array(window || size), size);
  const parts: Uint8Array[] = [];
  let end = at;
  let calls = 0;
  for (;;) {
    const status = inflater.run(src, end);
    if (status === INFLATE_DONE) break;
    if (status === INFLATE_NEED_INPUT) {
      if (end >= src.length) throw new Error('wanted more input than the stream has');
      const fed = end;
      end = Math.min(src.length, end + chunk);
      if (++calls % 97 === 0) src = src.slice();
      src.set(stream.subarray(fed - at, end - at), fed);
    } else {
      expect(status).toBe(INFLATE_OUTPUT_FULL);
      parts.push(inflater.out.slice(inflater.outStart, inflater.outPos));
      inflater.slide();
    }
  }
  parts.push(inflater.out.slice(inflater.outStart, inflater.outPos));
  return { data: new Uint8Array(Buffer.concat(parts)), consumed: inflater.inputEnd - at };
}

/** What node:zlib makes of a zlib stream: the data and the bytes it used, or its error. */
function zlibResult(stream: Uint8Array): { data: Uint8Array; used: number } | { error: string } {
  try {
    const r = inflateSync(stream, { info: true }) as unknown as {
      buffer: Buffer;
      engine: { bytesWritten: number };
    };
    return { data: new Uint8Array(r.buffer), used: r.engine.bytesWritten };
  } catch (e) {
    return { error: (e as Error).message };
  }
}

/** Inflates with every split of the input zlib's oracle needs: one byte at a time, odd pieces, all at once. */
function expectSameAsZlib(stream: Uint8Array, chunks = [1, 7, 1 << 20]) {
  const z = zlibResult(stream);
  if ('error' in z) throw new Error(`zlib refuses the stream: ${z.error}`);
  for (const chunk of chunks) {
    const r = inflateChunked(stream, z.data.length, chunk);
    expect(r.consumed).toBe(z.used);
    expect(Buffer.from(r.data).equals(Buffer.from(z.data))).toBe(true);
  }
}

/** The error the inflater throws on `stream` fed `chunk` bytes at a time, checked to be a PACK_CORRUPT. */
function refusal(stream: Uint8Array, size: number, chunk: number, window = 0): string {
  try {
    inflateChunked(stream, size, chunk, window);
  } catch (e) {
    expect(e).toBeInstanceOf(PackError);
    expect((e as PackError).code).toBe('PACK_CORRUPT');
    return (e as PackError).message;
  }
  return 'accepted';
}

describe('Inflater', () => {
  const inputs = {
    empty: new Uint8Array(0),
    tiny: text(5),
    text: text(size(50_000, 600)),
    noise: noise(size(70_000, 300), 1),
    runs: new Uint8Array(size(100_000, 400)).fill(97),
  };
  const settings = [
    { level: 6 },
    { level: 1 },
    { level: 9 },
    { level: 0 }, // stored blocks
    { level: 6, strategy: constants.Z_FIXED },
    { level: 6, strategy: constants.Z_HUFFMAN_ONLY },
    { level: 6, strategy: constants.Z_RLE },
    { level: 9, windowBits: 9, memLevel: 1 },
    // memLevel 1: a new block every 128 symbols, so block headers fall at every bit position of a byte.
    { level: 6, strategy: constants.Z_FIXED, memLevel: 1 },
  ];

  for (const [name, data] of Object.entries(inputs)) {
    it(`inflates ${name} data from every zlib setting and says where the stream ends`, () => {
      for (const options of settings) {
        const stream = new Uint8Array(deflateSync(data, options));
        for (const chunk of [1, 3, 64, 1 << 20]) {
          if (chunk === 1 && data.length > 10_000 && options.level !== 6) continue; // keeps the test quick
          const r = inflateChunked(stream, data.length, chunk);
          expect(r.consumed).toBe(stream.length);
          expect(Buffer.from(r.data).equals(Buffer.from(data))).toBe(true);
        }
      }
    });
  }

  it('streams a large output through a 64 KiB window', () => {
    const data = new Uint8Array(
      Buffer.concat([
        text(size(200_000, 50_000)),
        noise(size(150_000, 6000), 4),
        text(size(100_000, 12_000)),
      ]),
    );
    for (const options of SMALL ? [settings[3], settings[1], settings[6]] : settings) {
      const stream = new Uint8Array(deflateSync(data, options));
      const r = inflateChunked(stream, data.length, size(10_000, 4093), 65536);
      expect(r.consumed).toBe(stream.length);
      expect(Buffer.from(r.data).equals(Buffer.from(data))).toBe(true);
    }
  });

  it('accepts sync-flush markers (empty stored blocks) between blocks, as some servers write them', () => {
    const one = text(size(20_000, 700));
    const two = noise(size(5000, 200), 2);
    const body = Buffer.concat([
      deflateRawSync(one, { finishFlush: constants.Z_SYNC_FLUSH }),
      deflateRawSync(two, { finishFlush: constants.Z_SYNC_FLUSH }),
      deflateRawSync(new Uint8Array(0)), // an empty final block
    ]);
    const data = new Uint8Array(Buffer.concat([one, two]));
    const check = adler32(1, data, 0, data.length);
    const stream = new Uint8Array(
      Buffer.concat([
        Buffer.from([0x78, 0x9c]),
        body,
        Buffer.from([check >>> 24, check >>> 16, check >>> 8, check]),
      ]),
    );
    for (const chunk of [1, 1000, 1 << 20]) {
      const r = inflateChunked(stream, data.length, chunk);
      expect(r.consumed).toBe(stream.length);
      expect(Buffer.from(r.data).equals(Buffer.from(data))).toBe(true);
    }
  });

  it('is reusable: one instance for many streams', () => {
    const inflater = new Inflater();
    for (let i = 0; i < size(50, 20); i++) {
      const data = text(i * 37);
      const stream = new Uint8Array(deflateSync(data, { level: i % 10 }));
      inflater.start(stream, 0, new Uint8Array(data.length), data.length);
      expect(inflater.run(stream, stream.length)).toBe(INFLATE_DONE);
      expect(inflater.out).toEqual(data);
      // Once done, it stays done: a further call reads nothing.
      expect(inflater.run(stream, stream.length)).toBe(INFLATE_DONE);
      expect(inflater.inputEnd).toBe(stream.length);
    }
  });

  // One instance for every call: start() must reset whatever a failed stream left behind.
  const reused = new Inflater();
  function failure(stream: Uint8Array, size: number): string {
    const inflater = reused;
    inflater.start(stream, 0, new Uint8Array(Math.max(size, 0)), size);
    try {
      const status = inflater.run(stream, stream.length);
      return `status ${status}`;
    } catch (e) {
      expect(e).toBeInstanceOf(PackError);
      expect((e as PackError).code).toBe('PACK_CORRUPT');
      return (e as PackError).message;
    }
  }

  it('refuses output larger or smaller than declared', () => {
    const data = text(1000);
    const stream = new Uint8Array(deflateSync(data));
    expect(failure(stream, 999)).toMatch(/more data than the declared size/);
    expect(failure(stream, 1001)).toMatch(/inflated to 1000 bytes where the entry declares 1001/);
    const stored = new Uint8Array(deflateSync(data, { level: 0 }));
    expect(failure(stored, 999)).toMatch(/more data than the declared size/);
  });

  it('refuses streams that are not zlib, or damaged', () => {
    const data = text(1000);
    expect(failure(new Uint8Array(deflateRawSync(data)), 1000)).toMatch(/zlib/);
    const stream = new Uint8Array(deflateSync(data));
    const badAdler = stream.slice();
    badAdler[badAdler.length - 1] ^= 1;
    expect(failure(badAdler, 1000)).toMatch(/Adler-32/);
    const badType = stream.slice();
    badType[2] |= 0x06; // block type 3
    expect(failure(badType, 1000)).toMatch(/invalid block type/);
    const dict = new Uint8Array([0x78, 0xbb, 0, 0, 0, 1]);
    expect(failure(dict, 0)).toMatch(/preset dictionary/);
  });

  it('asks for more input, never fails, while a valid stream is incomplete', () => {
    const data = text(size(3000, 300));
    const stream = new Uint8Array(deflateSync(data));
    for (let cut = 0; cut < stream.length; cut++) {
      expect(failure(stream.subarray(0, cut), data.length)).toBe(`status ${INFLATE_NEED_INPUT}`);
    }
  });

  it('refuses damaged input where zlib refuses it, and agrees with zlib where it does not', () => {
    const data = text(size(5000, 600));
    const streams = [
      new Uint8Array(deflateSync(data)),
      new Uint8Array(deflateSync(data, { strategy: constants.Z_FIXED })),
      new Uint8Array(deflateSync(data.subarray(0, 100), { level: 0 })),
    ];
    const rounds = size(700, 40);
    for (const stream of streams) {
      for (let i = 0; i < rounds; i++) {
        const bad = stream.slice();
        bad[(i * 7) % bad.length] ^= 1 << (i % 8);
        bad[(i * 13) % bad.length] ^= 1 << ((i * 3) % 8);
        const declared = stream === streams[2] ? 100 : data.length;
        const ours = failure(bad, declared);
        const z = zlibResult(bad);
        if (!('error' in z)) {
          if (z.data.length === declared) {
            expect(ours).toBe(`status ${INFLATE_DONE}`);
            const r = inflateChunked(bad, declared, 1 << 20);
            expect(r.consumed).toBe(z.used);
            expect(Buffer.from(r.data).equals(Buffer.from(z.data))).toBe(true);
          } else {
            expect(ours).toMatch(/declared/);
          }
        } else if (z.error === 'unexpected end of file') {
          expect(ours).toMatch(new RegExp(`^status ${INFLATE_NEED_INPUT}$|declared size`));
        } else {
          expect(ours).not.toMatch(/^status/);
        }
      }
    }
  });

  it('refuses a bad zlib header as soon as its two bytes arrive, as zlib does', () => {
    const header = (cmf: number) => {
      const flg = (31 - ((cmf << 8) % 31)) % 31;
      return new Uint8Array([cmf, flg]);
    };
    expect(failure(header(0x78), 10)).toBe(`status ${INFLATE_NEED_INPUT}`);
    expect(failure(header(0x08), 10)).toBe(`status ${INFLATE_NEED_INPUT}`);
    for (const cmf of [0x88, 0xf8, 0x79, 0x77, 0x7f, 0x0f]) {
      expect(failure(header(cmf), 10)).toMatch(/not a zlib stream/);
      expect('error' in zlibResult(new Uint8Array([...header(cmf), 3, 0, 0, 0, 0, 1]))).toBe(true);
    }
    expect(failure(new Uint8Array([0x78, 0x9d]), 10)).toMatch(/header check/);
    expect(failure(new Uint8Array([0x78, 0x9b]), 10)).toMatch(/header check/);
    expect(failure(new Uint8Array([0x78, 0xbb]), 10)).toMatch(/preset dictionary/);
    expect(failure(new Uint8Array([0x78]), 10)).toBe(`status ${INFLATE_NEED_INPUT}`);
    // Every window size zlib writes (CINFO 1..7) is accepted.
    for (let windowBits = 9; windowBits <= 15; windowBits++) {
      expectSameAsZlib(new Uint8Array(deflateSync(text(300), { windowBits })), [1 << 20]);
    }
  });

  it('inflates through a window no smaller than 64 KiB, and refuses a smaller one', () => {
    const inflater = new Inflater();
    const src = new Uint8Array(deflateSync(text(10)));
    expect(() => inflater.start(src, 0, new Uint8Array(65535), 70_000)).toThrow(/at least 64 KiB/);
    expect(() => inflater.start(src, 0, new Uint8Array(65536), 70_000)).not.toThrow();
    expect(() => inflater.start(src, 0, new Uint8Array(10), 10)).not.toThrow();
    expect(() => inflater.start(src, 0, new Uint8Array(100), 10)).not.toThrow();
  });

  it('refuses more data than declared through a window too, from Huffman and from stored blocks', () => {
    const data = new Uint8Array(Buffer.concat([text(size(120_000, 100_000)), noise(2000, 9)]));
    for (const level of [0, 6]) {
      const stream = new Uint8Array(deflateSync(data, { level }));
      expect(refusal(stream, data.length - 1, 1 << 20, 65536)).toMatch(/more data than the declared size/);
      expect(refusal(stream, data.length - 1, 1001, 65536)).toMatch(/more data than the declared size/);
      expect(refusal(stream, data.length + 1, 1001, 65536)).toMatch(/declares/);
      if (!SMALL) expect(refusal(stream, data.length, 1001, 65536)).toBe('accepted');
    }
  });

  it('without checksum verification, ignores a bad Adler-32 but still says where the stream ends', () => {
    const data = text(2000);
    const stream = new Uint8Array(deflateSync(data));
    stream[stream.length - 2] ^= 0x10;
    for (const chunk of [1, 1 << 20]) {
      const r = inflateChunked(stream, data.length, chunk, 0, new Inflater(false));
      expect(r.consumed).toBe(stream.length);
      expect(r.data).toEqual(data);
    }
    expect(refusal(stream, data.length, 1 << 20)).toMatch(/Adler-32/);
  });

  it('inflates crafted dynamic blocks of every code length zlib allows, as zlib does', () => {
    // zlib's deflate never writes codes 15 bits long, nor every repeat code: crafted ones reach the
    // subtables of both codes, and the slow and fast paths over them.
    const rounds = size(60, 6);
    for (let seed = 1; seed <= rounds; seed++) {
      const rand = prng(seed * 7919);
      const w = new BitWriter();
      let produced = 0;
      let adler = 1;
      const blocks = 1 + rand(3);
      const parts: Uint8Array[] = [];
      for (let b = 0; b < blocks; b++) {
        const nlit = 257 + rand(30);
        const ndist = 1 + rand(30);
        const litSyms = [
          256,
          ...Array.from({ length: nlit }, (_, i) => i).filter((i) => i !== 256 && rand(3)),
        ];
        const distSyms = Array.from({ length: ndist }, (_, i) => i).filter(() => rand(4));
        const litLens = new Array(nlit).fill(0);
        const lens = completeLengths(litSyms.length, 15, rand);
        litSyms.forEach((sym, i) => {
          litLens[sym] = lens[i];
        });
        const distLens = new Array(ndist).fill(0);
        if (distSyms.length === 1) distLens[distSyms[0]] = 1;
        else if (distSyms.length > 1) {
          const dl = completeLengths(distSyms.length, 15, rand);
          distSyms.forEach((sym, i) => {
            distLens[sym] = dl[i];
          });
        }
        const final = b === blocks - 1;
        const codes = writeDynamicHeader(w, final, { litLens, distLens }, rand);
        const before = produced;
        produced = writeSymbols(w, { ...codes, litLens, distLens }, 20 + rand(200), produced, rand);
        parts.push(new Uint8Array(produced - before));
      }
      const raw = w.finish();
      const data = new Uint8Array(inflateRawSync(raw));
      expect(data.length).toBe(produced);
      adler = adler32(adler, data, 0, data.length);
      expectSameAsZlib(zlibWrap(raw, adler), [1, 5, 1 << 20]);
    }
  });

  /** A raw stream of one dynamic block with the header given and the symbols written by `body`. */
  function dynamic(
    header: Parameters<typeof writeDynamicHeader>[2],
    body: (w: BitWriter, codes: { lit: number[]; dist: number[] }) => void = (w, c) =>
      w.code(c.lit[256], header.litLens[256]),
  ): Uint8Array {
    const w = new BitWriter();
    const codes = writeDynamicHeader(w, true, header, prng(5));
    body(w, codes);
    return w.finish();
  }

  /** Asserts zlib refuses `raw` and so does the inflater, at every split, with a message matching `why`. */
  function expectRefused(raw: Uint8Array, why: RegExp, declared = 100) {
    expect(() => inflateRawSync(raw)).toThrow();
    expect(() => inflateRawSync(raw)).not.toThrow('unexpected end of file');
    const stream = zlibWrap(raw, 1);
    for (const chunk of [1, 3, 1 << 20]) expect(refusal(stream, declared, chunk)).toMatch(why);
    // Refused when the input ends right after the damage too (the end of a pack), never "wants more input".
    expect(failure(stream.subarray(0, stream.length - 4), declared)).toMatch(why);
  }

  /** Asserts zlib accepts `raw` and the inflater gives the same bytes, at every split. */
  function expectAccepted(raw: Uint8Array, chunks = [1, 3, 1 << 20]) {
    const data = new Uint8Array(inflateRawSync(raw));
    expectSameAsZlib(zlibWrap(raw, adler32(1, data, 0, data.length)), chunks);
    return data;
  }

  const lits = (n: number, len: number, extra: [number, number][] = []) => {
    const l = new Array(n).fill(0);
    for (const [sym, v] of extra) l[sym] = v;
    return l.map((v, i) => (i < 256 && v === 0 ? len : v));
  };
  // 256 literals of 9 bits, 256 (end of block) and 257 of 2 bits: a complete code (256/512 + 2/4 = 1).
  const litLens = lits(258, 9, [
    [256, 2],
    [257, 2],
  ]);
  const distLens = [1, 1];

  it('accepts the edge codes zlib accepts: one code of one bit, no distance code at all', () => {
    expect(expectAccepted(dynamic({ litLens, distLens }))).toEqual(new Uint8Array(0));
    // Only an end-of-block code, of one bit (an incomplete code zlib allows), and one distance code of one bit.
    const only256 = new Array(257).fill(0);
    only256[256] = 1;
    expect(expectAccepted(dynamic({ litLens: only256, distLens: [1] }))).toEqual(new Uint8Array(0));
    expect(expectAccepted(dynamic({ litLens: only256, distLens: [0] }))).toEqual(new Uint8Array(0));
    // Its missing half (the bit 1) is an invalid code, whatever the previous block's table held there.
    const after = new BitWriter();
    const first = writeDynamicHeader(after, false, { litLens, distLens }, prng(3));
    after.code(first.lit[200], litLens[200]).code(first.lit[256], litLens[256]);
    writeDynamicHeader(after, true, { litLens: only256, distLens: [1] }, prng(3));
    after.bits(1, 1);
    expectRefused(after.finish(), /invalid literal\/length code/);
    // Literals only, with no distance code: fine until a match needs one.
    const noDist = dynamic({ litLens, distLens: [0] }, (w, c) => {
      w.code(c.lit[65], 9).code(c.lit[66], 9).code(c.lit[256], 2);
    });
    expect(expectAccepted(noDist)).toEqual(new Uint8Array([65, 66]));
    const matchNoDist = dynamic({ litLens, distLens: [0] }, (w, c) => {
      w.code(c.lit[65], 9).code(c.lit[257], 2).bits(0, 1).code(c.lit[256], 2);
    });
    expectRefused(matchNoDist, /invalid distance code/);
    // One distance code of one bit: its missing half is an invalid code.
    const oneDist = (bit: number) =>
      dynamic({ litLens, distLens: [1] }, (w, c) => {
        w.code(c.lit[65], 9).code(c.lit[257], 2).bits(bit, 1).code(c.lit[256], 2);
      });
    expect(expectAccepted(oneDist(0))).toEqual(new Uint8Array([65, 65, 65, 65]));
    expectRefused(oneDist(1), /invalid distance code/);
  });

  it('refuses every broken dynamic header zlib refuses', () => {
    expectRefused(dynamic({ litLens: [...litLens, ...new Array(29).fill(0)], distLens }), /too many/);
    expectRefused(dynamic({ litLens, distLens: [...distLens, ...new Array(29).fill(0)] }), /too many/);
    // The code length code: over-subscribed, incomplete (even a single code of one bit).
    const symbols = (lens: number[]) => lens.map((l): [number, number] => [l, 0]);
    const all = [...litLens, ...distLens];
    const clens = new Array(19).fill(0);
    clens[1] = 2;
    clens[8] = 2;
    clens[9] = 2;
    expectRefused(dynamic({ litLens, distLens, symbols: symbols(all), codelenLens: clens }), /lengths code/);
    const over = [...clens];
    over[0] = 1;
    expectRefused(dynamic({ litLens, distLens, symbols: symbols(all), codelenLens: over }), /lengths code/);
    const single = new Array(19).fill(0);
    single[8] = 1;
    expectRefused(
      dynamic({
        litLens: new Array(257).fill(8),
        distLens: [8],
        symbols: symbols(new Array(258).fill(8)),
        codelenLens: single,
      }),
      /lengths code/,
    );
    // Repeat codes: 16 with nothing before it, and repeats that run past the last length.
    const rep = (syms: [number, number][]) => {
      const c = new Array(19).fill(0);
      for (const s of [0, 1, 8, 9, 16, 17, 18]) c[s] = 3;
      c[2] = 3;
      return dynamic({ litLens, distLens, symbols: syms, codelenLens: c });
    };
    expectRefused(rep([[16, 0], ...symbols(all)]), /no previous length/);
    expectRefused(rep([...symbols(all.slice(0, -1)), [16, 0]]), /past the end/);
    expectRefused(rep([...symbols(all.slice(0, -2)), [17, 0]]), /past the end/);
    expectRefused(rep([...symbols(all.slice(0, -10)), [18, 0]]), /past the end/);
    // The same repeats that end exactly at the last length are fine.
    const repD = (d: number[], syms: [number, number][]) => {
      const c = new Array(19).fill(0);
      for (const x of [0, 1, 2, 8, 9, 16, 17, 18]) c[x] = 3;
      return dynamic({ litLens, distLens: d, symbols: syms, codelenLens: c });
    };
    expectAccepted(repD([2, 2, 2, 2], [...symbols(litLens), [2, 0], [16, 0]]));
    expectAccepted(repD([1, 1, 0, 0, 0], [...symbols([...litLens, 1, 1]), [17, 0]]));
    expectAccepted(repD([1, 1, ...new Array(11).fill(0)], [...symbols([...litLens, 1, 1]), [18, 0]]));
    // No end-of-block code; over-subscribed and incomplete literal/length and distance codes.
    const no256 = [...litLens];
    no256[256] = 0;
    no256[258 - 1] = 7;
    expectRefused(dynamic({ litLens: no256, distLens }), /end-of-block/);
    const litOver = [...litLens];
    litOver[0] = 8;
    expectRefused(dynamic({ litLens: litOver, distLens }), /literal\/length code/);
    const litShort = [...litLens];
    litShort[257] = 9;
    expectRefused(dynamic({ litLens: litShort, distLens }), /literal\/length code/);
    const litOne = new Array(257).fill(0);
    litOne[256] = 2;
    expectRefused(dynamic({ litLens: litOne, distLens }), /literal\/length code/);
    expectRefused(dynamic({ litLens, distLens: [1, 1, 1] }), /distance code/);
    expectRefused(dynamic({ litLens, distLens: [1, 2] }), /distance code/);
    expectRefused(dynamic({ litLens, distLens: [2] }), /distance code/);
    // A code length code with no code at all: every length it could send is missing, which zlib finds later.
    const noCodes = new Array(19).fill(0);
    const zeros = dynamic({ litLens, distLens, symbols: [], codelenLens: noCodes }, (w) => w.bits(0, 300));
    expectRefused(zeros, /lengths code/);
  });

  /** A raw stream of one fixed block (BTYPE 1) with the symbols written by `body`. */
  const fixed = (body: (w: BitWriter, lit: number[], dist: number[]) => void) => {
    const w = new BitWriter().bits(1, 1).bits(1, 2);
    body(w, canonicalCodes(FIXED_LIT_LENS), canonicalCodes(FIXED_DIST_LENS));
    return w.finish();
  };

  it('refuses matches farther back than the output, and the unused codes of the fixed block', () => {
    const L = FIXED_LIT_LENS;
    const near = (d: number) =>
      fixed((w, lit, dist) => {
        for (const c of [97, 98, 99]) w.code(lit[c], L[c]);
        w.code(lit[257], 7).code(dist[d], 5).code(lit[256], 7);
      });
    expect(expectAccepted(near(2))).toEqual(new TextEncoder().encode('abcabc'));
    expectRefused(near(3), /too far back/);
    const first = fixed((w, lit, dist) => {
      w.code(lit[257], 7).code(dist[0], 5).code(lit[256], 7);
    });
    expectRefused(first, /too far back/);
    for (const sym of [286, 287]) {
      const bad = fixed((w, lit) => {
        w.code(lit[97], 8).code(lit[sym], 8).code(lit[256], 7);
      });
      expectRefused(bad, /invalid literal\/length code/);
    }
    for (const d of [30, 31]) {
      const bad = fixed((w, lit, dist) => {
        w.code(lit[97], 8).code(lit[257], 7).code(dist[d], 5).code(lit[256], 7);
      });
      expectRefused(bad, /invalid distance code/);
    }
    // Fixed blocks of 19 bits each (header, one 9-bit literal, end of block): their headers fall at every bit
    // position of a byte, so a feed byte by byte cuts a header at each of its bits.
    const run = new BitWriter();
    for (let i = 0; i < 16; i++) {
      run.bits(i === 15 ? 1 : 0, 1).bits(1, 2);
      run.code(canonicalCodes(L)[200 + i], 9).code(canonicalCodes(L)[256], 7);
    }
    expect(expectAccepted(run.finish())).toEqual(Uint8Array.from({ length: 16 }, (_, i) => 200 + i));
    // A long stream of matches at the largest distance with the most extra bits, through the fast path.
    const far = fixed((w, lit, dist) => {
      for (let i = 0; i < 32_800; i++) w.code(lit[i % 251], L[i % 251]);
      for (let i = 0; i < 40; i++)
        w.code(lit[284], 8)
          .bits(i % 31, 5)
          .code(dist[29], 5)
          .bits(8190 - i, 13);
      w.code(lit[285], 8).code(dist[29], 5).bits(0, 13).code(lit[256], 7);
    });
    expectAccepted(far, [61, 1 << 20]);
  });

  it('refuses an invalid code that ends exactly where the input ends, rather than asking for more', () => {
    // Header (3 bits), five 9-bit literals and the unused code 286 (8 bits): 56 bits, seven whole bytes.
    const L = FIXED_LIT_LENS;
    const aligned = fixed((w, lit) => {
      for (let c = 200; c < 205; c++) w.code(lit[c], L[c]);
      w.code(lit[286], L[286]);
    });
    expect(aligned.length).toBe(7);
    expectRefused(aligned, /invalid literal\/length code/);
  });

  it('builds its tables as the module loads: a fresh copy inflates as zlib does, refuses the unused codes', async () => {
    // A fresh copy of the module: its tables (bases, extra bits, the fixed codes) are built as it loads, and
    // `npm run mutate` switches a mutant on only once the tests run, long after the copy the others use loaded.
    vi.resetModules();
    const fresh = await import('./inflate.ts');
    const data = new Uint8Array(Buffer.concat([text(size(20_000, 3000)), noise(size(2000, 300), 3)]));
    for (const options of [{ level: 6 }, { level: 6, strategy: constants.Z_FIXED }]) {
      const stream = new Uint8Array(deflateSync(data, options));
      const r = inflateChunked(stream, data.length, 1 << 20, 0, new fresh.Inflater());
      expect(r.consumed).toBe(stream.length);
      expect(Buffer.from(r.data).equals(Buffer.from(data))).toBe(true);
    }
    const L = FIXED_LIT_LENS;
    const unused = [
      ...[286, 287].map((sym) => fixed((w, lit) => w.code(lit[97], 8).code(lit[sym], L[sym]))),
      ...[30, 31].map((d) => fixed((w, lit, dist) => w.code(lit[97], 8).code(lit[257], 7).code(dist[d], 5))),
    ];
    for (const [i, raw] of unused.entries()) {
      const stream = zlibWrap(raw, 1);
      expect(() => inflateChunked(stream, 100, 1 << 20, 0, new fresh.Inflater())).toThrow(
        i < 2 ? /invalid literal\/length code/ : /invalid distance code/,
      );
    }
  });

  it('decodes 15-bit length and distance codes with the most extra bits at every bit position, as zlib does', () => {
    // A match of a 15-bit length code with 5 extra bits and a 15-bit distance code with 12 or 13 takes up to
    // 48 bits, more than one load of the bit buffer holds: the fast path loads again before the distance
    // code and, at some bit positions, for its extra bits. Literals of 9 bits between matches shift them.
    const steps: [number, number][] = Array.from({ length: 12 }, (_, k) => [257 + k, 3 + k]);
    // 1/2 (literals) + 1/4 (end of block) + 1/8 … 1/2^14 + 2/2^15: a complete code.
    const longLit = lits(285, 9, [[256, 2], ...steps, [283, 15], [284, 15]]);
    // 1/2 … 1/2^13 + 4/2^15: distances 0–12 short, the far ones (26–29) 15 bits long.
    const longDist = new Array(30).fill(0).map((_, d) => (d <= 12 ? d + 1 : d >= 26 ? 15 : 0));
    const rand = prng(17);
    const raw = dynamic({ litLens: longLit, distLens: longDist }, (w, c) => {
      let o = 0;
      for (; o < 24_576; o++) w.code(c.lit[o % 256], 9);
      for (let m = 0; m < size(400, 120); m++) {
        for (let k = rand(3); k > 0; k--, o++) w.code(c.lit[rand(256)], 9);
        const ls = 283 + rand(2);
        const lx = rand(31);
        w.code(c.lit[ls], 15).bits(lx, 5);
        o += (ls === 283 ? 195 : 227) + lx;
        const d = 26 + rand(3); // bases 8193, 12289 and 16385, with 12, 12 and 13 extra bits
        const base = [8193, 12289, 16385][d - 26];
        const dx = d === 28 ? 13 : 12;
        w.code(c.dist[d], 15).bits(rand(1 << dx), dx);
        expect(base + (1 << dx) - 1).toBeLessThanOrEqual(24_576);
      }
      w.code(c.lit[256], 2);
    });
    expectAccepted(raw, [61, 1 << 20]);
  });

  it('refuses a stored block whose length and its complement disagree, and a block of type 3', () => {
    const stored = (len: number, nlen: number, body: number[]) =>
      new BitWriter()
        .bits(1, 1)
        .bits(0, 2)
        .raw([len & 0xff, len >>> 8, nlen & 0xff, nlen >>> 8])
        .raw(body)
        .finish();
    expect(expectAccepted(stored(3, 0xfffc, [1, 2, 3]))).toEqual(new Uint8Array([1, 2, 3]));
    expectRefused(stored(3, 0xfffd, [1, 2, 3]), /stored block length/);
    expectRefused(stored(3, 0x7ffc, [1, 2, 3]), /stored block length/);
    expectRefused(stored(0x103, 0xfffc, [1, 2, 3]), /stored block length/);
    expectRefused(stored(0, 0x0001, []), /stored block length/);
    expectRefused(new BitWriter().bits(1, 1).bits(3, 2).bits(0, 13).finish(), /invalid block type/);
    // A stored block after a Huffman block that ends mid-byte: its bits up to the byte boundary are skipped.
    const L = FIXED_LIT_LENS;
    const lit = canonicalCodes(L);
    const mixed = new BitWriter().bits(0, 1).bits(1, 2).code(lit[120], L[120]).code(lit[256], 7);
    mixed.bits(1, 1).bits(0, 2).raw([2, 0, 0xfd, 0xff]).raw([7, 8]);
    expect(expectAccepted(mixed.finish())).toEqual(new Uint8Array([120, 7, 8]));
  });
});

describe('adler32', () => {
  it('matches the RFC 1950 value of "Wikipedia"', () => {
    const d = new TextEncoder().encode('Wikipedia');
    expect(adler32(1, d, 0, d.length)).toBe(0x11e60398);
  });

  it('stays exact over long inputs of 0xff', () => {
    // Reference computed by the definition, with a modulo per byte.
    const d = new Uint8Array(size(100_000, 8000)).fill(0xff);
    let a = 1;
    let b = 0;
    for (const x of d) {
      a = (a + x) % 65521;
      b = (b + a) % 65521;
    }
    expect(adler32(1, d, 0, d.length)).toBe(((b << 16) | a) >>> 0);
  });
});
