// zlib inflate (RFC 1950 wrapper around RFC 1951 deflate) that says where its stream ended.
//
// A pack entry is a zlib stream with no length prefix: the next entry begins where the stream ends, so the
// inflater must report how many input bytes it consumed. fflate has no API for it (reading its private
// state works but its streaming class copies the pending input on every call: 4x slower); pako's
// low-level stream says so but made the receive phase 1.8x slower (bench/pack/ingest.bench.ts). This one
// is written for the pack layer's case:
// - input is the pack buffer itself, addressed by absolute offsets, so nothing is copied in, and a stream
//   cut by a chunk boundary resumes at its last complete symbol when more bytes arrive;
// - output goes into a caller buffer of the exact declared size (git checks that size, so do we), or into a
//   window buffer that the caller drains, for objects too big to hold;
// - Huffman codes decode through two-level tables (a root of up to 10 bits, subtables for longer codes),
//   the scheme of zlib's inftrees.c.

import { PackError } from './errors.ts';

/** The stream ended; `inputEnd` is the offset just past it. */
export const INFLATE_DONE = 0;
/** Every byte up to `end` is consumed; call `run` again with more. */
export const INFLATE_NEED_INPUT = 1;
/** The window buffer is full: consume `out[outStart, outPos)`, call `slide()`, then `run` again. */
export const INFLATE_OUTPUT_FULL = 2;
export type InflateStatus = typeof INFLATE_DONE | typeof INFLATE_NEED_INPUT | typeof INFLATE_OUTPUT_FULL;

// States between calls.
const MODE_HEADER = 0;
const MODE_BLOCK = 1;
const MODE_CODES = 2;
const MODE_STORED = 3;
const MODE_TRAILER = 4;
const MODE_DONE = 5;
const CONTINUE = -1;

// Table entry: (value << 8) | (op << 4) | bits. For literal/length tables op 0 is a literal byte, 1..6 a
// length with op-1 extra bits, 7 end of block; for distance tables op is the number of extra bits (0..13).
// In both, 14 links the root entry to a subtable (value = its start, bits = its index width), 15 is invalid.
const OP_END = 7;
const OP_LINK = 14;
const OP_BAD = 15;

const KIND_CODELEN = 0;
const KIND_LITLEN = 1;
const KIND_DIST = 2;

const LIT_ROOT = 10;
const DIST_ROOT = 8;
const CODELEN_ROOT = 7;

// RFC 1951 3.2.5
const LEN_BASE: readonly number[] = [
  3, 4, 5, 6, 7, 8, 9, 10, 11, 13, 15, 17, 19, 23, 27, 31, 35, 43, 51, 59, 67, 83, 99, 115, 131, 163, 195,
  227, 258,
];
const LEN_EXTRA: readonly number[] = [
  0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3, 4, 4, 4, 4, 5, 5, 5, 5, 0,
];
const DIST_BASE: readonly number[] = [
  1, 2, 3, 4, 5, 7, 9, 13, 17, 25, 33, 49, 65, 97, 129, 193, 257, 385, 513, 769, 1025, 1537, 2049, 3073, 4097,
  6145, 8193, 12289, 16385, 24577,
];
const DIST_EXTRA: readonly number[] = [
  0, 0, 0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6, 6, 7, 7, 8, 8, 9, 9, 10, 10, 11, 11, 12, 12, 13, 13,
];
// RFC 1951 3.2.7: the order code length code lengths are sent in.
const CODELEN_ORDER: readonly number[] = [16, 17, 18, 0, 8, 7, 9, 6, 10, 5, 11, 4, 12, 3, 13, 2, 14, 1, 15];

const REVERSE8 = new Uint8Array(256);
for (let i = 0; i < 256; i++) {
  let r = 0;
  for (let b = 0; b < 8; b++) r |= ((i >>> b) & 1) << (7 - b);
  REVERSE8[i] = r;
}

