// What the ingester knows of each entry of a pack, in pack order: one typed array per field (430,113
// entries of large.git as JS objects would be tens of megabytes of heap), and gitformat-pack's entry types.

import { grow, reservedTable, TABLE_RESERVE_OBJECTS } from './growableBuffers.ts';
import type { GitObjectType } from './objectHash.ts';
import { releaseBuffer } from './releaseBuffer.ts';

// gitformat-pack: object types in entry headers. 5 is reserved, 0 invalid.
export const OBJ_OFS_DELTA = 6;
export const OBJ_REF_DELTA = 7;
// Indexed by type code 1..4; slot 0 is never read for a resolved object.
const TYPE_NAMES: readonly GitObjectType[] = ['commit', 'commit', 'tree', 'blob', 'tag'];
export const TYPE_CODES: Readonly<Record<GitObjectType, number>> = { commit: 1, tree: 2, blob: 3, tag: 4 };

export function typeName(code: number): GitObjectType {
  return TYPE_NAMES[code];
}

/** gitformat-pack: a non-delta entry's header, the type in bits 4-6 of the first byte and the size after. */
export function entryHeader(code: number, size: number): Uint8Array {
  const bytes: number[] = [];
  let c = (code << 4) | (size & 15);
  let rest = Math.floor(size / 16);
  while (rest > 0) {
    bytes.push(c | 0x80);
    c = rest & 0x7f;
    rest = Math.floor(rest / 128);
  }
  bytes.push(c);
  return Uint8Array.from(bytes);
}

/**
 * The per-entry tables, filled by the stream parser and completed by the delta resolver. A table may be
 * replaced when it grows: read it through this object, not from a copy kept across a growth.
 */
export class PackEntries {
  /** Objects the pack's header declares; each base appended to complete a thin pack adds one. */
  count = 0;
  /** Entries parsed so far. */
  parsed = 0;
  /** Entries the tables have room for. */
  capacity = 0;
  offsets = new Float64Array(0);
  headerLengths = new Uint8Array(0);
  kinds = new Uint8Array(0); // type code in the entry header
  types = new Uint8Array(0); // resolved object type (1..4), 0 while unknown
  // Sizes fit 32 bits: maxObjectSize is capped below 4 GiB (see PackIngester's constructor).
  entrySizes = new Uint32Array(0); // size in the entry header (delta size for deltas)
  objectSizes = new Uint32Array(0);
  crcs = new Uint32Array(0);
  oids = new Uint8Array(0);
  bases = new Int32Array(0); // ofs-delta: index of the base entry; else -1
  deltaCount = 0;
  // Ref-deltas: entry index and base id.
  refEntries = new Int32Array(16);
  refBaseOids = new Uint8Array(16 * 20);
  refCount = 0;

  /** The header declared `count` entries: room for them, reserved to grow in place unless absurd. */
  begin(count: number): void {
    this.count = count;
    if (count <= TABLE_RESERVE_OBJECTS) this.reserve(count);
  }

  private reserve(objects: number): void {
    this.offsets = reservedTable(Float64Array, objects);
    this.headerLengths = reservedTable(Uint8Array, objects);
    this.kinds = reservedTable(Uint8Array, objects);
    this.types = reservedTable(Uint8Array, objects);
    this.entrySizes = reservedTable(Uint32Array, objects);
    this.objectSizes = reservedTable(Uint32Array, objects);
    this.crcs = reservedTable(Uint32Array, objects);
    this.oids = reservedTable(Uint8Array, objects, 20);
    this.bases = reservedTable(Int32Array, objects);
  }

  ensureCapacity(n: number): void {
    if (n <= this.capacity) return;
    this.resize(Math.min(this.count, Math.max(n, this.capacity * 2)));
  }

  resize(c: number): void {
    this.offsets = grow(this.offsets, c);
    this.headerLengths = grow(this.headerLengths, c);
    this.kinds = grow(this.kinds, c);
    this.types = grow(this.types, c);
    this.entrySizes = grow(this.entrySizes, c);
    this.objectSizes = grow(this.objectSizes, c);
    this.crcs = grow(this.crcs, c);
    this.oids = grow(this.oids, c * 20);
    this.bases = grow(this.bases, c);
    this.capacity = c;
  }

  /** Entry `entry` is a ref-delta whose base id is `bytes[at, at + 20)`. */
  addRefDelta(entry: number, bytes: Uint8Array, at: number): void {
    if (this.refCount === this.refEntries.length) {
      this.refEntries = grow(this.refEntries, this.refCount * 2);
      this.refBaseOids = grow(this.refBaseOids, this.refCount * 2 * 20);
    }
    this.refEntries[this.refCount] = entry;
    this.refBaseOids.set(bytes.subarray(at, at + 20), this.refCount * 20);
    this.refCount++;
  }

  /** Index of the entry starting at `offset`, or -1. Entries are in offset order. */
  findEntry(offset: number): number {
    const offsets = this.offsets;
    let lo = 0;
    let hi = this.parsed;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      const v = offsets[mid];
      if (v === offset) return mid;
      if (v < offset) lo = mid + 1;
      else hi = mid;
    }
    return -1;
  }

  /** Frees the tables only parsing and resolving read; the result reads oids, types, offsets, crcs, sizes. */
  releaseResolverTables(): void {
    for (const table of [this.headerLengths, this.kinds, this.entrySizes, this.bases]) releaseBuffer(table);
    this.headerLengths = new Uint8Array(0);
    this.kinds = new Uint8Array(0);
    this.entrySizes = new Uint32Array(0);
    this.bases = new Int32Array(0);
  }
}
