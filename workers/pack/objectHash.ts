import { createSHA1 } from 'hash-wasm';
import { isSha1HexAnyCase } from '../model/objectId.ts';

/** The four types of git object (gitformat-pack: object types), as a pack and `git cat-file -t` name them. */
export type GitObjectType = 'commit' | 'tree' | 'blob' | 'tag';

/**
 * The SHA-1 the pack layer needs: reusable, synchronous once created. Anything with this shape can stand
 * in for hash-wasm (Node's crypto in a benchmark, a SHA-256 one day).
 */
export interface Sha1 {
  init(): void;
  update(data: Uint8Array): void;
  /** Finishes the hash and writes the 20-byte digest at `out[offset]`. */
  digestInto(out: Uint8Array, offset: number): void;
}

export type Sha1Factory = () => Promise<Sha1>;

/**
 * hash-wasm's SHA-1: the WebAssembly module is compiled once, each call makes an instance with its own
 * state. Creating is async, everything after is sync, so create once and `init()` per object.
 */
export const createWasmSha1: Sha1Factory = async () => {
  const hasher = await createSHA1();
  return {
    init: () => {
      hasher.init();
    },
    update: (data) => {
      hasher.update(data);
    },
    digestInto: (out, offset) => {
      out.set(hasher.digest('binary'), offset);
    },
  };
};

// Message schedule scratch, shared: compression never re-enters.
const W = new Int32Array(80);

// One 64-byte block into the state `h` (FIPS 180-4 6.1.2). A plain function over typed arrays: as a
// method on fields, V8 ran it 3.5x slower. Four round loops avoid a branch per round.
function sha1Block(h: Int32Array, d: Uint8Array, off: number): void {
  const w = W;
  for (let t = 0; t < 16; t++) {
    const j = off + 4 * t;
    w[t] = (d[j] << 24) | (d[j + 1] << 16) | (d[j + 2] << 8) | d[j + 3];
  }
  for (let t = 16; t < 80; t++) {
    const x = w[t - 3] ^ w[t - 8] ^ w[t - 14] ^ w[t - 16];
    w[t] = (x << 1) | (x >>> 31);
  }
  let a = h[0];
  let b = h[1];
  let c = h[2];
  let e4 = h[3];
  let e = h[4];
  for (let t = 0; t < 20; t++) {
    const tmp = (((a << 5) | (a >>> 27)) + ((b & c) | (~b & e4)) + e + 0x5a827999 + w[t]) | 0;
    e = e4;
    e4 = c;
    c = (b << 30) | (b >>> 2);
    b = a;
    a = tmp;
  }
  for (let t = 20; t < 40; t++) {
    const tmp = (((a << 5) | (a >>> 27)) + (b ^ c ^ e4) + e + 0x6ed9eba1 + w[t]) | 0;
    e = e4;
    e4 = c;
    c = (b << 30) | (b >>> 2);
    b = a;
    a = tmp;
  }
  for (let t = 40; t < 60; t++) {
    const tmp = (((a << 5) | (a >>> 27)) + ((b & c) | (b & e4) | (c & e4)) + e - 0x70e44324 + w[t]) | 0;
    e = e4;
    e4 = c;
    c = (b << 30) | (b >>> 2);
    b = a;
    a = tmp;
  }
  for (let t = 60; t < 80; t++) {
    const tmp = (((a << 5) | (a >>> 27)) + (b ^ c ^ e4) + e - 0x359d3e2a + w[t]) | 0;
    e = e4;
    e4 = c;
    c = (b << 30) | (b >>> 2);
    b = a;
    a = tmp;
  }
  h[0] = (h[0] + a) | 0;
  h[1] = (h[1] + b) | 0;
  h[2] = (h[2] + c) | 0;
  h[3] = (h[3] + e4) | 0;
  h[4] = (h[4] + e) | 0;
}

/**
 * SHA-1 in plain TypeScript. Synchronous from the start, so it signs and checks .idx files without an
 * async setup; for object hashing hash-wasm is several times faster (bench/pack/ingest.bench.ts).
 */
export class JsSha1 implements Sha1 {
  private readonly h = new Int32Array(5);
  private readonly block = new Uint8Array(64);
  private blockLen = 0;
  private total = 0;

  constructor() {
    this.init();
  }

  init(): void {
    this.h.set([0x67452301, 0xefcdab89 | 0, 0x98badcfe | 0, 0x10325476, 0xc3d2e1f0 | 0]);
    this.blockLen = 0;
    this.total = 0;
  }