// Scratch for table building (single-threaded: a worker runs one inflate at a time).
const blCount = new Uint16Array(16);
const offsets = new Uint16Array(16);
const sorted = new Uint16Array(320);

function entryFor(kind: number, sym: number): number {
  if (kind === KIND_LITLEN) {
    if (sym < 256) return sym << 8;
    if (sym === 256) return OP_END << 4;
    if (sym < 286) return (LEN_BASE[sym - 257] << 8) | ((LEN_EXTRA[sym - 257] + 1) << 4);
    return OP_BAD << 4;
  }
  if (kind === KIND_DIST) return sym < 30 ? (DIST_BASE[sym] << 8) | (DIST_EXTRA[sym] << 4) : OP_BAD << 4;
  return sym << 8;
}

/**
 * Builds the decoding table for the code lengths `lens[first, first + n)` into `table` and returns its root
 * width in bits, or -1 if the lengths do not form a valid prefix code.
 */
function buildTable(
  lens: Uint8Array,
  first: number,
  n: number,
  table: Int32Array,
  kind: number,
  rootMax: number,
): number {
  blCount.fill(0);
  for (let i = 0; i < n; i++) blCount[lens[first + i]]++;
  blCount[0] = 0;
  let maxLen = 15;
  while (maxLen > 0 && blCount[maxLen] === 0) maxLen--;
  if (maxLen === 0) {
    // No codes: fine for distances (a block of literals only), never for the others.
    if (kind !== KIND_DIST) return -1;
    table[0] = (OP_BAD << 4) | 1;
    table[1] = (OP_BAD << 4) | 1;
    return 1;
  }
  let left = 1;
  for (let len = 1; len <= 15; len++) {
    left = (left << 1) - blCount[len];
    if (left < 0) return -1; // over-subscribed
  }
  // Incomplete codes are allowed only for a single code of one bit (zlib inftrees.c does the same).
  if (left > 0 && (kind === KIND_CODELEN || maxLen !== 1)) return -1;

  offsets[1] = 0;
  for (let len = 1; len < 15; len++) offsets[len + 1] = offsets[len] + blCount[len];
  for (let sym = 0; sym < n; sym++) {
    const len = lens[first + sym];
    if (len) sorted[offsets[len]++] = sym;
  }

  const rootBits = Math.min(maxLen, rootMax);
  const rootSize = 1 << rootBits;
  if (left > 0) table.fill((OP_BAD << 4) | rootBits, 0, rootSize);
  const subBits = maxLen - rootBits;
  const subSize = 1 << subBits;
  let nextSub = rootSize;
  let curPrefix = -1;
  let curSub = 0;
  let code = 0;
  let idx = 0;
  for (let len = 1; len <= maxLen; len++) {
    for (let k = blCount[len]; k > 0; k--) {
      const entry = entryFor(kind, sorted[idx++]);
      // Deflate sends codes most significant bit first, the bit buffer holds them least significant first.
      const rev = ((REVERSE8[code & 0xff] << 8) | REVERSE8[code >>> 8]) >>> (16 - len);
      if (len <= rootBits) {
        const e = entry | len;
        for (let i = rev; i < rootSize; i += 1 << len) table[i] = e;
      } else {
        // Codes sharing a root prefix are consecutive in canonical order, so one subtable at a time.
        const prefix = rev & (rootSize - 1);
        if (prefix !== curPrefix) {
          curPrefix = prefix;
          curSub = nextSub;
          nextSub += subSize;
          table[prefix] = (curSub << 8) | (OP_LINK << 4) | subBits;
        }
        const e = entry | (len - rootBits);
        for (let i = rev >>> rootBits; i < subSize; i += 1 << (len - rootBits)) table[curSub + i] = e;
      }
      code++;
    }
    code <<= 1;
  }
  return rootBits;
}

