import { describe, expect, it } from 'vitest';
import { isObjectIdHex, isSha1Hex, isSha1HexAnyCase, ZERO_OID } from './objectId.ts';

const SHA1 = 'a94a8fe5ccb19ba61c4c0873d391e987982fbbd3';
const SHA256 = '2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9824';

describe('object ids', () => {
  it('a SHA-1 id as git writes it: 40 lowercase hex digits', () => {
    expect(isSha1Hex(SHA1)).toBe(true);
    expect(isSha1Hex(ZERO_OID)).toBe(true);
    for (const bad of [
      SHA1.toUpperCase(),
      SHA1.slice(1),
      `${SHA1}0`,
      `${SHA1}\n`,
      SHA256,
      `g${SHA1.slice(1)}`,
      '',
    ])
      expect(isSha1Hex(bad), bad).toBe(false);
  });

  it('as a person may type one: upper case too, still 40 digits', () => {
    expect(isSha1HexAnyCase(SHA1.toUpperCase())).toBe(true);
    expect(isSha1HexAnyCase(SHA1)).toBe(true);
    expect(isSha1HexAnyCase(SHA256)).toBe(false);
    expect(isSha1HexAnyCase(SHA1.slice(2))).toBe(false);
  });

  it('on the wire: 40 or 64 lowercase digits, nothing between', () => {
    expect(isObjectIdHex(SHA1)).toBe(true);
    expect(isObjectIdHex(SHA256)).toBe(true);
    for (const bad of [SHA256.slice(1), `${SHA1}0`, SHA1.toUpperCase(), `${SHA256}0`])
      expect(isObjectIdHex(bad), bad).toBe(false);
  });
});
