import { describe, expect, it } from 'vitest';
import { applyDelta, deltaResultSize } from './delta.ts';
import { PackError } from './errors.ts';
import { noise } from './testing/gitPacks.ts';
import { makeDelta } from './testing/packBuilder.ts';

const enc = (s: string) => new TextEncoder().encode(s);
const dec = (b: Uint8Array) => new TextDecoder().decode(b);

function invalid(base: Uint8Array, delta: Uint8Array): string {
  try {
    applyDelta(base, delta);
  } catch (e) {
    expect(e).toBeInstanceOf(PackError);
    expect((e as PackError).code).toBe('PACK_DELTA_INVALID');
    return (e as PackError).message;
  }
  throw new Error('the delta applied');
}

describe('applyDelta', () => {
  const base = enc('The quick brown fox jumps over the lazy dog.');

  it('copies and inserts', () => {
    const delta = makeDelta(base.length, [{ copy: [0, 10] }, { insert: 'red' }, { copy: [15, 29] }]);
    expect(deltaResultSize(delta)).toBe(42);
    expect(dec(applyDelta(base, delta))).toBe('The quick red fox jumps over the lazy dog.');
  });

  it('reads multi-byte offsets and sizes, and size 0 as 0x10000', () => {
    const big = noise(0x30000, 9);
    const delta = makeDelta(big.length, [
      { copy: [0x12345, 0x10000] },
      { copy: [0x20001, 0x1ff] },
      { insert: big.subarray(5, 300) },
      { copy: [0, 1] },
    ]);
    // The first copy is encoded with three offset bytes and no size bytes at all.
    expect(delta[6]).toBe(0x87); // after two 3-byte size varints
    const out = applyDelta(big, delta);
    expect(out.length).toBe(0x10000 + 0x1ff + 295 + 1);
    expect(out.subarray(0, 0x10000)).toEqual(big.subarray(0x12345, 0x22345));
    expect(out.subarray(0x10000, 0x101ff)).toEqual(big.subarray(0x20001, 0x20200));
    expect(out.subarray(0x101ff, 0x101ff + 295)).toEqual(big.subarray(5, 300));
    expect(out[out.length - 1]).toBe(big[0]);
  });

  it('names the delta when its declared result is over the limit', () => {
    expect(() => applyDelta(base, makeDelta(base.length, [{ copy: [0, 9] }]), undefined, 8)).toThrow(
      /^A delta in the pack declares 9 bytes, more than the limit of 8 bytes \(maxObjectSize\)/,
    );
  });

  it('reads a copy size in three bytes', () => {
    const big = noise(0x20000, 3);
    const out = applyDelta(big, makeDelta(big.length, [{ copy: [0x100, 0x10001] }]));
    expect(out).toEqual(big.subarray(0x100, 0x10101));
  });

  it('handles an empty result and an empty base', () => {
    const large = new Uint8Array(20_000);
    expect(applyDelta(large, makeDelta(large.length, [])).length).toBe(0);
    expect(dec(applyDelta(new Uint8Array(0), makeDelta(0, [{ insert: 'new' }])))).toBe('new');
  });

  it('uses the buffer it is given', () => {
    const target = new Uint8Array(100);
    const out = applyDelta(base, makeDelta(base.length, [{ copy: [4, 5] }]), (n) => target.subarray(0, n));
    expect(out.buffer).toBe(target.buffer);
    expect(dec(out)).toBe('quick');
  });

  it('refuses a base of the wrong size', () => {
    expect(invalid(base, makeDelta(base.length + 1, [{ copy: [0, 3] }]))).toMatch(
      /expects a base of 45 bytes/,
    );
  });

  it('refuses a result of another size than declared', () => {
    expect(invalid(base, makeDelta(base.length, [{ copy: [0, 3] }], { resultSize: 4 }))).toMatch(
      /produces 3/,
    );
    expect(invalid(base, makeDelta(base.length, [{ copy: [0, 3] }], { resultSize: 2 }))).toMatch(
      /past the declared/,
    );
    expect(invalid(base, makeDelta(base.length, [{ insert: 'abc' }], { resultSize: 2 }))).toMatch(
      /past the declared/,
    );
  });

  it('refuses copies outside the base', () => {
    expect(invalid(base, makeDelta(base.length, [{ copy: [40, 10] }]))).toMatch(
      /copies bytes 40..50 of a 44-byte/,
    );
    expect(invalid(base, makeDelta(base.length, [{ copy: [0xffffffff, 1] }]))).toMatch(
      'A delta in the pack is invalid: it copies bytes 4294967295..4294967296 of a 44-byte base.',
    );
  });

  it('refuses the reserved instruction 0 and truncated instructions', () => {
    expect(invalid(base, makeDelta(base.length, [], { rawTail: [0], resultSize: 300 }))).toMatch(
      /reserved instruction 0/,
    );
    expect(invalid(base, makeDelta(base.length, [], { rawTail: [0x91, 1], resultSize: 1 }))).toMatch(
      /inside a copy/,
    );
    expect(invalid(base, makeDelta(base.length, [], { rawTail: [5, 1, 2], resultSize: 5 }))).toMatch(
      /inside an insert/,
    );
    expect(invalid(base, new Uint8Array([0x80, 0x80, 0x80, 0x80]))).toMatch(/inside the base size/);
    expect(invalid(base, new Uint8Array([base.length, 0x80, 0x80, 0x80]))).toMatch(/inside the result size/);
    expect(() => deltaResultSize(new Uint8Array([base.length, 0x80]))).toThrow(
      /it ends inside the result size/,
    );
  });

  it('refuses a delta under 4 bytes, as git does (patch-delta.c: DELTA_SIZE_MIN), even one git could read', () => {
    expect(invalid(base, makeDelta(base.length, []))).toMatch(/2 bytes long, under git's minimum of 4/);
    expect(invalid(new Uint8Array(0), makeDelta(0, [{ insert: 'a' }]).subarray(0, 3))).toMatch(/minimum/);
    // At the minimum, it applies.
    expect(dec(applyDelta(new Uint8Array(0), makeDelta(0, [{ insert: 'a' }])))).toBe('a');
  });

  it('reads a size of up to 8 varint bytes, as git reads any length, and refuses a 9th', () => {
    // 44 in 8 bytes: seven continuation bytes carry zeros.
    const padded = [0x80 | base.length, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x00];
    const delta = new Uint8Array([...padded, 5, 0x91, 4, 5]);
    expect(deltaResultSize(delta)).toBe(5);
    expect(dec(applyDelta(base, delta))).toBe('quick');
    expect(() =>
      deltaResultSize(new Uint8Array([0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x00])),
    ).toThrow(/base size is too large/);
  });
});
