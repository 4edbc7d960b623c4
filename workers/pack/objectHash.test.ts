import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { createWasmSha1, JsSha1, ObjectHasher, oidFromHex, sha1, toHex } from './objectHash.ts';
import { noise } from './testing/gitPacks.ts';

describe('SHA-1', () => {
  it('pure TypeScript matches node:crypto at every padding boundary and across updates', () => {
    for (const n of [0, 1, 55, 56, 57, 63, 64, 65, 119, 120, 128, 1000, 100_000]) {
      const data = noise(n, n + 1);
      const expected = createHash('sha1').update(data).digest('hex');
      expect(toHex(sha1(data))).toBe(expected);
      const h = new JsSha1();
      for (let i = 0; i < n; i += 61) h.update(data.subarray(i, i + 61));
      const out = new Uint8Array(20);
      h.digestInto(out, 0);
      expect(toHex(out)).toBe(expected);
    }
  });

  it('hashes objects as git does', async () => {
    const hasher = new ObjectHasher(await createWasmSha1());
    const out = new Uint8Array(40);
    // `git hash-object` of "hello\n" and of the empty blob, and the empty tree.
    hasher.hash('blob', new TextEncoder().encode('hello\n'), out, 0);
    expect(toHex(out, 0, 20)).toBe('ce013625030ba8dba906f756967f9e9ca394464a');
    hasher.hash('blob', new Uint8Array(0), out, 20);
    expect(toHex(out, 20, 20)).toBe('e69de29bb2d1d6434b8b29ae775ad8c2e48c5391');
    const js = new ObjectHasher(new JsSha1());
    js.hash('tree', new Uint8Array(0), out, 0);
    expect(toHex(out, 0, 20)).toBe('4b825dc642cb6eb9a060e54bf8d69288fbee4904');
  });

  it('converts ids to and from hex', () => {
    const hex = 'ce013625030ba8dba906f756967f9e9ca394464a';
    expect(toHex(oidFromHex(hex))).toBe(hex);
    expect(toHex(oidFromHex(hex.toUpperCase()))).toBe(hex);
    expect(() => oidFromHex('ce01')).toThrow(TypeError);
  });
});
