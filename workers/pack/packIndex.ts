// Reader for version-2 pack indexes (gitformat-pack: "Version 2 pack-*.idx files"), enough to answer
// "does this pack hold that object, and where".

import { PackError } from './errors.ts';
import { oidFromHex, sha1, toHex } from './objectHash.ts';

export interface PackIndex {
  /** Number of objects. */
  readonly count: number;
  /** Hex checksum of the pack this index describes (its name: pack-<checksum>.pack). */
  readonly packChecksum: string;
  /** Offset of the object in the pack, or null if the pack does not hold it. */
  find(oid: string | Uint8Array): number | null;
  /** Whether the pack holds the object. */
  has(oid: string | Uint8Array): boolean;
  /** Every object id, sorted. */
  oids(): string[];
  /** The i-th object in id order. */
  entry(i: number): { oid: string; offset: number; crc32: number };
}

function invalid(detail: string): PackError {
  return new PackError('PACK_INDEX_INVALID', `The pack index is invalid: ${detail}.`);
}

/**
 * Parses a version-2 .idx. Checks its structure, and with `verifyChecksum` (default) its trailing SHA-1;
 * the arrays are views into `idx`, not copies.
 */
export function parsePackIndexV2(idx: Uint8Array, options: { verifyChecksum?: boolean } = {}): PackIndex {
  if (idx.length < 8 + 1024 + 40) throw invalid(`it is only ${idx.length} bytes long`);
  const view = new DataView(idx.buffer, idx.byteOffset, idx.byteLength);
  if (view.getUint32(0) !== 0xff744f63) throw invalid('it does not start with the version-2 signature');
  const version = view.getUint32(4);
  if (version !== 2) throw invalid(`it is version ${version}, only version 2 is supported`);
  let previous = 0;
  for (let b = 0; b < 256; b++) {
    const v = view.getUint32(8 + b * 4);
    if (v < previous) throw invalid('its fan-out table is not monotonic');
    previous = v;
  }
  const n = previous;
  const oidTable = 8 + 1024;
  const crcTable = oidTable + n * 20;
  const offsetTable = crcTable + n * 4;
  const largeTable = offsetTable + n * 4;
  if (largeTable + 40 > idx.length) throw invalid(`it is too short for ${n} objects`);
  const largeBytes = idx.length - 40 - largeTable;
  if (largeBytes % 8 !== 0) throw invalid('its 8-byte offset table has a partial entry');
  const largeCount = largeBytes / 8;
  if (options.verifyChecksum ?? true) {
    const expected = sha1(idx.subarray(0, idx.length - 20));
    for (let i = 0; i < 20; i++) {
      if (expected[i] !== idx[idx.length - 20 + i]) throw invalid('its checksum does not match its contents');
    }
  }

  const oids = idx.subarray(oidTable, crcTable);
  const offsetAt = (i: number): number => {
    const v = view.getUint32(offsetTable + i * 4);
    if (!(v & 0x80000000)) return v;
    const k = v & 0x7fffffff;
    if (k >= largeCount) throw invalid(`object ${i} points past the 8-byte offset table`);
    return view.getUint32(largeTable + k * 8) * 2 ** 32 + view.getUint32(largeTable + k * 8 + 4);
  };
  const indexOf = (oid: string | Uint8Array): number => {
    const key = typeof oid === 'string' ? oidFromHex(oid) : oid;
    if (key.length !== 20) throw new TypeError('An object id must be 20 bytes');
    // The fan-out narrows the search to ids sharing the first byte.
    let lo = key[0] === 0 ? 0 : view.getUint32(8 + (key[0] - 1) * 4);
    let hi = view.getUint32(8 + key[0] * 4);
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      let cmp = 0;
      for (let k = 0; k < 20 && cmp === 0; k++) cmp = oids[mid * 20 + k] - key[k];
      if (cmp === 0) return mid;
      if (cmp < 0) lo = mid + 1;
      else hi = mid;
    }
    return -1;
  };

  return {
    count: n,
    packChecksum: toHex(idx, idx.length - 40, 20),
    find(oid) {
      const i = indexOf(oid);
      return i < 0 ? null : offsetAt(i);
    },
    has(oid) {
      return indexOf(oid) >= 0;
    },
    oids() {
      const list = new Array<string>(n);
      for (let i = 0; i < n; i++) list[i] = toHex(oids, i * 20, 20);
      return list;
    },
    entry(i) {
      if (!Number.isInteger(i) || i < 0 || i >= n) throw new RangeError(`No entry ${i} in an index of ${n}`);
      return { oid: toHex(oids, i * 20, 20), offset: offsetAt(i), crc32: view.getUint32(crcTable + i * 4) };
    },
  };
}
