import { createHash } from 'node:crypto';
import { tmpdir } from 'node:os';
import { describe, expect, it } from 'vitest';
import {
  createJsSha1,
  createWasmSha1,
  type GitObjectType,
  JsSha1,
  ObjectHasher,
  oidFromHex,
  sha1,
  toHex,
} from './objectHash.ts';
import { makeGit, noise } from './testing/gitPacks.ts';

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

  it('hashes an object given in pieces as `git hash-object` does, with either SHA-1, at any offset', async () => {
    const git = makeGit(tmpdir());
    const objects: [GitObjectType, Uint8Array][] = [
      ['blob', noise(12_345, 9)],
      ['commit', new TextEncoder().encode(`tree ${'4b825dc642cb6eb9a060e54bf8d69288fbee4904'}\n\nmessage\n`)],
      [
        'tag',
        new TextEncoder().encode('object 4b825dc642cb6eb9a060e54bf8d69288fbee4904\ntype tree\ntag t\n\nx\n'),
      ],
      ['tree', new Uint8Array(0)],
    ];
    for (const factory of [createWasmSha1, createJsSha1]) {
      const hasher = new ObjectHasher(await factory());
      for (const [type, data] of objects) {
        const expected = git(['hash-object', '-t', type, '--literally', '--stdin'], { input: data })
          .toString()
          .trim();
        const out = new Uint8Array(31).fill(0xaa);
        hasher.begin(type, data.length);
        for (let i = 0; i < data.length; i += 1000) hasher.update(data.subarray(i, i + 1000));
        hasher.end(out, 7);
        expect(toHex(out, 7, 20)).toBe(expected);
        // Only the 20 bytes at the offset are written.
        expect([...out.subarray(0, 7), ...out.subarray(27)].every((b) => b === 0xaa)).toBe(true);
        hasher.hash(type, data, out, 3);
        expect(toHex(out, 3, 20)).toBe(expected);
      }
    }
  });

  it('starts over after each digest', () => {
    const h = new JsSha1();
    h.update(noise(100, 1));
    h.digestInto(new Uint8Array(20), 0);
    const out = new Uint8Array(20);
    h.digestInto(out, 0);
    expect(toHex(out)).toBe(createHash('sha1').update(new Uint8Array(0)).digest('hex'));
  });

  it('converts ids to and from hex', () => {
    const hex = 'ce013625030ba8dba906f756967f9e9ca394464a';
    expect(toHex(oidFromHex(hex))).toBe(hex);
    // From an offset to the end by default.
    expect(toHex(oidFromHex(hex), 18)).toBe('464a');
    expect(toHex(oidFromHex(hex), 1, 2)).toBe('0136');
    expect(() => oidFromHex(`${hex.slice(0, 39)}g`)).toThrow(/Not a SHA-1 object id: "ce01.*g"/);
    expect(toHex(oidFromHex(hex.toUpperCase()))).toBe(hex);
    expect(() => oidFromHex('ce01')).toThrow(TypeError);
  });
});
