import { inflateSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { deflate } from './deflate.ts';
import { INFLATE_DONE, Inflater } from './inflate.ts';
import { noise } from './testing/gitPacks.ts';

describe('deflate', () => {
  it('writes a zlib stream (RFC 1950) that zlib and the pack inflater read back whole', async () => {
    for (const data of [new Uint8Array(0), new TextEncoder().encode('tree 0\0'), noise(20_000, 3)]) {
      const stream = await deflate(data);
      expect(new Uint8Array(inflateSync(stream))).toEqual(data);
      const inflater = new Inflater();
      inflater.start(stream, 0, new Uint8Array(data.length), data.length);
      expect(inflater.run(stream, stream.length)).toBe(INFLATE_DONE);
      expect(inflater.inputEnd).toBe(stream.length);
      expect(inflater.out).toEqual(data);
    }
  });
});
