import { describe, expect, it } from 'vitest';
import { TABLE_RESERVE_OBJECTS } from './growableBuffers.ts';
import {
  entryHeader,
  OBJ_OFS_DELTA,
  OBJ_REF_DELTA,
  PackEntries,
  TYPE_CODES,
  typeName,
} from './packEntries.ts';

const resizable = (table: ArrayBufferView) => (table.buffer as ArrayBuffer).resizable;

describe('entry types and headers (gitformat-pack)', () => {
  it('names the four object types by their codes, and knows the delta codes', () => {
    for (const name of ['commit', 'tree', 'blob', 'tag'] as const)
      expect(typeName(TYPE_CODES[name])).toBe(name);
    expect([TYPE_CODES.commit, TYPE_CODES.tree, TYPE_CODES.blob, TYPE_CODES.tag]).toEqual([1, 2, 3, 4]);
    expect([OBJ_OFS_DELTA, OBJ_REF_DELTA]).toEqual([6, 7]);
  });

  it('writes the type and the size in 4 bits, then 7 bits a byte, low groups first', () => {
    expect([...entryHeader(3, 0)]).toEqual([0x30]);
    expect([...entryHeader(3, 15)]).toEqual([0x3f]);
    expect([...entryHeader(1, 16)]).toEqual([0x90, 0x01]);
    expect([...entryHeader(2, 2047)]).toEqual([0xaf, 0x7f]);
    expect([...entryHeader(2, 2048)]).toEqual([0xa0, 0x80, 0x01]);
    // Past 32 bits, where `>>` would wrap: 2^32 + 5.
    expect([...entryHeader(4, 2 ** 32 + 5)]).toEqual([0xc5, 0x80, 0x80, 0x80, 0x80, 0x01]);
  });
});

describe('PackEntries', () => {
  it('reserves its tables for the declared count, only up to TABLE_RESERVE_OBJECTS', () => {
    const entries = new PackEntries();
    entries.begin(10);
    expect(entries.count).toBe(10);
    for (const table of [entries.offsets, entries.kinds, entries.oids, entries.bases]) {
      expect(resizable(table)).toBe(true);
    }
    expect((entries.oids.buffer as ArrayBuffer).maxByteLength).toBe(200);
    const largest = new PackEntries();
    largest.begin(TABLE_RESERVE_OBJECTS);
    expect(resizable(largest.crcs)).toBe(true);
    const absurd = new PackEntries();
    absurd.begin(TABLE_RESERVE_OBJECTS + 1);
    expect(absurd.count).toBe(TABLE_RESERVE_OBJECTS + 1);
    expect(resizable(absurd.crcs)).toBe(false);
  });

  it('grows by doubling, never past the declared count, and only when short', () => {
    const entries = new PackEntries();
    entries.begin(100);
    entries.ensureCapacity(3);
    expect(entries.capacity).toBe(3);
    entries.ensureCapacity(3);
    expect(entries.capacity).toBe(3);
    entries.ensureCapacity(4);
    expect(entries.capacity).toBe(6);
    entries.ensureCapacity(60);
    expect(entries.capacity).toBe(60);
    entries.ensureCapacity(61);
    expect(entries.capacity).toBe(100);
    const tables = [
      entries.offsets,
      entries.headerLengths,
      entries.kinds,
      entries.types,
      entries.entrySizes,
      entries.objectSizes,
      entries.crcs,
      entries.bases,
    ];
    for (const table of tables) expect(table).toHaveLength(100);
    expect(entries.oids).toHaveLength(2000);
  });

  it('keeps what was written when a table grows, reserved or not', () => {
    for (const count of [100, TABLE_RESERVE_OBJECTS + 1]) {
      const entries = new PackEntries();
      entries.begin(count);
      entries.ensureCapacity(2);
      entries.offsets[1] = 77;
      entries.oids[39] = 9;
      entries.ensureCapacity(50);
      expect(entries.offsets[1]).toBe(77);
      expect(entries.oids[39]).toBe(9);
    }
  });

  it('keeps every ref-delta as its list grows past 16', () => {
    const entries = new PackEntries();
    const ids = new Uint8Array(40 * 20).map((_, i) => i % 251);
    for (let k = 0; k < 40; k++) entries.addRefDelta(k * 3, ids, k * 20);
    expect(entries.refCount).toBe(40);
    expect(entries.refEntries.length).toBeGreaterThanOrEqual(40);
    for (let k = 0; k < 40; k++) {
      expect(entries.refEntries[k]).toBe(k * 3);
      expect(entries.refBaseOids.subarray(k * 20, k * 20 + 20)).toEqual(ids.subarray(k * 20, k * 20 + 20));
    }
  });

  it('finds an entry by its offset among those parsed, and -1 for any other offset', () => {
    const entries = new PackEntries();
    entries.begin(8);
    entries.ensureCapacity(8);
    const offsets = [12, 30, 31, 90, 200, 201, 500, 900];
    entries.offsets.set(offsets);
    entries.parsed = 7;
    for (const [i, offset] of offsets.slice(0, 7).entries()) expect(entries.findEntry(offset)).toBe(i);
    for (const offset of [0, 13, 89, 199, 499, 900, 1000]) expect(entries.findEntry(offset)).toBe(-1);
  });

  it('frees the tables only parsing and resolving read, and keeps the rest', () => {
    const entries = new PackEntries();
    entries.begin(4);
    entries.ensureCapacity(4);
    entries.types[2] = 3;
    const kinds = entries.kinds;
    entries.releaseResolverTables();
    for (const table of [entries.headerLengths, entries.kinds, entries.entrySizes, entries.bases]) {
      expect(table).toHaveLength(0);
    }
    // The reserved buffer went back at once (a resizable one shrinks to nothing where transfer is missing).
    expect(kinds).toHaveLength(0);
    expect(entries.types[2]).toBe(3);
    expect(entries.offsets).toHaveLength(4);
    expect(entries.oids).toHaveLength(80);
  });
});
