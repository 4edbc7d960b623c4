import { describe, expect, it } from 'vitest';
import { show } from './showName.ts';

describe('show', () => {
  it('quotes a name and escapes its quotes', () => {
    expect(show('src/main.ts')).toBe('"src/main.ts"');
    expect(show('say "hi"')).toBe('"say \\"hi\\""');
    expect(show('')).toBe('""');
  });

  it('escapes control and invisible characters as \\uXXXX, at both ends of each range', () => {
    const escaped = [
      '\u0000',
      '\u0001',
      '\u001f',
      '\u007f',
      '\u200b',
      '\u200f',
      '\u202a',
      '\u202e',
      '\u2060',
      '\u206f',
      '\ufeff',
    ];
    for (const c of escaped) {
      const code = c.charCodeAt(0).toString(16).padStart(4, '0');
      expect(show(`a${c}b`)).toBe(`"a\\u${code}b"`);
    }
    expect(show('\u0001\n')).toBe('"\\u0001\\u000a"');
    expect(show('x\u202ey')).toBe('"x\\u202ey"');
  });

  it('leaves printable characters, and those just outside the ranges, as they are', () => {
    for (const c of [
      ' ',
      '~',
      '\u0080',
      'é',
      '\u200a',
      '\u2010',
      '\u2029',
      '\u202f',
      '\u205f',
      '\u2070',
      '\ufefe',
      '\uff00',
      '日',
      '😀',
    ]) {
      expect(show(c)).toBe(`"${c}"`);
    }
  });
});
