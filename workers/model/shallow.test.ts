import { describe, expect, it } from 'vitest';
import { parseShallow, serializeShallow } from './shallow.ts';

const A = 'a'.repeat(40);
const B = 'b'.repeat(40);

describe('the shallow file', () => {
  it('one id a line, newline-terminated, in the order given', () => {
    expect(serializeShallow([B, A])).toBe(`${B}\n${A}\n`);
    expect(parseShallow(serializeShallow([B, A]))).toEqual([B, A]);
  });

  it('reads only the lines that are commit ids', () => {
    expect(parseShallow(`${A}\n\nnot an id\n${B.toUpperCase()}\n${B}`)).toEqual([A, B]);
    expect(parseShallow('')).toEqual([]);
  });
});
