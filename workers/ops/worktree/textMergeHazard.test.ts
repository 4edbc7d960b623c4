// textMergeHazard case by case: what isomorphic-git's text merge keeps (CRLF, no final newline, a BOM, any
// UTF-8) is no hazard; what it loses (a CR alone, U+2028, U+2029, bytes not UTF-8) is, in any one version.
// pull.test.ts shows each refusal where git's own pull stops or merges the bytes.
import { describe, expect, it } from 'vitest';
import { textMergeHazard } from './textMergeHazard.ts';

const bytes = (s: string, encoding: BufferEncoding = 'utf8') => new Uint8Array(Buffer.from(s, encoding));

describe('textMergeHazard', () => {
  it.each([
    ['plain text', 'a\nb\n'],
    ['CRLF lines', 'a\r\nb\r\n'],
    ['no newline at the end', 'a\nb'],
    ['a byte-order mark', '\ufeffa\n'],
    ['characters past U+FFFF', 'a \u{1f600}\n'],
    ['empty', ''],
  ])('%s: none', (_, text) => {
    expect(textMergeHazard([bytes(text), bytes(text), bytes(text)])).toBeNull();
  });

  it.each([
    ['a carriage return alone', 'a\rb\n'],
    ['a carriage return at the end', 'a\r'],
    ['a CR before a CRLF', 'a\r\r\n'],
    ['U+2028', 'a\u2028b\n'],
    ['U+2029', 'a\u2029b\n'],
  ])('%s, in any one version: line-ends', (_, odd) => {
    for (let at = 0; at < 3; at++) {
      const versions = ['x\n', 'y\n', 'z\n'].map((t, k) => bytes(k === at ? odd : t));
      expect(textMergeHazard(versions)).toBe('line-ends');
    }
  });

  it('bytes that are not UTF-8 (Latin-1, a lone continuation byte, a cut sequence): encoding', () => {
    for (const odd of [
      bytes('caf\xe9\n', 'latin1'),
      new Uint8Array([0x61, 0x80]),
      new Uint8Array([0xe2, 0x82]),
    ]) {
      expect(textMergeHazard([bytes('a\n'), odd])).toBe('encoding');
      expect(textMergeHazard([odd, bytes('a\n')])).toBe('encoding');
    }
  });

  it('a NUL in the first 8,000 bytes: binary, ahead of the other hazards; past them, text', () => {
    const nul = bytes('a\0b\n');
    expect(textMergeHazard([bytes('a\n'), bytes('caf\xe9\r', 'latin1'), nul])).toBe('binary');
    expect(textMergeHazard([bytes(`${'a'.repeat(7999)}\0`)])).toBe('binary');
    expect(textMergeHazard([bytes(`${'a'.repeat(8000)}\0`)])).toBeNull();
    expect(textMergeHazard([bytes('a\rb'), bytes('caf\xe9', 'latin1')])).toBe('encoding');
  });
});
