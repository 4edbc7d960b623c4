import { describe, expect, it } from 'vitest';
import { crc32, crc32Bytewise } from './crc32.ts';
import { noise } from './testing/gitPacks.ts';

describe('crc32', () => {
  it('matches the standard check value', () => {
    // CRC-32/ISO-HDLC of "123456789".
    expect(crc32(new TextEncoder().encode('123456789'))).toBe(0xcbf43926);
    expect(crc32(new Uint8Array(0))).toBe(0);
  });

  it('agrees with the byte-at-a-time loop for every length and alignment', () => {
    const data = noise(300, 11);
    for (let start = 0; start < 9; start++) {
      for (let end = start; end <= data.length; end += 7) {
        expect(crc32(data, start, end)).toBe(crc32Bytewise(data, start, end));
      }
    }
  });

  it('continues across pieces', () => {
    const data = noise(1000, 5);
    expect(crc32(data, 500, 1000, crc32(data, 0, 500))).toBe(crc32(data));
  });
});