function fixedTables(): { lit: Int32Array; litBits: number; dist: Int32Array; distBits: number } {
  const lens = new Uint8Array(288 + 32);
  lens.fill(8, 0, 144);
  lens.fill(9, 144, 256);
  lens.fill(7, 256, 280);
  lens.fill(8, 280, 288);
  lens.fill(5, 288, 320);
  const lit = new Int32Array(1 << 9);
  const dist = new Int32Array(1 << 5);
  const litBits = buildTable(lens, 0, 288, lit, KIND_LITLEN, 9);
  const distBits = buildTable(lens, 288, 32, dist, KIND_DIST, 5);
  return { lit, litBits, dist, distBits };
}
const FIXED = fixedTables();

/** Adler-32 (RFC 1950 8.2) of `buf[start, end)` continuing from `adler`. */
export function adler32(adler: number, buf: Uint8Array, start: number, end: number): number {
  let a = adler & 0xffff;
  let b = adler >>> 16;
  let i = start;
  while (i < end) {
    // 3800 bytes keep `b` below 2^31, so V8 stays in small-integer arithmetic.
    const stop = Math.min(end, i + 3800);
    for (; i < stop; i++) {
      a += buf[i];
      b += a;
    }
    a %= 65521;
    b %= 65521;
  }
  return ((b << 16) | a) >>> 0;
}

const EMPTY = new Uint8Array(0);

function corrupt(detail: string): PackError {
  return new PackError('PACK_CORRUPT', `Compressed data in the pack is invalid: ${detail}.`);
}

/**
 * What the ingester needs from an inflater, so the benchmark can plug in others (pako, fflate) to compare.
 */
export interface StreamInflater {
  readonly inputEnd: number;
  readonly out: Uint8Array;
  readonly outPos: number;
  readonly outStart: number;
  start(src: Uint8Array, start: number, out: Uint8Array, size: number): void;
  run(src: Uint8Array, end: number): InflateStatus;
  slide(): void;
}

/**
 * One reusable zlib inflater. `start()` begins a stream, `run()` advances it over whatever input is
 * available and may be called again as more arrives; the caller may pass a new array holding the same
 * bytes at the same offsets (the pack buffer after it grew).
 */
export class Inflater implements StreamInflater {
  /** After INFLATE_DONE: offset in the input just past the stream (after the Adler-32). */
  inputEnd = 0;
  /** Output buffer and how much of it is filled. */
  out: Uint8Array = EMPTY;
  outPos = 0;
  /** First byte of `out` the caller has not seen yet (moves only in window mode). */
  outStart = 0;

  private src: Uint8Array = EMPTY;
  private end = 0;
  private p = 0; // next input byte to load into the bit buffer
  private bb = 0; // bit buffer, least significant bit first
  private bc = 0; // number of bits in bb
  private size = 0; // declared size of the whole output
  private outBase = 0; // bytes produced before out[0]
  private mode = MODE_DONE;
  private final = false;
  private storedLeft = 0;
  private litTable: Int32Array = FIXED.lit;
  private litBits = FIXED.litBits;
  private distTable: Int32Array = FIXED.dist;
  private distBits = FIXED.distBits;
  private readonly dynLit = new Int32Array((1 << LIT_ROOT) + (1 << 15));
  private readonly dynDist = new Int32Array((1 << DIST_ROOT) + (1 << 15));
  private readonly codelenTable = new Int32Array(1 << CODELEN_ROOT);
  private readonly lens = new Uint8Array(288 + 32);
  private adler = 1;
  private adlerPos = 0;

  /** @param verifyChecksum check each stream's Adler-32, as zlib does (costs a few percent). */
  constructor(private readonly verifyChecksum = true) {}

