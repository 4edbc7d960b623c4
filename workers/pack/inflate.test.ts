import { constants, deflateRawSync, deflateSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { PackError } from './errors.ts';
import { adler32, INFLATE_DONE, INFLATE_NEED_INPUT, INFLATE_OUTPUT_FULL, Inflater } from './inflate.ts';
import { noise } from './testing/gitPacks.ts';

const text = (n: number) => {
  const words = ['tree ', 'blob ', 'parent ', '100644 ', 'author ', '\n', 'x', '\0'];
  let s = '';
  for (let i = 0; s.length < n; i++) s += words[(i * 7919) % words.length] + String(i % 97);
  return new TextEncoder().encode(s.slice(0, n));
};

/** Inflates `stream` placed at `at` in a larger buffer, feeding `chunk` bytes at a time. */
function inflateChunked(stream: Uint8Array, size: number, chunk: number, window = 0) {
  const at = 5;
  const src = new Uint8Array(at + stream.length + 30).fill(0xee);
  src.set(stream, at);
  const inflater = new Inflater();
  inflater.start(src, at, new Uint8Array(window || size), size);
  const parts: Uint8Array[] = [];
  let end = at;
  for (;;) {
    const status = inflater.run(src, end);
    if (status === INFLATE_DONE) break;
    if (status === INFLATE_NEED_INPUT) {
      if (end >= src.length) throw new Error('wanted more input than the stream has');
      end = Math.min(src.length, end + chunk);
    } else {
      expect(status).toBe(INFLATE_OUTPUT_FULL);
      parts.push(inflater.out.slice(inflater.outStart, inflater.outPos));
      inflater.slide();
    }
  }
  parts.push(inflater.out.slice(inflater.outStart, inflater.outPos));
  return { data: new Uint8Array(Buffer.concat(parts)), consumed: inflater.inputEnd - at };
}

describe('Inflater', () => {
  const inputs = {
    empty: new Uint8Array(0),
    tiny: text(5),
    text: text(50_000),
    noise: noise(70_000, 1),
    runs: new Uint8Array(100_000).fill(97),
  };
  const settings = [
    { level: 6 },
    { level: 1 },
    { level: 9 },
    { level: 0 }, // stored blocks
    { level: 6, strategy: constants.Z_FIXED },
    { level: 6, strategy: constants.Z_HUFFMAN_ONLY },
    { level: 6, strategy: constants.Z_RLE },
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
    const data = new Uint8Array(Buffer.concat([text(200_000), noise(150_000, 4), text(100_000)]));
    for (const options of settings) {
      const stream = new Uint8Array(deflateSync(data, options));
      const r = inflateChunked(stream, data.length, 10_000, 65536);
      expect(r.consumed).toBe(stream.length);
      expect(Buffer.from(r.data).equals(Buffer.from(data))).toBe(true);
    }
  });

  it('accepts sync-flush markers (empty stored blocks) between blocks, as some servers write them', () => {
    const one = text(20_000);
    const two = noise(5000, 2);
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
    for (let i = 0; i < 50; i++) {
      const data = text(i * 37);
      const stream = new Uint8Array(deflateSync(data, { level: i % 10 }));
      inflater.start(stream, 0, new Uint8Array(data.length), data.length);
      expect(inflater.run(stream, stream.length)).toBe(INFLATE_DONE);
      expect(inflater.out).toEqual(data);
    }
  });

  function failure(stream: Uint8Array, size: number): string {
    const inflater = new Inflater();
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
    const data = text(3000);
    const stream = new Uint8Array(deflateSync(data));
    for (let cut = 0; cut < stream.length; cut++) {
      expect(failure(stream.subarray(0, cut), data.length)).toBe(`status ${INFLATE_NEED_INPUT}`);
    }
  });

  it('never throws anything but a PackError on damaged input', () => {
    const data = text(5000);
    const stream = new Uint8Array(deflateSync(data));
    for (let i = 0; i < 2000; i++) {
      const bad = stream.slice();
      bad[(i * 7) % bad.length] ^= 1 << (i % 8);
      bad[(i * 13) % bad.length] ^= 1 << ((i * 3) % 8);
      failure(bad, data.length);
    }
  });
});

describe('adler32', () => {
  it('matches the RFC 1950 value of "Wikipedia"', () => {
    const d = new TextEncoder().encode('Wikipedia');
    expect(adler32(1, d, 0, d.length)).toBe(0x11e60398);
  });

  it('stays exact over long inputs of 0xff', () => {
    // Reference computed by the definition, with a modulo per byte.
    const d = new Uint8Array(100_000).fill(0xff);
    let a = 1;
    let b = 0;
    for (const x of d) {
      a = (a + x) % 65521;
      b = (b + a) % 65521;
    }
    expect(adler32(1, d, 0, d.length)).toBe(((b << 16) | a) >>> 0);
  });
});