  update(data: Uint8Array): void {
    let i = 0;
    const n = data.length;
    this.total += n;
    if (this.blockLen > 0) {
      const take = Math.min(64 - this.blockLen, n);
      this.block.set(data.subarray(0, take), this.blockLen);
      this.blockLen += take;
      i = take;
      if (this.blockLen < 64) return;
      sha1Block(this.h, this.block, 0);
      this.blockLen = 0;
    }
    for (; i + 64 <= n; i += 64) sha1Block(this.h, data, i);
    if (i < n) {
      this.block.set(data.subarray(i), 0);
      this.blockLen = n - i;
    }
  }

  digestInto(out: Uint8Array, offset: number): void {
    const bits = this.total * 8;
    const block = this.block;
    block[this.blockLen++] = 0x80;
    if (this.blockLen > 56) {
      block.fill(0, this.blockLen);
      sha1Block(this.h, block, 0);
      this.blockLen = 0;
    }
    block.fill(0, this.blockLen, 56);
    const hi = Math.floor(bits / 2 ** 32);
    const lo = bits >>> 0;
    block[56] = hi >>> 24;
    block[57] = hi >>> 16;
    block[58] = hi >>> 8;
    block[59] = hi;
    block[60] = lo >>> 24;
    block[61] = lo >>> 16;
    block[62] = lo >>> 8;
    block[63] = lo;
    sha1Block(this.h, block, 0);
    for (let k = 0; k < 5; k++) {
      const v = this.h[k];
      out[offset + 4 * k] = v >>> 24;
      out[offset + 4 * k + 1] = v >>> 16;
      out[offset + 4 * k + 2] = v >>> 8;
      out[offset + 4 * k + 3] = v;
    }
    this.init();
  }
}

export const createJsSha1: Sha1Factory = async () => new JsSha1();

/** SHA-1 of `data`, synchronously. */
export function sha1(data: Uint8Array): Uint8Array {
  const h = new JsSha1();
  h.update(data);
  const out = new Uint8Array(20);
  h.digestInto(out, 0);
  return out;
}

const TYPE_NAMES: Record<GitObjectType, Uint8Array> = {
  commit: new TextEncoder().encode('commit '),
  tree: new TextEncoder().encode('tree '),
  blob: new TextEncoder().encode('blob '),
  tag: new TextEncoder().encode('tag '),
};

/** Computes object ids: SHA-1 of `<type> <size>\0<data>` (gitformat-loose / "Object format"). */
export class ObjectHasher {
  private readonly header = new Uint8Array(32);

  constructor(private readonly sha1: Sha1) {}

  /** Starts an object; the caller then passes exactly `size` bytes to `update`. */
  begin(type: GitObjectType, size: number): void {
    const name = TYPE_NAMES[type];
    const header = this.header;
    header.set(name);
    let n = name.length;
    const digits = String(size);
    for (let i = 0; i < digits.length; i++) header[n++] = digits.charCodeAt(i);
    header[n++] = 0;
    this.sha1.init();
    this.sha1.update(header.subarray(0, n));
  }

  update(data: Uint8Array): void {
    this.sha1.update(data);
  }

  end(out: Uint8Array, offset: number): void {
    this.sha1.digestInto(out, offset);
  }

  /** Hashes a whole object, writing its 20-byte id at `out[offset]`. */
  hash(type: GitObjectType, data: Uint8Array, out: Uint8Array, offset: number): void {
    this.begin(type, data.length);
    this.sha1.update(data);
    this.sha1.digestInto(out, offset);
  }
}

const HEX: readonly string[] = Array.from({ length: 256 }, (_, i) => i.toString(16).padStart(2, '0'));

/** Lowercase hex of `bytes[offset, offset + length)`. */
export function toHex(bytes: Uint8Array, offset = 0, length = bytes.length - offset): string {
  let s = '';
  for (let i = offset; i < offset + length; i++) s += HEX[bytes[i]];
  return s;
}

/** Parses a 40-digit hex object id; throws TypeError if it is not one. */
export function oidFromHex(hex: string): Uint8Array {
  if (!isSha1HexAnyCase(hex)) throw new TypeError(`Not a SHA-1 object id: ${JSON.stringify(hex)}`);
  const out = new Uint8Array(20);
  for (let i = 0; i < 20; i++) out[i] = Number.parseInt(hex.slice(2 * i, 2 * i + 2), 16);
  return out;
}
