/**
 * Test support, Node only: ArrayBuffer.prototype.transferToFixedLength (ES2024) for Node 20, which lacks
 * it, so that the paths the engine takes where the platform has it (Chromium 114 on) run under Vitest.
 * Never imported by runtime code.
 *
 * As the spec's ArrayBufferCopyAndDetach with fixed-length: the new length defaults to the old byteLength
 * and must be an index (RangeError), a detached source is a TypeError, the result is a fixed-length buffer
 * holding the old bytes up to the new length and zeros after, and the source is detached (its byteLength and
 * maxByteLength read 0, and no view can be made on it). structuredClone's transfer is Node 20's way to detach.
 * A script of those cases (lengths 6, 2.9, none, NaN, '1', -1, 2^53; a detached and a shared source) gave the
 * same results here as under Deno 2.9.6's native one (V8 15.0).
 */

type WithTransfer = ArrayBuffer & { transferToFixedLength?: (newLength?: number) => ArrayBuffer };

function isDetached(buffer: ArrayBuffer): boolean {
  try {
    new Uint8Array(buffer);
    return false;
  } catch {
    return true;
  }
}

function transferToFixedLength(this: ArrayBuffer, newLength?: number): ArrayBuffer {
  if (!(this instanceof ArrayBuffer)) {
    throw new TypeError('ArrayBuffer.prototype.transferToFixedLength called on something not an ArrayBuffer');
  }
  let length = this.byteLength;
  if (newLength !== undefined) {
    const n = Math.trunc(Number(newLength)) || 0;
    if (n < 0 || n > Number.MAX_SAFE_INTEGER)
      throw new RangeError(`Invalid array buffer length ${newLength}`);
    length = n;
  }
  if (isDetached(this)) throw new TypeError('Cannot transfer a detached ArrayBuffer');
  const result = new ArrayBuffer(length);
  new Uint8Array(result).set(new Uint8Array(this, 0, Math.min(length, this.byteLength)));
  structuredClone(this, { transfer: [this] });
  return result;
}

/** Runs a synchronous `body` with ArrayBuffer.prototype.transferToFixedLength present, then puts the prototype back. */
export function withTransferToFixedLength<T>(body: () => T): T {
  const proto = ArrayBuffer.prototype as WithTransfer;
  const had = Object.getOwnPropertyDescriptor(proto, 'transferToFixedLength');
  if (!had) {
    Object.defineProperty(proto, 'transferToFixedLength', {
      value: transferToFixedLength,
      writable: true,
      configurable: true,
    });
  }
  try {
    return body();
  } finally {
    if (!had) Reflect.deleteProperty(proto, 'transferToFixedLength');
  }
}
