// A deflate writer for the inflater's tests: it writes what zlib's deflate never does (codes 15 bits long,
// every repeat code, headers broken on purpose), so the tests reach every path of inflate.ts, with node:zlib
// as the oracle of what each stream means.

/** Bits written least significant first, Huffman codes most significant first (RFC 1951 3.1.1). */
export class BitWriter {
  private readonly bytes: number[] = [];
  private acc = 0;
  private n = 0;

  bits(value: number, count: number): this {
    for (let i = 0; i < count; i++) this.bit((value >>> i) & 1);
    return this;
  }

  code(code: number, length: number): this {
    for (let i = length - 1; i >= 0; i--) this.bit((code >>> i) & 1);
    return this;
  }

  /** Pads to a byte boundary with zeros. */
  align(): this {
    while (this.n !== 0) this.bit(0);
    return this;
  }

  raw(bytes: ArrayLike<number>): this {
    this.align();
    for (let i = 0; i < bytes.length; i++) this.bytes.push(bytes[i]);
    return this;
  }

  finish(): Uint8Array {
    this.align();
    return Uint8Array.from(this.bytes);
  }

  private bit(b: number): void {
    this.acc |= b << this.n;
    if (++this.n === 8) {
      this.bytes.push(this.acc);
      this.acc = 0;
      this.n = 0;
    }
  }
}

/** Canonical codes of `lens` (RFC 1951 3.2.2); 0 where the length is 0. */
export function canonicalCodes(lens: ArrayLike<number>): number[] {
  const count = new Array(16).fill(0);
  for (let i = 0; i < lens.length; i++) if (lens[i]) count[lens[i]]++;
  const next = new Array(16).fill(0);
  let code = 0;
  for (let len = 1; len < 16; len++) {
    code = (code + count[len - 1]) << 1;
    next[len] = code;
  }
  const codes: number[] = [];
  for (let i = 0; i < lens.length; i++) codes.push(lens[i] ? next[lens[i]]++ : 0);
  return codes;
}

/** A small seeded generator (xorshift32) so every crafted stream is the same on every run. */
export function prng(seed: number): (n: number) => number {
  let s = seed >>> 0 || 1;
  return (n: number) => {
    s ^= s << 13;
    s >>>= 0;
    s ^= s >>> 17;
    s ^= s << 5;
    s >>>= 0;
    return s % n;
  };
}

/**
 * Lengths of a complete prefix code for `n` symbols (n >= 2), none longer than `maxLen`: a random tree,
 * grown by splitting leaves, the deepest ones more often so codes reach `maxLen`.
 */
export function completeLengths(n: number, maxLen: number, rand: (n: number) => number): number[] {
  const leaves = [0];
  while (leaves.length < n) {
    const open = leaves.map((d, i) => [d, i]).filter(([d]) => d < maxLen);
    if (open.length === 0) throw new Error(`no complete code of ${n} symbols within ${maxLen} bits`);
    open.sort((a, b) => b[0] - a[0]);
    const pick = rand(3) === 0 ? open[0] : open[rand(open.length)];
    leaves[pick[1]] = pick[0] + 1;
    leaves.push(pick[0] + 1);
  }
  return leaves;
}

const CODELEN_ORDER = [16, 17, 18, 0, 8, 7, 9, 6, 10, 5, 11, 4, 12, 3, 13, 2, 14, 1, 15];

export interface DynamicHeader {
  /** Literal/length code lengths (257..288 entries) then distance code lengths (1..32 entries). */
  litLens: number[];
  distLens: number[];
  /** Code-length symbols to send in place of the lengths ([symbol, extra value]); by default run-length coded. */
  symbols?: [number, number][];
  /** Code-length code lengths, by symbol 0..18; by default a complete code over the symbols used. */
  codelenLens?: number[];
  /** HCLEN + 4, the count of code length code lengths sent; by default up to the last non-zero. */
  ncode?: number;
}

/** The code-length symbols that send `lens`, using the repeat codes 16, 17 and 18 where they fit. */
export function runLengthSymbols(lens: number[]): [number, number][] {
  const out: [number, number][] = [];
  let i = 0;
  while (i < lens.length) {
    const v = lens[i];
    let run = 1;
    while (i + run < lens.length && lens[i + run] === v) run++;
    if (v === 0 && run >= 11) {
      const r = Math.min(run, 138);
      out.push([18, r - 11]);
      i += r;
    } else if (v === 0 && run >= 3) {
      out.push([17, run - 3]);
      i += run;
    } else if (v !== 0 && run >= 4) {
      out.push([v, 0]);
      const r = Math.min(run - 1, 6);
      out.push([16, r - 3]);
      i += 1 + r;
    } else {
      out.push([v, 0]);
      i++;
    }
  }
  return out;
}

const EXTRA_BITS: Record<number, number> = { 16: 2, 17: 3, 18: 7 };

