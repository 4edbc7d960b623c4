import { describe, expect, it } from 'vitest';
import { grow, ReceivedBytes, reservedTable } from './growableBuffers.ts';
import { withTransferToFixedLength } from './testing/transferToFixedLength.ts';

const bufferOf = (view: ArrayBufferView) => view.buffer as ArrayBuffer;
const bytes = (length: number, from = 0) => Uint8Array.from({ length }, (_, i) => (from + i) & 0xff);

describe('ReceivedBytes', () => {
  it('receives into a buffer that reserves 4 GiB and grows in place by at least 256 KiB', () => {
    const received = new ReceivedBytes(10);
    const view = received.bytes;
    expect(bufferOf(view).resizable).toBe(true);
    expect(bufferOf(view).maxByteLength).toBe(2 ** 32);
    received.append(bytes(10));
    expect(bufferOf(view).byteLength).toBe(10);
    received.append(bytes(5, 10));
    // In place: the same view, now over 10 + 256 KiB.
    expect(received.bytes).toBe(view);
    expect(bufferOf(view).byteLength).toBe(10 + 256 * 1024);
    expect(received.length).toBe(15);
    // A chunk larger than the step grows to what it needs.
    received.append(bytes(600_000, 15));
    expect(bufferOf(view).byteLength).toBe(600_015);
    expect(received.bytes).toBe(view);
    expect(received.bytes.subarray(0, received.length)).toEqual(bytes(600_015));
  });

  it('doubles a buffer that cannot grow in place, keeping what it holds', () => {
    const received = new ReceivedBytes(0);
    // A browser without resizable ArrayBuffers receives into a plain one.
    received.bytes = new Uint8Array(8);
    received.append(bytes(6));
    received.append(bytes(4, 6));
    expect(received.bytes).toHaveLength(16);
    received.append(bytes(40, 10));
    expect(received.bytes).toHaveLength(50);
    expect(received.bytes.subarray(0, received.length)).toEqual(bytes(50));
  });

  it('grows a resizable buffer in place up to its reserve exactly', () => {
    const received = new ReceivedBytes(0);
    const buffer = new ArrayBuffer(4, { maxByteLength: 8 });
    received.bytes = new Uint8Array(buffer);
    received.append(bytes(4));
    received.append(bytes(4, 4));
    expect(received.bytes.buffer).toBe(buffer);
    expect(received.bytes).toEqual(bytes(8));
  });

  it('doubles a resizable buffer past its reserve', () => {
    const received = new ReceivedBytes(0);
    received.bytes = new Uint8Array(new ArrayBuffer(4, { maxByteLength: 8 }));
    received.append(bytes(4));
    received.append(bytes(5, 4));
    expect(received.bytes).toHaveLength(9);
    expect(bufferOf(received.bytes).resizable).toBe(false);
    expect(received.bytes).toEqual(bytes(9));
  });

  it('fixes the bytes into a plain buffer of exactly their length, and lets the reserve go', () => {
    const received = new ReceivedBytes(4);
    received.append(bytes(7));
    const reserved = bufferOf(received.bytes);
    const fixed = received.fix();
    expect(fixed).toEqual(bytes(7));
    expect(bufferOf(fixed).resizable).toBe(false);
    expect(bufferOf(fixed).byteLength).toBe(7);
    expect(received.bytes).toBe(fixed);
    // Node 20 has no transferToFixedLength: the bytes were copied and the reserved buffer shrunk to nothing.
    expect(reserved.byteLength).toBe(0);
  });

  it('fixes the bytes by detaching the reserved buffer where the platform has transferToFixedLength', () => {
    withTransferToFixedLength(() => {
      const received = new ReceivedBytes(4);
      received.append(bytes(7));
      const reserved = bufferOf(received.bytes);
      const fixed = received.fix();
      expect(fixed).toEqual(bytes(7));
      expect(bufferOf(fixed).resizable).toBe(false);
      expect(bufferOf(fixed).byteLength).toBe(7);
      expect(received.bytes).toBe(fixed);
      // Detached, not shrunk: the reserve is gone with the pages, and no view can be made on it.
      expect(reserved.maxByteLength).toBe(0);
      expect(() => new Uint8Array(reserved)).toThrow(TypeError);
    });
  });

  it('fixes a plain buffer by a copy only when it holds more than the bytes', () => {
    const exact = new ReceivedBytes(0);
    const plain = bytes(5);
    exact.bytes = plain;
    exact.length = 5;
    expect(exact.fix()).toBe(plain);
    const longer = new ReceivedBytes(0);
    longer.bytes = bytes(9);
    longer.length = 5;
    expect(longer.fix()).toEqual(bytes(5));
    const offset = new ReceivedBytes(0);
    offset.bytes = bytes(9).subarray(2);
    offset.length = 7;
    const fixed = offset.fix();
    expect(fixed).toEqual(bytes(9).subarray(2));
    expect(fixed.byteOffset).toBe(0);
  });
});

describe('per-object tables', () => {
  it('reserves room for objects times width numbers, empty, growing in place up to it', () => {
    const table = reservedTable(Uint32Array, 5, 3);
    expect(table).toHaveLength(0);
    expect(bufferOf(table).maxByteLength).toBe(60);
    const grown = grow(table, 15);
    expect(grown).toBe(table);
    expect(grown).toHaveLength(15);
  });

  it('grows past the reserve, or a plain table, by a copy that keeps the numbers', () => {
    const table = grow(reservedTable(Float64Array, 2), 2);
    table.set([1.5, 2.5]);
    const past = grow(table, 3);
    expect(past).not.toBe(table);
    expect([...past]).toEqual([1.5, 2.5, 0]);
    const plain = Int32Array.of(-1, 7);
    expect([...grow(plain, 4)]).toEqual([-1, 7, 0, 0]);
  });
});

describe('the transferToFixedLength stand-in the tests above use on Node 20', () => {
  it('copies into a fixed-length buffer of the new length and detaches the old, as ES2024 says', () => {
    const native = 'transferToFixedLength' in ArrayBuffer.prototype;
    withTransferToFixedLength(() => {
      const transfer = (b: ArrayBuffer, n?: number) =>
        (b as ArrayBuffer & { transferToFixedLength: (n?: number) => ArrayBuffer }).transferToFixedLength(n);
      const source = new ArrayBuffer(4, { maxByteLength: 64 });
      new Uint8Array(source).set([1, 2, 3, 4]);
      const longer = transfer(source, 6);
      expect([...new Uint8Array(longer)]).toEqual([1, 2, 3, 4, 0, 0]);
      expect(longer.resizable).toBe(false);
      expect([source.byteLength, source.maxByteLength]).toEqual([0, 0]);
      expect(() => transfer(source)).toThrow(TypeError);
      expect([...new Uint8Array(transfer(longer, 2.9))]).toEqual([1, 2]);
      expect([...new Uint8Array(transfer(Uint8Array.of(5, 6).buffer))]).toEqual([5, 6]);
      expect(() => transfer(new ArrayBuffer(1), -1)).toThrow(RangeError);
    });
    expect('transferToFixedLength' in ArrayBuffer.prototype).toBe(native);
  });
});