  /**
   * Begins the stream at `src[start]` that must inflate to exactly `size` bytes. With `out.length >= size`
   * the whole result lands in `out`; a smaller `out` (at least 64 KiB) is used as a window.
   */
  start(src: Uint8Array, start: number, out: Uint8Array, size: number): void {
    if (out.length < size && out.length < 65536) {
      throw new RangeError('Inflate window must be at least 64 KiB');
    }
    this.src = src;
    this.p = start;
    this.bb = 0;
    this.bc = 0;
    this.out = out;
    this.outPos = 0;
    this.outStart = 0;
    this.outBase = 0;
    this.size = size;
    this.mode = MODE_HEADER;
    this.final = false;
    this.adler = 1;
    this.adlerPos = 0;
    this.inputEnd = 0;
  }

  run(src: Uint8Array, end: number): InflateStatus {
    this.src = src;
    this.end = end;
    for (;;) {
      let r: number;
      switch (this.mode) {
        case MODE_HEADER:
          r = this.header();
          break;
        case MODE_BLOCK:
          r = this.blockHeader();
          break;
        case MODE_CODES:
          r = this.codes();
          break;
        case MODE_STORED:
          r = this.stored();
          break;
        case MODE_TRAILER:
          r = this.trailer();
          break;
        default:
          return INFLATE_DONE;
      }
      if (r !== CONTINUE) return r as InflateStatus;
    }
  }

  /** After INFLATE_OUTPUT_FULL: keeps the last 32 KiB as history and frees the rest of the window. */
  slide(): void {
    const keep = Math.min(this.outPos, 32768);
    const shift = this.outPos - keep;
    if (this.verifyChecksum) this.adler = adler32(this.adler, this.out, this.adlerPos, this.outPos);
    this.out.copyWithin(0, shift, this.outPos);
    this.outBase += shift;
    this.outPos = keep;
    this.outStart = keep;
    this.adlerPos = keep;
  }

  // RFC 1950 2.2: CMF, FLG.
  private header(): number {
    const p = this.p;
    if (this.end - p < 2) return INFLATE_NEED_INPUT;
    const cmf = this.src[p];
    const flg = this.src[p + 1];
    if ((cmf & 0x0f) !== 8 || cmf >>> 4 > 7) throw corrupt('not a zlib stream');
    if (((cmf << 8) | flg) % 31 !== 0) throw corrupt('zlib header check failed');
    if (flg & 0x20) throw corrupt('zlib stream needs a preset dictionary');
    this.p = p + 2;
    this.mode = MODE_BLOCK;
    return CONTINUE;
  }

