import { describe, expect, it } from 'vitest';
import { comparePaths } from './pathOrder.ts';

const utf8 = (s: string) => Buffer.from(s, 'utf8');

describe('comparePaths', () => {
  // Each pair in git's order; JS's own comparison gets those past U+FFFF against U+E000-U+FFFF wrong.
  const ordered: [string, string][] = [
    ['a', 'b'],
    ['a', 'a/b'],
    ['a-b', 'a/b'],
    ['a/b', 'a0'],
    ['Z', 'a'],
    ['é', 'ü'],
    ['\u{e000}', '\u{1f600}'],
    ['\u{ff21}.txt', '\u{1f600}.txt'],
    ['x/\u{fffd}', 'x/\u{10000}'],
    ['\u{1f600}', '\u{1f601}'],
    ['\u{1f600}', '\u{1f600}a'],
    ['\u{7ff}', '\u{800}'],
  ];

  it.each(ordered)('%j before %j, as their UTF-8 bytes compare', (a, b) => {
    expect(Buffer.compare(utf8(a), utf8(b))).toBe(-1);
    expect(comparePaths(a, b)).toBeLessThan(0);
    expect(comparePaths(b, a)).toBeGreaterThan(0);
  });

  it('a path equals itself only', () => {
    for (const [a] of ordered) expect(comparePaths(a, a)).toBe(0);
    expect(comparePaths('', '')).toBe(0);
    expect(comparePaths('', 'a')).toBeLessThan(0);
  });

  it('sorts as Buffer.compare sorts the bytes, on random names from every plane', () => {
    const alphabet = ['a', '/', '-', 'é', '\u{e000}', '\u{ffff}', '\u{10000}', '\u{1f600}', '\u{10ffff}'];
    let seed = 7;
    const next = () => {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      return seed;
    };
    const names = Array.from({ length: 300 }, () =>
      Array.from({ length: 1 + (next() % 4) }, () => alphabet[next() % alphabet.length]).join(''),
    );
    const bytes = [...names].sort((a, b) => Buffer.compare(utf8(a), utf8(b)));
    expect([...names].sort(comparePaths)).toEqual(bytes);
  });
});
