// The ingester's memory: the buffer a pack is received into and the per-object tables, both grown in
// place where ArrayBuffers are resizable (ES2024: Chromium 111, Node 20), so that growing never holds the
// old and the new copy at once.

/*
 * The receive buffer holds the whole pack (deltas are resolved from it at the end). Where ArrayBuffers are
 * resizable it grows in place: the engine reserves address space up to RECEIVE_RESERVE and commits pages
 * as they fill, so receiving a pack holds it once, where doubling held up to three times its size while
 * copying (measured on large.git's 39 MB pack: bench `clonePeakHeapMB`). Past the reserve, or without
 * resizable buffers, it doubles as before.
 */
const RECEIVE_RESERVE = 2 ** 32;
// Each resize is a system call: grow by at least this much. What it grows beyond the pack is held at the
// clone's peak (the end of receiving). Ingesting large.pack (39 MB) in 64 KiB pushes, median of 3 on the
// shared 2-core machine (noise ±200 ms, load 3-4): 4 MiB steps 2248 ms, 1 MiB 2259 ms; 1 MiB 2334 ms,
// 256 KiB 2195 ms. medium.pack alike (403 and 397 ms). docs/decisions/pack-memory.md.
const RECEIVE_STEP = 256 * 1024;

/** The pack as received so far, `bytes[0, length)`, in a buffer that grows in place as chunks arrive. */
export class ReceivedBytes {
  bytes: Uint8Array;
  length = 0;

  constructor(sizeHint: number) {
    this.bytes = receiveBuffer(sizeHint);
  }

  append(chunk: Uint8Array): void {
    const needed = this.length + chunk.length;
    if (needed > this.bytes.length) this.bytes = growReceiveBuffer(this.bytes, this.length, needed);
    this.bytes.set(chunk, this.length);
    this.length = needed;
  }

  /** The bytes, now in a fixed-length buffer of exactly `length` (see fixedLength); read from there after. */
  fix(): Uint8Array {
    this.bytes = fixedLength(this.bytes, this.length);
    return this.bytes;
  }
}

function receiveBuffer(size: number): Uint8Array {
  try {
    const buffer = new ArrayBuffer(size, { maxByteLength: Math.max(size, RECEIVE_RESERVE) });
    if (buffer.resizable) return new Uint8Array(buffer);
  } catch {
    // No address space to reserve, or no resizable buffers: a plain one.
  }
  return new Uint8Array(size);
}

function growReceiveBuffer(buf: Uint8Array, used: number, needed: number): Uint8Array {
  const buffer = buf.buffer as ArrayBuffer;
  if (buffer.resizable && needed <= buffer.maxByteLength) {
    const size = Math.min(buffer.maxByteLength, Math.max(needed, buffer.byteLength + RECEIVE_STEP));
    buffer.resize(size);
    // A view made without a length tracks the buffer's.
    return buf.length >= needed ? buf : new Uint8Array(buffer);
  }
  const next = new Uint8Array(Math.max(needed, buf.length * 2));
  next.set(buf.subarray(0, used));
  return next;
}

/**
 * The first `length` bytes as a fixed-length buffer of exactly that size, as IndexedDB can store (a resizable
 * one would keep its reserve when read back). transferToFixedLength detaches the receive buffer at once,
 * so the two are not both held until a garbage collection; where it is missing, a copy.
 */
function fixedLength(buf: Uint8Array, length: number): Uint8Array {
  const buffer = buf.buffer as ArrayBuffer & { transferToFixedLength?: (n: number) => ArrayBuffer };
  if (!buffer.resizable) {
    return buf.byteOffset === 0 && length === buffer.byteLength ? buf : buf.slice(0, length);
  }
  if (buffer.transferToFixedLength) return new Uint8Array(buffer.transferToFixedLength(length));
  const copy = buf.slice(0, length);
  buffer.resize(0);
  return copy;
}

export type Table = Float64Array | Int32Array | Uint32Array | Uint8Array;

/** Growable array of numbers backed by a typed array. */
export function grow<T extends Table>(a: T, length: number): T {
  const buffer = a.buffer as ArrayBuffer;
  const bytes = length * a.BYTES_PER_ELEMENT;
  if (buffer.resizable && bytes <= buffer.maxByteLength) {
    // In place: the view made without a length follows the buffer.
    buffer.resize(bytes);
    return a;
  }
  const b = new (a.constructor as new (n: number) => T)(length);
  b.set(a);
  return b;
}

// Per-object tables reserve room for the header's object count up to this many objects (oids: 20 bytes
// each, 320 MiB of address space), and then grow in place: growing by copying held the old and the new
// table at once, 38 MB of large.git's tables for 430,113 objects. A header claiming more grows by copying.
export const TABLE_RESERVE_OBJECTS = 1 << 24;

/** An empty per-object table of `Ctor` (`width` numbers per object) that grows in place up to `objects`. */
export function reservedTable<T extends Table>(
  Ctor: { new (buffer: ArrayBuffer): T; new (n: number): T; BYTES_PER_ELEMENT: number },
  objects: number,
  width = 1,
): T {
  try {
    const buffer = new ArrayBuffer(0, { maxByteLength: objects * width * Ctor.BYTES_PER_ELEMENT });
    if (buffer.resizable) return new Ctor(buffer);
  } catch {
    // No address space to reserve, or no resizable buffers.
  }
  return new Ctor(0);
}