  private blockHeader(): number {
    const src = this.src;
    const end = this.end;
    let p = this.p;
    let bb = this.bb;
    let bc = this.bc;
    // Bytes past `end` load as zeros; if they were needed, roll back and wait (checked before any error).
    while (bc <= 24) {
      bb |= (p < end ? src[p] : 0) << bc;
      p++;
      bc += 8;
    }
    const final = (bb & 1) === 1;
    const type = (bb >>> 1) & 3;
    bb >>>= 3;
    bc -= 3;
    if (p > end && bc < (p - end) << 3) return INFLATE_NEED_INPUT;
    if (type === 0) {
      // Stored: skip to a byte boundary, then LEN and its complement NLEN.
      bc -= bc & 7;
      p -= bc >>> 3;
      if (end - p < 4) return INFLATE_NEED_INPUT;
      const len = src[p] | (src[p + 1] << 8);
      const nlen = src[p + 2] | (src[p + 3] << 8);
      if (len !== (~nlen & 0xffff)) throw corrupt('stored block length check failed');
      this.p = p + 4;
      this.bb = 0;
      this.bc = 0;
      this.storedLeft = len;
      this.final = final;
      this.mode = MODE_STORED;
      return CONTINUE;
    }
    if (type === 1) {
      this.litTable = FIXED.lit;
      this.litBits = FIXED.litBits;
      this.distTable = FIXED.dist;
      this.distBits = FIXED.distBits;
    } else if (type === 2) {
      // Dynamic: HLIT, HDIST, HCLEN, the code length code, then the literal/length and distance lengths.
      while (bc <= 24) {
        bb |= (p < end ? src[p] : 0) << bc;
        p++;
        bc += 8;
      }
      const nlit = (bb & 31) + 257;
      const ndist = ((bb >>> 5) & 31) + 1;
      const ncode = ((bb >>> 10) & 15) + 4;
      bb >>>= 14;
      bc -= 14;
      const lens = this.lens;
      lens.fill(0, 0, 19);
      for (let i = 0; i < ncode; i++) {
        while (bc <= 24) {
          bb |= (p < end ? src[p] : 0) << bc;
          p++;
          bc += 8;
        }
        lens[CODELEN_ORDER[i]] = bb & 7;
        bb >>>= 3;
        bc -= 3;
      }
      let error = '';
      if (nlit > 286 || ndist > 30) error = 'too many length or distance codes';
      const ct = this.codelenTable;
      const cbits = error ? 0 : buildTable(lens, 0, 19, ct, KIND_CODELEN, CODELEN_ROOT);
      if (cbits < 0) error = 'invalid code lengths code';
      const total = nlit + ndist;
      // lens[0, 19) is free again now that its table is built.
      let i = 0;
      const cmask = (1 << cbits) - 1;
      while (!error && i < total) {
        while (bc <= 24) {
          bb |= (p < end ? src[p] : 0) << bc;
          p++;
          bc += 8;
        }
        const e = ct[bb & cmask];
        const n = e & 15;
        bb >>>= n;
        bc -= n;
        const sym = e >>> 8;
        if (sym < 16) {
          lens[i++] = sym;
          continue;
        }
        let fill = 0;
        let rep: number;
        if (sym === 16) {
          if (i === 0) {
            error = 'length repeat with no previous length';
            break;
          }
          fill = lens[i - 1];
          rep = 3 + (bb & 3);
          bb >>>= 2;
          bc -= 2;
        } else if (sym === 17) {
          rep = 3 + (bb & 7);
          bb >>>= 3;
          bc -= 3;
        } else {
          rep = 11 + (bb & 127);
          bb >>>= 7;
          bc -= 7;
        }
        if (i + rep > total) {
          error = 'code lengths repeat past the end';
          break;
        }
        lens.fill(fill, i, i + rep);
        i += rep;
      }
      if (p > end && bc < (p - end) << 3) return INFLATE_NEED_INPUT;
      if (error) throw corrupt(error);
      if (lens[256] === 0) throw corrupt('no end-of-block code');
      const litBits = buildTable(lens, 0, nlit, this.dynLit, KIND_LITLEN, LIT_ROOT);
      if (litBits < 0) throw corrupt('invalid literal/length code');
      const distBits = buildTable(lens, nlit, ndist, this.dynDist, KIND_DIST, DIST_ROOT);
      if (distBits < 0) throw corrupt('invalid distance code');
      this.litTable = this.dynLit;
      this.litBits = litBits;
      this.distTable = this.dynDist;
      this.distBits = distBits;
    } else {
      throw corrupt('invalid block type');
    }
    if (p > end) {
      bc -= (p - end) << 3;
      bb &= (1 << bc) - 1;
      p = end;
    }
    this.p = p;
    this.bb = bb;
    this.bc = bc;
    this.final = final;
    this.mode = MODE_CODES;
    return CONTINUE;
  }

  private stored(): number {
    const room = this.size - this.outBase - this.outPos;
    if (this.storedLeft > room) throw corrupt('more data than the declared size');
    const n = Math.min(this.storedLeft, this.end - this.p, this.out.length - this.outPos);
    if (n > 0) {
      this.out.set(this.src.subarray(this.p, this.p + n), this.outPos);
      this.outPos += n;
      this.p += n;
      this.storedLeft -= n;
    }
    if (this.storedLeft > 0) return this.end - this.p === 0 ? INFLATE_NEED_INPUT : INFLATE_OUTPUT_FULL;
    this.mode = this.final ? MODE_TRAILER : MODE_BLOCK;
    return CONTINUE;
  }

