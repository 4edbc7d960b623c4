import { describe, expect, it } from 'vitest';
import { releaseBuffer } from './releaseBuffer.ts';

type Transferable = ArrayBuffer & { transferToFixedLength?: (length: number) => ArrayBuffer };
const proto = ArrayBuffer.prototype as Transferable;

/** Runs `body` on a platform whose ArrayBuffer has transferToFixedLength as given (or none). */
function withTransfer(
  transfer: ((this: ArrayBuffer, length: number) => ArrayBuffer) | undefined,
  body: () => void,
) {
  const had = Object.getOwnPropertyDescriptor(proto, 'transferToFixedLength');
  if (transfer)
    Object.defineProperty(proto, 'transferToFixedLength', { value: transfer, configurable: true });
  else Reflect.deleteProperty(proto, 'transferToFixedLength');
  try {
    body();
  } finally {
    if (had) Object.defineProperty(proto, 'transferToFixedLength', had);
    else Reflect.deleteProperty(proto, 'transferToFixedLength');
  }
}

describe('releaseBuffer', () => {
  it('detaches the buffer where the platform can, so every view of it reads as empty', () => {
    // structuredClone's transfer detaches as transferToFixedLength(0) would, on Node 20 which lacks it.
    const calls: number[] = [];
    withTransfer(
      function (this: ArrayBuffer, length: number) {
        calls.push(length);
        structuredClone(this, { transfer: [this] });
        return new ArrayBuffer(length);
      },
      () => {
        const view = new Uint8Array(new ArrayBuffer(4096), 16, 32).fill(1);
        const other = new Uint32Array(view.buffer);
        releaseBuffer(view);
        expect(calls).toEqual([0]);
        expect(view.length).toBe(0);
        expect(other.length).toBe(0);
        expect(view.buffer.byteLength).toBe(0);
      },
    );
  });

  it('shrinks a resizable buffer to nothing where it cannot detach', () => {
    withTransfer(undefined, () => {
      const buffer = new ArrayBuffer(1024, { maxByteLength: 1 << 20 });
      const view = new Uint8Array(buffer);
      const part = new Uint8Array(buffer, 0, 100);
      releaseBuffer(part);
      expect(buffer.byteLength).toBe(0);
      expect(view.length).toBe(0);
    });
  });

  it('leaves a plain buffer to the collector where it cannot detach', () => {
    withTransfer(undefined, () => {
      const view = new Uint8Array(64).fill(7);
      releaseBuffer(view);
      expect(view.length).toBe(64);
      expect(view[63]).toBe(7);
    });
  });
});
