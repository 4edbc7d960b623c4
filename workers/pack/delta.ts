// Git's delta format (gitformat-pack: "Deltified representation"): two size varints (base, result), then
// instructions: 1xxxxxxx copies from the base (offset and size bytes selected by the low 7 bits, size 0
// meaning 0x10000), 0xxxxxxx with x != 0 inserts the next x bytes, 0 is reserved.

import { objectTooLarge, PackError } from './errors.ts';
import { DEFAULT_PACK_LIMITS } from './packLimits.ts';

const DELTA_SIZE_MIN = 4;

function invalid(detail: string): PackError {
  return new PackError('PACK_DELTA_INVALID', `A delta in the pack is invalid: ${detail}.`);
}

/** Reads the size varint at `delta[pos]`; returns [value, next position]. */
function readSize(delta: Uint8Array, pos: number, what: string): [number, number] {
  let value = 0;
  let scale = 1;
  for (;;) {
    if (pos >= delta.length) throw invalid(`it ends inside the ${what} size`);
    const c = delta[pos++];
    value += (c & 0x7f) * scale;
    if (!(c & 0x80)) return [value, pos];
    scale *= 128;
    if (scale > 2 ** 49) throw invalid(`the ${what} size is too large`);
  }
}

/** The result size a delta declares, without applying it. */
export function deltaResultSize(delta: Uint8Array): number {
  const [, pos] = readSize(delta, 0, 'base');
  return readSize(delta, pos, 'result')[0];
}

/**
 * Applies `delta` to `base` and returns the new object's bytes. Throws PACK_DELTA_INVALID on any mistake,
 * and PACK_OBJECT_TOO_LARGE, before allocating anything, if the declared result exceeds `maxResultSize`.
 * `allocate` may supply the result buffer (of exactly the size asked), to recycle memory.
 */
export function applyDelta(
  base: Uint8Array,
  delta: Uint8Array,
  allocate: (size: number) => Uint8Array = (size) => new Uint8Array(size),
  maxResultSize: number = DEFAULT_PACK_LIMITS.maxObjectSize,
): Uint8Array {
  // git refuses any delta under DELTA_SIZE_MIN (delta.h: 4 bytes; patch-delta.c), even a well-formed one
  // making an empty object: a pack holding one would be stored here and refused by git's index-pack.
  if (delta.length < DELTA_SIZE_MIN)
    throw invalid(`it is ${delta.length} bytes long, under git's minimum of ${DELTA_SIZE_MIN}`);
  const [baseSize, p0] = readSize(delta, 0, 'base');
  const [resultSize, p1] = readSize(delta, p0, 'result');
  if (baseSize !== base.length) {
    throw invalid(`it expects a base of ${baseSize} bytes but the base has ${base.length}`);
  }
  if (resultSize > maxResultSize) throw objectTooLarge('A delta in the pack', resultSize, maxResultSize);
  const out = allocate(resultSize);
  const end = delta.length;
  let p = p1;
  let o = 0;
  while (p < end) {
    const op = delta[p++];
    if (op & 0x80) {
      // Bytes past the end read as undefined, which `|` turns into 0; checked after the instruction.
      let off = 0;
      let len = 0;
      if (op & 0x01) off = delta[p++];
      if (op & 0x02) off |= delta[p++] << 8;
      if (op & 0x04) off |= delta[p++] << 16;
      if (op & 0x08) off = (off | (delta[p++] << 24)) >>> 0;
      if (op & 0x10) len = delta[p++];
      if (op & 0x20) len |= delta[p++] << 8;
      if (op & 0x40) len |= delta[p++] << 16;
      if (len === 0) len = 0x10000;
      if (p > end) throw invalid('it ends inside a copy instruction');
      if (off + len > baseSize)
        throw invalid(`it copies bytes ${off}..${off + len} of a ${baseSize}-byte base`);
      if (o + len > resultSize)
        throw invalid(`it writes past the declared result size of ${resultSize} bytes`);
      if (len < 32) {
        for (let i = 0; i < len; i++) out[o + i] = base[off + i];
      } else {
        out.set(base.subarray(off, off + len), o);
      }
      o += len;
    } else if (op !== 0) {
      if (p + op > end) throw invalid('it ends inside an insert instruction');
      if (o + op > resultSize)
        throw invalid(`it writes past the declared result size of ${resultSize} bytes`);
      if (op < 32) {
        for (let i = 0; i < op; i++) out[o + i] = delta[p + i];
      } else {
        out.set(delta.subarray(p, p + op), o);
      }
      p += op;
      o += op;
    } else {
      throw invalid('it uses the reserved instruction 0');
    }
  }
  if (o !== resultSize) throw invalid(`it produces ${o} bytes where it declares ${resultSize}`);
  return out;
}
