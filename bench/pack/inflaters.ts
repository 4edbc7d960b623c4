// The inflaters the benchmark compares with ours, adapted to the ingester's StreamInflater interface.
// Benchmark-only: the product uses workers/pack/inflate.ts.

import { Inflate as FflateInflate } from 'fflate';
import {
  Z_BUF_ERROR,
  Z_FINISH,
  Z_OK,
  Z_STREAM_END,
  ZStream,
  zlibInflate,
  zlibInflateInit,
  zlibInflateReset,
} from 'pako';
import { PackError } from '../../workers/pack/errors.ts';
import {
  INFLATE_DONE,
  INFLATE_NEED_INPUT,
  INFLATE_OUTPUT_FULL,
  type InflateStatus,
  type StreamInflater,
} from '../../workers/pack/inflate.ts';

const corrupt = (what: string) => new PackError('PACK_CORRUPT', `Compressed data is invalid: ${what}.`);

/** pako 3's low-level zlib port: one ZStream reused with inflateReset; it reports next_in itself. */
export class PakoInflater implements StreamInflater {
  inputEnd = 0;
  out: Uint8Array = new Uint8Array(0);
  outPos = 0;
  outStart = 0;
  private readonly strm = new ZStream();
  private initialized = false;
  private size = 0;
  private produced = 0;

  start(src: Uint8Array, start: number, out: Uint8Array, size: number): void {
    const strm = this.strm;
    if (this.initialized) zlibInflateReset(strm);
    else {
      zlibInflateInit(strm);
      this.initialized = true;
    }
    strm.input = src;
    strm.next_in = start;
    strm.avail_in = 0;
    strm.output = out as Uint8Array<ArrayBuffer>;
    strm.next_out = 0;
    strm.avail_out = Math.min(out.length, size);
    this.out = out;
    this.outPos = 0;
    this.outStart = 0;
    this.size = size;
    this.produced = 0;
  }

  run(src: Uint8Array, end: number): InflateStatus {
    const strm = this.strm;
    strm.input = src;
    strm.avail_in = end - strm.next_in;
    const before = strm.next_out;
    // Z_FINISH: when the stream completes in this call, zlib skips copying the output to its window.
    const ret = zlibInflate(strm, Z_FINISH);
    this.produced += strm.next_out - before;
    this.outPos = strm.next_out;
    if (ret === Z_STREAM_END) {
      if (this.produced !== this.size) throw corrupt('size mismatch');
      this.inputEnd = strm.next_in;
      return INFLATE_DONE;
    }
    if (ret !== Z_OK && ret !== Z_BUF_ERROR) throw corrupt(strm.msg || `zlib error ${ret}`);
    if (strm.avail_in === 0) return INFLATE_NEED_INPUT;
    if (this.produced >= this.size) throw corrupt('more data than declared');
    return INFLATE_OUTPUT_FULL;
  }

  slide(): void {
    // zlib keeps its own window: the whole output buffer is free again.
    this.strm.next_out = 0;
    this.strm.avail_out = Math.min(this.out.length, this.size - this.produced);
    this.outPos = 0;
    this.outStart = 0;
  }
}

interface FflateState {
  f?: number; // final block seen
  l?: unknown; // current literal table (unset at block end)
  p?: number; // bit position in the pending input
}
interface FflateInternals {
  s: FflateState & { i: number; b: number };
  o: Uint8Array;
  p: Uint8Array;
  d: boolean;
  ondata: (chunk: Uint8Array, final: boolean) => void;
  push(chunk: Uint8Array, final?: boolean): void;
}

/**
 * fflate 0.8's streaming Inflate, with its private state read to learn where the deflate stream ended
 * (`s.f && !s.l`: final block done; `p` holds the input not consumed, `s.p` the bit position in it). No
 * Adler-32 check (fflate's Unzlib does not check it either). Exact-size output only.
 */
export class FflateInflater implements StreamInflater {
  inputEnd = 0;
  out: Uint8Array = new Uint8Array(0);
  outPos = 0;
  outStart = 0;
  private readonly inst: FflateInternals;
  private pos = 0; // absolute offset of inst.p[0]
  private given = 0; // absolute offset of the end of input handed to fflate
  private header = true;
  private deflateDone = false;
  private size = 0;

  constructor() {
    this.inst = new FflateInflate(() => {}) as unknown as FflateInternals;
    this.inst.ondata = (chunk) => {
      if (this.outPos + chunk.length > this.out.length) throw corrupt('more data than declared');
      this.out.set(chunk, this.outPos);
      this.outPos += chunk.length;
    };
  }

  start(src: Uint8Array, start: number, out: Uint8Array, size: number): void {
    if (out.length < size) throw new Error('FflateInflater supports exact-size output only');
    const inst = this.inst;
    inst.s = { i: 0, b: 0 };
    inst.o = new Uint8Array(0);
    inst.p = new Uint8Array(0);
    inst.d = false;
    this.out = out;
    this.outPos = 0;
    this.size = size;
    this.pos = start;
    this.given = start;
    this.header = true;
    this.deflateDone = false;
    void src;
  }

  run(src: Uint8Array, end: number): InflateStatus {
    if (this.header) {
      if (end - this.given < 2) return INFLATE_NEED_INPUT;
      if ((src[this.given] & 15) !== 8) throw corrupt('not zlib');
      this.given += 2;
      this.pos = this.given;
      this.header = false;
    }
    const inst = this.inst;
    while (!this.deflateDone) {
      if (this.given >= end) return INFLATE_NEED_INPUT;
      // Hand over a bounded slice: fflate copies whatever it has not consumed after every push.
      const bound = this.given + Math.max(1024, (this.size - this.outPos) * 1.01 + 64);
      const stop = Math.min(end, Math.ceil(bound));
      const before = inst.p.length + (stop - this.given);
      try {
        inst.push(src.subarray(this.given, stop));
      } catch (e) {
        throw corrupt(String((e as Error).message));
      }
      this.given = stop;
      this.pos += before - inst.p.length;
      if (inst.s.f && !inst.s.l) this.deflateDone = true;
    }
    const deflateEnd = this.pos + (((inst.s.p ?? 0) + 7) >> 3);
    if (end - deflateEnd < 4) {
      // Keep state: the trailer is not all here yet.
      return INFLATE_NEED_INPUT;
    }
    if (this.outPos !== this.size) throw corrupt('size mismatch');
    this.inputEnd = deflateEnd + 4;
    return INFLATE_DONE;
  }

  slide(): void {
    throw new Error('FflateInflater has no window mode');
  }
}
