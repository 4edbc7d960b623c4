// A file's lines as git's xdiff sees them: records that end after their line feed (the last one may have
// none, which makes it differ from the same text with one), compared as bytes, never decoded.

const LF = 0x0a;

export interface LineRecords {
  bytes: Uint8Array;
  /** Record i is `bytes[starts[i]]` up to `bytes[starts[i + 1]]`, its line feed included. */
  starts: Int32Array;
  count: number;
}

/** The number of lines: line feeds, plus one for text after the last. */
export function countRecords(bytes: Uint8Array): number {
  let count = 0;
  for (let at = bytes.indexOf(LF); at >= 0; at = bytes.indexOf(LF, at + 1)) count++;
  return bytes.length > 0 && bytes[bytes.length - 1] !== LF ? count + 1 : count;
}

export function splitRecords(bytes: Uint8Array): LineRecords {
  const count = countRecords(bytes);
  const starts = new Int32Array(count + 1);
  let k = 1;
  for (let at = bytes.indexOf(LF); at >= 0 && k < count; at = bytes.indexOf(LF, at + 1)) starts[k++] = at + 1;
  starts[count] = bytes.length;
  return { bytes, starts, count };
}

/**
 * Equivalence classes of the records of two files, as xdiff's classifier makes them: equal bytes, equal
 * class. The diff compares class ids only; `inA`/`inB` count each class's records in each file, which is
 * what xdiff's discard step reads.
 */
export interface LineClasses {
  a: Int32Array;
  b: Int32Array;
  /** Records of each class in a and in b. */
  inA: Int32Array;
  inB: Int32Array;
}

export function classifyRecords(a: LineRecords, b: LineRecords): LineClasses {
  const total = a.count + b.count;
  let size = 16;
  while (size < total * 2) size *= 2;
  const mask = size - 1;
  const slots = new Int32Array(size).fill(-1);
  // Per class: the hash and one record holding it (file 0 = a, 1 = b).
  const classHash = new Int32Array(total);
  const classFile = new Uint8Array(total);
  const classRecord = new Int32Array(total);
  const inA = new Int32Array(total);
  const inB = new Int32Array(total);
  let classes = 0;

  const assign = (file: LineRecords, which: 0 | 1, out: Int32Array, counts: Int32Array) => {
    const { bytes, starts } = file;
    for (let r = 0; r < file.count; r++) {
      const from = starts[r];
      const to = starts[r + 1];
      // FNV-1a: only a bucket choice; records are compared byte for byte below.
      let h = 0x811c9dc5 | 0;
      for (let i = from; i < to; i++) h = Math.imul(h ^ bytes[i], 0x01000193);
      let slot = h & mask;
      let id = -1;
      for (;;) {
        const c = slots[slot];
        if (c < 0) break;
        if (classHash[c] === h) {
          const other = classFile[c] === 0 ? a : b;
          const oFrom = other.starts[classRecord[c]];
          const oTo = other.starts[classRecord[c] + 1];
          if (oTo - oFrom === to - from && sameBytes(bytes, from, other.bytes, oFrom, to - from)) {
            id = c;
            break;
          }
        }
        slot = (slot + 1) & mask;
      }
      if (id < 0) {
        id = classes++;
        slots[slot] = id;
        classHash[id] = h;
        classFile[id] = which;
        classRecord[id] = r;
      }
      out[r] = id;
      counts[id]++;
    }
  };
  const ca = new Int32Array(a.count);
  const cb = new Int32Array(b.count);
  assign(a, 0, ca, inA);
  assign(b, 1, cb, inB);
  return { a: ca, b: cb, inA: inA.subarray(0, classes), inB: inB.subarray(0, classes) };
}

function sameBytes(x: Uint8Array, xi: number, y: Uint8Array, yi: number, n: number): boolean {
  for (let k = 0; k < n; k++) if (x[xi + k] !== y[yi + k]) return false;
  return true;
}
