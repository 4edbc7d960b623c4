import { expect } from 'vitest';

/**
 * Byte arrays compared as bytes. Vitest's `toEqual` walks a typed array element by element through its
 * generic equality: 34 s for one 2.5 MB Uint8Array on this 2-core machine (busy), against under 1 ms for
 * `Buffer.compare`, and the pack tests compare packs of megabytes. Only arrays of the same class are taken
 * here, so `toStrictEqual`'s check of the class stays vitest's own.
 */
function sameBytes(a: unknown, b: unknown): boolean | undefined {
  if (!ArrayBuffer.isView(a) || !ArrayBuffer.isView(b)) return undefined;
  if (a instanceof DataView || b instanceof DataView || a.constructor !== b.constructor) return undefined;
  if (a.byteLength !== b.byteLength) return false;
  const bytes = (v: ArrayBufferView) => Buffer.from(v.buffer, v.byteOffset, v.byteLength);
  return bytes(a).equals(bytes(b));
}

expect.addEqualityTesters([sameBytes]);