/** Writes a dynamic block's header (BTYPE 2) and returns the literal/length and distance codes it declares. */
export function writeDynamicHeader(
  w: BitWriter,
  final: boolean,
  h: DynamicHeader,
  rand: (n: number) => number,
): { lit: number[]; dist: number[] } {
  const symbols = h.symbols ?? runLengthSymbols([...h.litLens, ...h.distLens]);
  let clens = h.codelenLens;
  if (!clens) {
    const used = [...new Set(symbols.map(([s]) => s))];
    if (used.length === 1) used.push(used[0] === 0 ? 1 : 0);
    const lens = completeLengths(used.length, 7, rand);
    clens = new Array(19).fill(0);
    used.forEach((s, i) => {
      (clens as number[])[s] = lens[i];
    });
  }
  let ncode = h.ncode ?? 19;
  if (h.ncode === undefined) while (ncode > 4 && clens[CODELEN_ORDER[ncode - 1]] === 0) ncode--;
  w.bits(final ? 1 : 0, 1).bits(2, 2);
  w.bits(h.litLens.length - 257, 5)
    .bits(h.distLens.length - 1, 5)
    .bits(ncode - 4, 4);
  for (let i = 0; i < ncode; i++) w.bits(clens[CODELEN_ORDER[i]], 3);
  const ccodes = canonicalCodes(clens);
  for (const [s, extra] of symbols) {
    w.code(ccodes[s], clens[s]);
    if (s >= 16) w.bits(extra, EXTRA_BITS[s]);
  }
  return { lit: canonicalCodes(h.litLens), dist: canonicalCodes(h.distLens) };
}

// RFC 1951 3.2.5
export const LEN_BASE = [
  3, 4, 5, 6, 7, 8, 9, 10, 11, 13, 15, 17, 19, 23, 27, 31, 35, 43, 51, 59, 67, 83, 99, 115, 131, 163, 195,
  227, 258,
];
export const LEN_EXTRA = [
  0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3, 4, 4, 4, 4, 5, 5, 5, 5, 0,
];
export const DIST_BASE = [
  1, 2, 3, 4, 5, 7, 9, 13, 17, 25, 33, 49, 65, 97, 129, 193, 257, 385, 513, 769, 1025, 1537, 2049, 3073, 4097,
  6145, 8193, 12289, 16385, 24577,
];
export const DIST_EXTRA = [
  0, 0, 0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6, 6, 7, 7, 8, 8, 9, 9, 10, 10, 11, 11, 12, 12, 13, 13,
];

/** The fixed codes (RFC 1951 3.2.6). */
export const FIXED_LIT_LENS = [
  ...new Array(144).fill(8),
  ...new Array(112).fill(9),
  ...new Array(24).fill(7),
  ...new Array(8).fill(8),
];
export const FIXED_DIST_LENS = new Array(32).fill(5);

/**
 * Writes `count` random symbols with the codes given (every match within the `produced` bytes so far,
 * unless `farBack`), then the end of block; returns the bytes produced so far.
 */
export function writeSymbols(
  w: BitWriter,
  codes: { lit: number[]; dist: number[]; litLens: number[]; distLens: number[] },
  count: number,
  produced: number,
  rand: (n: number) => number,
): number {
  const lits: number[] = [];
  const lengths: number[] = [];
  for (let s = 0; s < codes.litLens.length && s < 286; s++) {
    if (!codes.litLens[s]) continue;
    if (s < 256) lits.push(s);
    else if (s > 256) lengths.push(s);
  }
  const dists: number[] = [];
  for (let s = 0; s < codes.distLens.length && s < 30; s++) if (codes.distLens[s]) dists.push(s);
  let o = produced;
  for (let k = 0; k < count; k++) {
    const near = dists.filter((d) => DIST_BASE[d] <= o);
    if (lengths.length && near.length && (lits.length === 0 || rand(2) === 0)) {
      const ls = lengths[rand(lengths.length)];
      const le = LEN_EXTRA[ls - 257];
      const lx = rand(1 << le);
      w.code(codes.lit[ls], codes.litLens[ls]).bits(lx, le);
      const ds = near[rand(near.length)];
      const de = DIST_EXTRA[ds];
      const dx = Math.min(rand(1 << de), o - DIST_BASE[ds]);
      w.code(codes.dist[ds], codes.distLens[ds]).bits(dx, de);
      o += LEN_BASE[ls - 257] + lx;
    } else if (lits.length) {
      const s = lits[rand(lits.length)];
      w.code(codes.lit[s], codes.litLens[s]);
      o++;
    }
  }
  w.code(codes.lit[256], codes.litLens[256]);
  return o;
}

/** zlib's wrapper (RFC 1950) around a raw deflate stream, with the Adler-32 of `data`. */
export function zlibWrap(raw: Uint8Array, adler: number): Uint8Array {
  const out = new Uint8Array(raw.length + 6);
  out[0] = 0x78;
  out[1] = 0x9c;
  out.set(raw, 2);
  const t = raw.length + 2;
  out[t] = adler >>> 24;
  out[t + 1] = (adler >>> 16) & 0xff;
  out[t + 2] = (adler >>> 8) & 0xff;
  out[t + 3] = adler & 0xff;
  return out;
}