  private trailer(): number {
    // Give back whole bytes still in the bit buffer; the Adler-32 starts at the next byte boundary.
    this.p -= this.bc >>> 3;
    this.bb = 0;
    this.bc = 0;
    const p = this.p;
    if (this.end - p < 4) return INFLATE_NEED_INPUT;
    if (this.outBase + this.outPos !== this.size) {
      throw corrupt(`inflated to ${this.outBase + this.outPos} bytes where the entry declares ${this.size}`);
    }
    if (this.verifyChecksum) {
      const src = this.src;
      const expected = ((src[p] << 24) | (src[p + 1] << 16) | (src[p + 2] << 8) | src[p + 3]) >>> 0;
      if (adler32(this.adler, this.out, this.adlerPos, this.outPos) !== expected) {
        throw corrupt('Adler-32 check failed');
      }
    }
    this.inputEnd = p + 4;
    this.mode = MODE_DONE;
    return INFLATE_DONE;
  }

  // Decodes literals and matches until the end of the block, the end of the input or a full window.
  private codes(): number {
    const src = this.src;
    const end = this.end;
    const out = this.out;
    const lt = this.litTable;
    const dt = this.distTable;
    const lbits = this.litBits;
    const dbits = this.distBits;
    const lmask = (1 << lbits) - 1;
    const dmask = (1 << dbits) - 1;
    // `limit`: where this buffer must stop; past it the data is too big (exact buffer) or the window full.
    const sizeLeft = this.size - this.outBase;
    const limit = Math.min(out.length, sizeLeft);
    const fastIn = end - 12; // one iteration loads at most 12 bytes
    let p = this.p;
    let bb = this.bb;
    let bc = this.bc;
    let o = this.outPos;
    let status = CONTINUE;
    let error = '';

    outer: for (;;) {
      // Fast loop: enough input for any symbol, so no checks per byte. A symbol that does not fit the
      // output is undone and left to the slow path, which decides between "window full" and "too big".
      // It decodes exactly as the slow path below, minus the bounds checks, and is kept apart for speed
      // (the hot loop of every clone): a change to one must be made to the other. inflate.test.ts feeds
      // streams split at every byte, which drives both paths over the same data.
      while (p <= fastIn) {
        const sp = p;
        const sbb = bb;
        const sbc = bc;
        while (bc <= 24) {
          bb |= src[p++] << bc;
          bc += 8;
        }
        let e = lt[bb & lmask];
        if (((e >>> 4) & 15) === OP_LINK) {
          bb >>>= lbits;
          bc -= lbits;
          e = lt[(e >>> 8) + (bb & ((1 << (e & 15)) - 1))];
        }
        let n = e & 15;
        bb >>>= n;
        bc -= n;
        const op = (e >>> 4) & 15;
        if (op === 0) {
          if (o >= limit) {
            p = sp;
            bb = sbb;
            bc = sbc;
            break;
          }
          out[o++] = e >>> 8;
          continue;
        }
        if (op === OP_END) {
          this.mode = this.final ? MODE_TRAILER : MODE_BLOCK;
          break outer;
        }
        if (op > OP_END) {
          error = 'invalid literal/length code';
          break outer;
        }
        let len = e >>> 8;
        if (op > 1) {
          len += bb & ((1 << (op - 1)) - 1);
          bb >>>= op - 1;
          bc -= op - 1;
        }
        while (bc <= 24) {
          bb |= src[p++] << bc;
          bc += 8;
        }
        let d = dt[bb & dmask];
        if (((d >>> 4) & 15) === OP_LINK) {
          bb >>>= dbits;
          bc -= dbits;
          d = dt[(d >>> 8) + (bb & ((1 << (d & 15)) - 1))];
        }
        n = d & 15;
        bb >>>= n;
        bc -= n;
        const dx = (d >>> 4) & 15;
        if (dx >= OP_LINK) {
          error = 'invalid distance code';
          break outer;
        }
        let dist = d >>> 8;
        if (dx) {
          if (bc < dx) {
            while (bc <= 24) {
              bb |= src[p++] << bc;
              bc += 8;
            }
          }
          dist += bb & ((1 << dx) - 1);
          bb >>>= dx;
          bc -= dx;
        }
        if (dist > o) {
          error = 'distance too far back';
          break outer;
        }
        if (o + len > limit) {
          p = sp;
          bb = sbb;
          bc = sbc;
          break;
        }
        let from = o - dist;
        const stop = o + len;
        while (o < stop) out[o++] = out[from++];
      }

      // Slow path, one symbol: bytes past `end` load as zeros and the symbol is undone if it needed them.
      const sp = p;
      const sbb = bb;
      const sbc = bc;
      while (bc <= 24) {
        bb |= (p < end ? src[p] : 0) << bc;
        p++;
        bc += 8;
      }
      let e = lt[bb & lmask];
      if (((e >>> 4) & 15) === OP_LINK) {
        bb >>>= lbits;
        bc -= lbits;
        e = lt[(e >>> 8) + (bb & ((1 << (e & 15)) - 1))];
      }
      let n = e & 15;
      bb >>>= n;
      bc -= n;
      const op = (e >>> 4) & 15;
      let len = 0;
      let dist = 0;
      if (op > OP_END) {
        error = 'invalid literal/length code';
      } else if (op !== 0 && op !== OP_END) {
        len = e >>> 8;
        if (op > 1) {
          len += bb & ((1 << (op - 1)) - 1);
          bb >>>= op - 1;
          bc -= op - 1;
        }
        while (bc <= 24) {
          bb |= (p < end ? src[p] : 0) << bc;
          p++;
          bc += 8;
        }
        let d = dt[bb & dmask];
        if (((d >>> 4) & 15) === OP_LINK) {
          bb >>>= dbits;
          bc -= dbits;
          d = dt[(d >>> 8) + (bb & ((1 << (d & 15)) - 1))];
        }
        n = d & 15;
        bb >>>= n;
        bc -= n;
        const dx = (d >>> 4) & 15;
        if (dx >= OP_LINK) {
          error = 'invalid distance code';
        } else {
          dist = d >>> 8;
          if (dx) {
            if (bc < dx) {
              while (bc <= 24) {
                bb |= (p < end ? src[p] : 0) << bc;
                p++;
                bc += 8;
              }
            }
            dist += bb & ((1 << dx) - 1);
            bb >>>= dx;
            bc -= dx;
          }
          if (dist > o) error = 'distance too far back';
        }
      }
      if (p > end && bc < (p - end) << 3) {
        // The symbol runs past the input received so far.
        p = sp;
        bb = sbb;
        bc = sbc;
        error = '';
        status = INFLATE_NEED_INPUT;
        break;
      }
      if (error) break;
      if (op === OP_END) {
        this.mode = this.final ? MODE_TRAILER : MODE_BLOCK;
        break;
      }
      const need = op === 0 ? 1 : len;
      if (o + need > limit) {
        if (limit >= sizeLeft) {
          error = 'more data than the declared size';
          break;
        }
        p = sp;
        bb = sbb;
        bc = sbc;
        status = INFLATE_OUTPUT_FULL;
        break;
      }
      if (op === 0) {
        out[o++] = e >>> 8;
      } else {
        let from = o - dist;
        const stop = o + len;
        while (o < stop) out[o++] = out[from++];
      }
    }

    if (p > end) {
      // Drop zeros loaded past the input but not consumed: the real bytes will replace them.
      bc -= (p - end) << 3;
      bb &= (1 << bc) - 1;
      p = end;
    }
    this.p = p;
    this.bb = bb;
    this.bc = bc;
    this.outPos = o;
    if (error) throw corrupt(error);
    return status;
  }
}
