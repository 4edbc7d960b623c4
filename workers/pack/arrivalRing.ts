// The arrival ring: the objects received last, kept so that a delta arriving soon after its base is resolved
// at once (PackLimits.arrivalCacheBytes; docs/decisions/arrival-ring.md).

import { grow, reservedTable, TABLE_RESERVE_OBJECTS } from './growableBuffers.ts';
import { releaseBuffer } from './releaseBuffer.ts';

/**
 * The ring's first allocation, doubled as bytes arrive up to PackLimits.arrivalCacheBytes. The fuzz test of
 * the ingester (20,000 small packs) spent 60 % of its time allocating and clearing 4 MiB rings.
 */
export const RING_START_BYTES = 64 * 1024;

/**
 * The arrival cache: recently received objects in one ring of bytes, so keeping them allocates nothing (one
 * typed array per object cost a clone of medium.git more in the collector than it saved in inflating). An
 * entry's bytes stay valid until the ring comes round over them; `written` counts every byte ever placed.
 */
export class ArrivalRing {
  // Grows from RING_START_BYTES to `size` as objects arrive, before the first lap: a small pack (a lazy fetch
  // of a few blobs) never pays for the whole ring.
  private bytes: Uint8Array;
  // Bytes placed since the ring last started over; kept under 2^32 so that a start fits 32 bits.
  private written = 0;
  // Per entry: 1 + where it was placed (in `written` terms), 0 for none. 32 bits, not 64: 1.7 MB for
  // large.git's 430,113 entries, held at the clone's peak (the end of receiving).
  private starts = new Uint32Array(0);

  /** `wrapAt`: the bound on `written` (2^32; smaller in tests, to see the ring start over). */
  constructor(
    private readonly size: number,
    private readonly wrapAt = 2 ** 32,
  ) {
    this.bytes = new Uint8Array(Math.min(size, RING_START_BYTES));
  }

  /** Room for the header's count of entries, grown in place (see reservedTable). */
  reserve(objects: number): void {
    if (this.starts.length === 0 && objects <= TABLE_RESERVE_OBJECTS)
      this.starts = reservedTable(Uint32Array, objects);
  }

  /** Gives the ring's memory back at once (a collection could be long in coming): nothing reads it after. */
  free(): void {
    releaseBuffer(this.bytes);
    releaseBuffer(this.starts);
  }

  /** The largest object kept: a bigger one would push out everything else for a single child. */
  get maxObject(): number {
    return this.size / 4;
  }

  /**
   * Before an entry's reads and placements: near 2^32 bytes placed, the ring starts over empty (once every
   * 4 GiB of objects), never in the middle of an entry, whose base and result it holds at once.
   */
  beginEntry(): void {
    if (this.written < this.wrapAt - 4 * this.size) return;
    this.starts.fill(0);
    this.written = 0;
  }

  /** Entry `i`'s bytes (`length` of them) if the ring still holds them whole. */
  get(i: number, length: number): Uint8Array | null {
    if (i >= this.starts.length || this.starts[i] === 0) return null;
    const start = this.starts[i] - 1;
    if (start < this.written - this.bytes.length) return null;
    const at = start % this.bytes.length;
    return this.bytes.subarray(at, at + length);
  }

  /** Whether entry `i` is in the half of the ring that the next objects overwrite first. */
  isOld(i: number): boolean {
    return this.starts[i] - 1 < this.written - this.size / 2;
  }

  /** Room for entry `i`'s `length` bytes at the head; what it overwrites is no longer valid. */
  place(i: number, length: number): Uint8Array {
    // Before its first lap the ring holds every byte placed at its own offset, so a larger copy keeps them
    // where they were. Views handed out earlier still read the old bytes, which nothing writes again.
    if (this.written + length > this.bytes.length && this.bytes.length < this.size) {
      const bigger = new Uint8Array(
        Math.min(this.size, Math.max(this.bytes.length * 2, this.written + length)),
      );
      bigger.set(this.bytes.subarray(0, this.written));
      this.bytes = bigger;
    }
    const size = this.bytes.length;
    let at = this.written % size;
    // Objects stay contiguous: the tail too short for one is skipped.
    if (at + length > size) {
      this.written += size - at;
      at = 0;
    }
    if (i >= this.starts.length)
      this.starts = grow(this.starts, Math.max(i + 1, this.starts.length * 2, 1024));
    this.starts[i] = this.written + 1;
    this.written += length;
    return this.bytes.subarray(at, at + length);
  }
}
