// Receives a pack as it streams in and turns it into what the store keeps: the pack bytes, its .idx and the
// list of objects. One pass over the bytes as they arrive (gitformat-pack: "pack-*.pack files"), then delta
// resolution the way `git index-pack` does it: each delta tree walked depth first from its non-delta base,
// re-inflating entries from the kept pack bytes, holding only the current chain's objects.

import { crc32 } from './crc32.ts';
import { deflate } from './deflate.ts';
import { applyDelta, deltaResultSize } from './delta.ts';
import { formatBytes, objectTooLarge, PackError, throwIfAborted } from './errors.ts';
import {
  INFLATE_DONE,
  INFLATE_NEED_INPUT,
  INFLATE_OUTPUT_FULL,
  Inflater,
  type StreamInflater,
} from './inflate.ts';
import {
  createWasmSha1,
  type GitObjectType,
  ObjectHasher,
  oidFromHex,
  type Sha1,
  type Sha1Factory,
  toHex,
} from './objectHash.ts';
import { compareOids, writePackIndexV2Tables } from './packIndexWriter.ts';
import { DEFAULT_PACK_LIMITS, inflateBudget, type PackLimits } from './packLimits.ts';
import { releaseBuffer } from './releaseBuffer.ts';

export type PackProgress =
  | { phase: 'receiving'; bytes: number; objects: number; totalObjects: number }
  | { phase: 'resolving'; resolved: number; total: number };

export interface IngestedObject {
  oid: string;
  type: GitObjectType;
  /** Offset of the entry in the pack. */
  offset: number;
  /** CRC-32 of the entry's raw bytes (header and compressed data), as the .idx records it. */
  crc32: number;
  /** Size of the object itself (for a delta, of the object it resolves to). */
  size: number;
}

export interface IngestedPack {
  /** The pack bytes exactly as received, trailer included; the whole of its ArrayBuffer. */
  pack: Uint8Array;
  /** Hex trailing SHA-1: the name of pack-<checksum>.pack. */
  checksum: string;
  /** Version-2 .idx, byte-identical to `git index-pack`'s for the same pack. */
  idx: Uint8Array;
  /** Every object, in pack order. */
  objects: IngestedObject[];
  counts: Record<GitObjectType, number>;
  /** Objects appended from the repo to complete a thin pack (see `externalBase`); 0 for a whole pack. */
  appendedBases: number;
}

/** An object the repo already holds, as `externalBase` returns it. */
export interface ExternalObject {
  type: GitObjectType;
  data: Uint8Array;
}

export interface PackIngesterOptions {
  onProgress?: (progress: PackProgress) => void;
  signal?: AbortSignal;
  /** Expected pack size in bytes, to size the receive buffer once. */
  expectedSizeHint?: number;
  /** SHA-1 implementation; hash-wasm unless replaced (benchmarks, tests). */
  sha1?: Sha1Factory;
  /** Inflater; ours unless replaced (the benchmark compares others). */
  inflater?: () => StreamInflater;
  /**
   * Objects up to this size are inflated whole while receiving; bigger ones stream through a 1 MiB
   * window and are hashed piece by piece, so a huge blob is never held whole unless a delta needs it.
   * Default 16 MiB.
   */
  wholeObjectLimit?: number;
  /**
   * Bytes of resolved delta bases kept while walking a delta chain before the oldest are dropped and
   * rebuilt on demand. Default 96 MiB, git's core.deltaBaseCacheLimit.
   */
  deltaBaseCacheLimit?: number;
  /** Caps on object sizes and on what the pack may inflate to; DEFAULT_PACK_LIMITS where absent. */
  limits?: Partial<PackLimits>;
  /**
   * For a thin pack (gitprotocol-v2: fetch, `thin-pack`): finds a ref-delta's base that the pack lacks
   * among the repo's own objects (null when it has none). Each base found is appended to the pack as a whole
   * object and the header and trailer are rewritten, as `git index-pack --fix-thin` does, so the stored pack
   * stands alone. Without it, such a delta is PACK_DELTA_BASE_MISSING.
   */
  externalBase?: (oid: string) => Promise<ExternalObject | null>;
}

// gitformat-pack: object types in entry headers. 5 is reserved, 0 invalid.
const OBJ_OFS_DELTA = 6;
const OBJ_REF_DELTA = 7;
// Indexed by type code 1..4; slot 0 is never read for a resolved object.
const TYPE_NAMES: readonly GitObjectType[] = ['commit', 'commit', 'tree', 'blob', 'tag'];
const TYPE_CODES: Record<GitObjectType, number> = { commit: 1, tree: 2, blob: 3, tag: 4 };

// Receive states.
const S_HEADER = 0;
const S_ENTRY = 1;
const S_DATA = 2;
const S_TRAILER = 3;
// An entry failed to parse in the last 20 bytes received: it may be the trailer of a pack whose header
// counts more objects than it holds, which only the bytes still to come (or their absence) can tell.
const S_SUSPECT = 4;

const PROGRESS_BYTES = 64 * 1024;

const WHOLE_OBJECT_LIMIT = 16 * 1024 * 1024;
const WINDOW_SIZE = 1024 * 1024;
const YIELD_INTERVAL_MS = 100;

function yieldToEventLoop(): Promise<void> {
  const scheduler = (globalThis as { scheduler?: { yield?: () => Promise<void> } }).scheduler;
  if (scheduler?.yield) return scheduler.yield();
  return new Promise((resolve) => setTimeout(resolve, 0));
}

const plural = (n: number, noun: string) => `${n} ${noun}${n === 1 ? '' : 's'}`;

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

function typeName(code: number): GitObjectType {
  return TYPE_NAMES[code];
}

/**
 * A few spare buffers for resolved objects. A delta chain yields objects of similar sizes one after the
 * other, so reusing the buffer of the base just dropped spares the allocator and the GC.
 */
class BufferPool {
  private readonly spare: ArrayBuffer[] = [];

  take(size: number): Uint8Array {
    const spare = this.spare;
    for (let i = 0; i < spare.length; i++) {
      if (spare[i].byteLength >= size) {
        const buffer = spare[i];
        spare[i] = spare[spare.length - 1];
        spare.pop();
        return new Uint8Array(buffer, 0, size);
      }
    }
    // Room to grow: the next version of a tree or file is often a little bigger.
    return new Uint8Array(new ArrayBuffer(size + (size >>> 3) + 256), 0, size);
  }

  give(data: Uint8Array): void {
    if (this.spare.length < 8) this.spare.push(data.buffer as ArrayBuffer);
  }
}

/*
 * The receive buffer holds the whole pack (deltas are resolved from it at the end). Where ArrayBuffers are
 * resizable (ES2024: Chromium 111, Node 20) it grows in place: the engine reserves address space up to
 * RECEIVE_RESERVE and commits pages as they fill, so receiving a pack holds it once, where doubling held up to
 * three times its size while copying (measured on large.git's 39 MB pack: bench `clonePeakHeapMB`). Past
 * the reserve, or without resizable buffers, it doubles as before.
 */
const RECEIVE_RESERVE = 2 ** 32;
// Each resize is a system call: grow by at least this much. What it grows beyond the pack is held at the
// clone's peak (the end of receiving). Ingesting large.pack (39 MB) in 64 KiB pushes, median of 3 on the
// shared 2-core machine (noise ±200 ms, load 3-4): 4 MiB steps 2248 ms, 1 MiB 2259 ms; 1 MiB 2334 ms,
// 256 KiB 2195 ms. medium.pack alike (403 and 397 ms).
const RECEIVE_STEP = 256 * 1024;

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

type Table = Float64Array | Int32Array | Uint32Array | Uint8Array;

/** Growable array of numbers backed by a typed array. */
function grow<T extends Table>(a: T, length: number): T {
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
const TABLE_RESERVE_OBJECTS = 1 << 24;

/** An empty per-object table of `Ctor` (`width` numbers per object) that grows in place up to `objects`. */
function reservedTable<T extends Table>(
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

/**
 * The arrival cache: recently received objects in one ring of bytes, so keeping them allocates nothing (one
 * typed array per object cost a clone of medium.git more in the collector than it saved in inflating). An
 * entry's bytes stay valid until the ring comes round over them; `written` counts every byte ever placed.
 */
export class ArrivalRing {
  private readonly bytes: Uint8Array;
  // Bytes placed since the ring last started over; kept under 2^32 so that a start fits 32 bits.
  private written = 0;
  // Per entry: 1 + where it was placed (in `written` terms), 0 for none. 32 bits, not 64: 1.7 MB for
  // large.git's 430,113 entries, held at the clone's peak (the end of receiving).
  private starts = new Uint32Array(0);

  /** `wrapAt`: the bound on `written` (2^32; smaller in tests, to see the ring start over). */
  constructor(
    size: number,
    private readonly wrapAt = 2 ** 32,
  ) {
    this.bytes = new Uint8Array(size);
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
    return this.bytes.length / 4;
  }

  /**
   * Before an entry's reads and placements: near 2^32 bytes placed, the ring starts over empty (once every
   * 4 GiB of objects), never in the middle of an entry, whose base and result it holds at once.
   */
  beginEntry(): void {
    if (this.written < this.wrapAt - 4 * this.bytes.length) return;
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
    return this.starts[i] - 1 < this.written - this.bytes.length / 2;
  }

  /** Room for entry `i`'s `length` bytes at the head; what it overwrites is no longer valid. */
  place(i: number, length: number): Uint8Array {
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

export class PackIngester {
  private readonly onProgress?: (progress: PackProgress) => void;
  private readonly signal?: AbortSignal;
  private readonly deltaBaseCacheLimit: number;
  private readonly externalBase?: (oid: string) => Promise<ExternalObject | null>;
  private appendedBases = 0;
  private fixedChecksum: Uint8Array | null = null;
  private readonly wholeObjectLimit: number;
  private readonly limits: PackLimits;
  /** Bytes inflated so far: entries as received, then delta results; held to the inflate budget. */
  private inflated = 0;
  private readonly packSha: Sha1;
  private readonly objSha: Sha1;
  private readonly hasher: ObjectHasher;
  private readonly inflater: StreamInflater;

  // Received bytes: buf[0, len).
  private buf: Uint8Array;
  private len = 0;
  private hashedUpTo = 0;
  private lastProgressBytes = 0;

  private state = S_HEADER;
  private failed: unknown = null;
  private finished = false;
  private suspect: PackError | null = null;
  private computedChecksum: Uint8Array | null = null;

  private version = 0;
  private count = 0;
  private parsed = 0;

  // Current entry.
  private entryStart = 0;
  private entryKind = 0;
  private entrySize = 0;
  private hashing = false;
  private scratch = new Uint8Array(64 * 1024);
  private window: Uint8Array | null = null;

  // Per entry, in pack order.
  private capacity = 0;
  private offsets = new Float64Array(0);
  private headerLengths = new Uint8Array(0);
  private kinds = new Uint8Array(0); // type code in the entry header
  private types = new Uint8Array(0); // resolved object type (1..4), 0 while unknown
  // Sizes fit 32 bits: maxObjectSize is capped below 4 GiB (see the constructor).
  private entrySizes = new Uint32Array(0); // size in the entry header (delta size for deltas)
  private objectSizes = new Uint32Array(0);
  private crcs = new Uint32Array(0);
  private oids = new Uint8Array(0);
  private bases = new Int32Array(0); // ofs-delta: index of the base entry; else -1
  private deltaCount = 0;
  // Deltas resolved as they arrived (types[i] set), and the bases kept for that, by entry, oldest first.
  private arrivalResolved = 0;
  private arrivalCache: ArrivalRing | null;
  private arrivalScratch = new Uint8Array(0);
  private resolvingOnArrival = false;
  // Ref-deltas: entry index and base id.
  private refEntries = new Int32Array(16);
  private refBaseOids = new Uint8Array(16 * 20);
  private refCount = 0;

  private constructor(options: PackIngesterOptions, packSha: Sha1, objSha: Sha1) {
    this.onProgress = options.onProgress;
    this.signal = options.signal;
    this.deltaBaseCacheLimit = options.deltaBaseCacheLimit ?? 96 * 1024 * 1024;
    const limits = { ...DEFAULT_PACK_LIMITS, ...options.limits };
    // Object sizes are kept in 32 bits; no browser holds a 4 GiB object in one ArrayBuffer anyway.
    this.limits = { ...limits, maxObjectSize: Math.min(limits.maxObjectSize, 2 ** 32 - 1) };
    this.arrivalCache =
      this.limits.arrivalCacheBytes > 0 ? new ArrivalRing(this.limits.arrivalCacheBytes) : null;
    this.externalBase = options.externalBase;
    this.wholeObjectLimit = options.wholeObjectLimit ?? WHOLE_OBJECT_LIMIT;
    this.packSha = packSha;
    this.objSha = objSha;
    this.hasher = new ObjectHasher(objSha);
    this.inflater = options.inflater?.() ?? new Inflater();
    const hint = options.expectedSizeHint;
    this.buf = receiveBuffer(hint && hint > 0 ? Math.min(hint, 2 ** 31) : 1024 * 1024);
  }

  static async create(options: PackIngesterOptions = {}): Promise<PackIngester> {
    const factory = options.sha1 ?? createWasmSha1;
    const [packSha, objSha] = await Promise.all([factory(), factory()]);
    packSha.init();
    return new PackIngester(options, packSha, objSha);
  }

  /** Takes the next bytes of the pack (any split) and parses every entry they complete. */
  push(chunk: Uint8Array): void {
    if (this.failed) throw this.failed;
    if (this.finished) throw new Error('PackIngester.push called after finish');
    try {
      throwIfAborted(this.signal);
      this.append(chunk);
      this.parse();
      if (this.hashedUpTo < this.entryStart) {
        this.packSha.update(this.buf.subarray(this.hashedUpTo, this.entryStart));
        this.hashedUpTo = this.entryStart;
      }
      if (this.state === S_TRAILER) this.checkTrailerEarly();
      if (this.len - this.lastProgressBytes >= PROGRESS_BYTES) this.reportReceiving();
    } catch (e) {
      this.failed = e;
      throw e;
    }
  }

  /** Checks the trailer, resolves deltas and writes the index. */
  /**
   * After the last byte, before finish(): the pack exactly as received, its trailing checksum verified,
   * so a caller can store it while finish() resolves its deltas and writes its index. Only for a pack
   * that is never completed with outside bases (no `externalBase`): its bytes are then final, and
   * finish() hands over the same bytes. Throws what finish() would for a truncated or corrupt end.
   */
  received(): { pack: Uint8Array; checksum: string } {
    if (this.failed) throw this.failed;
    if (this.externalBase) throw new Error('PackIngester.received is for packs completed by nothing else');
    try {
      const checksum = this.checkEnd();
      // The resolver reads the pack from this.buf; it is the same memory, now at its exact length.
      this.buf = fixedLength(this.buf, this.len);
      return { pack: this.buf, checksum: toHex(checksum) };
    } catch (e) {
      this.failed = e;
      throw e;
    }
  }

  /**
   * `objects: false`: the caller never reads `objects` (a clone needs only the counts), so the per-object
   * tables are freed as soon as the .idx is made: 15 MB of large.git's write step. Reading it then throws.
   */
  async finish(options: { objects?: boolean } = {}): Promise<IngestedPack> {
    if (this.failed) throw this.failed;
    if (this.finished) throw new Error('PackIngester.finish called twice');
    this.finished = true;
    try {
      throwIfAborted(this.signal);
      const checksum = this.checkEnd();
      await this.resolveDeltas();
      throwIfAborted(this.signal);
      return this.result(this.fixedChecksum ?? checksum, options.objects ?? true);
    } catch (e) {
      this.failed = e;
      throw e;
    } finally {
      this.scratch = new Uint8Array(0);
      this.window = null;
      this.arrivalCache = null;
    }
  }

  private append(chunk: Uint8Array): void {
    const needed = this.len + chunk.length;
    if (needed > this.buf.length) this.buf = growReceiveBuffer(this.buf, this.len, needed);
    this.buf.set(chunk, this.len);
    this.len = needed;
  }

  private reportReceiving(): void {
    this.lastProgressBytes = this.len;
    this.onProgress?.({
      phase: 'receiving',
      bytes: this.len,
      objects: this.parsed,
      totalObjects: this.count,
    });
  }

  private parse(): void {
    try {
      this.parseSteps();
    } catch (e) {
      // An entry that fails within the last 20 bytes received may be a trailer: decide when more comes.
      // A delta that does not apply was received whole: no trailer can explain it.
      const inEntry = (this.state === S_ENTRY || this.state === S_DATA) && !this.resolvingOnArrival;
      if (e instanceof PackError && inEntry && this.len - this.entryStart <= 20) {
        this.suspect = e;
        this.state = S_SUSPECT;
        return;
      }
      throw e;
    }
  }

  private parseSteps(): void {
    for (;;) {
      switch (this.state) {
        case S_HEADER:
          if (!this.parseHeader()) return;
          break;
        case S_ENTRY:
          if (this.parsed === this.count) {
            this.endEntries();
            return;
          }
          if (!this.parseEntryHeader()) return;
          break;
        case S_DATA:
          if (!this.inflateEntry()) return;
          if (this.signal?.aborted) throwIfAborted(this.signal);
          break;
        case S_SUSPECT:
          if (this.len - this.entryStart > 20) throw this.suspect;
          return;
        default:
          return;
      }
    }
  }

  private parseHeader(): boolean {
    const b = this.buf;
    const n = Math.min(this.len, 4);
    for (let i = 0; i < n; i++) {
      if (b[i] !== 'PACK'.charCodeAt(i)) {
        throw new PackError(
          'PACK_SIGNATURE',
          'The data received is not a git pack (it does not start with "PACK").',
        );
      }
    }
    if (this.len < 12) return false;
    const view = new DataView(b.buffer, b.byteOffset, 12);
    this.version = view.getUint32(4);
    if (this.version !== 2 && this.version !== 3) {
      throw new PackError('PACK_VERSION', `The pack is version ${this.version}.`);
    }
    this.count = view.getUint32(8);
    if (this.count <= TABLE_RESERVE_OBJECTS) this.reserveTables(this.count);
    this.arrivalCache?.reserve(this.count);
    this.ensureCapacity(Math.min(this.count, 1 << 16));
    this.entryStart = 12;
    this.state = S_ENTRY;
    return true;
  }

  private reserveTables(objects: number): void {
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

  private ensureCapacity(n: number): void {
    if (n <= this.capacity) return;
    this.resize(Math.min(this.count, Math.max(n, this.capacity * 2)));
  }

  private resize(c: number): void {
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

  /** Parses the type, size and delta base of the entry at entryStart; false if its bytes are not all here. */
  private parseEntryHeader(): boolean {
    const b = this.buf;
    const len = this.len;
    const start = this.entryStart;
    let p = start;
    if (p >= len) return false;
    let c = b[p++];
    const kind = (c >>> 4) & 7;
    let size = c & 15;
    let scale = 16;
    while (c & 0x80) {
      if (p >= len) return false;
      c = b[p++];
      size += (c & 0x7f) * scale;
      scale *= 128;
      if (scale > 2 ** 53) throw this.corrupt(start, 'its size does not fit in 53 bits');
    }
    if (kind === 0 || kind === 5) throw this.corrupt(start, `it has the invalid type ${kind}`);
    if (size > this.limits.maxObjectSize) {
      throw objectTooLarge(
        `Object ${this.parsed + 1} of ${this.count} (at offset ${start}) in the pack`,
        size,
        this.limits.maxObjectSize,
      );
    }
    let base = -1;
    if (kind === OBJ_OFS_DELTA) {
      // gitformat-pack "offset encoding": n bytes with MSB set in all but the last; each step adds one
      // before shifting, so every value has exactly one encoding.
      if (p >= len) return false;
      c = b[p++];
      let distance = c & 0x7f;
      while (c & 0x80) {
        if (p >= len) return false;
        c = b[p++];
        distance = (distance + 1) * 128 + (c & 0x7f);
        if (distance > start) throw this.corrupt(start, 'its delta base offset points before the pack');
      }
      const baseOffset = start - distance;
      if (distance === 0 || baseOffset < 12) {
        throw this.corrupt(start, 'its delta base offset is out of bounds');
      }
      base = this.findEntry(baseOffset);
      if (base < 0)
        throw this.corrupt(start, `its delta base offset ${baseOffset} is not the start of an object`);
    } else if (kind === OBJ_REF_DELTA) {
      if (len - p < 20) return false;
      if (this.refCount === this.refEntries.length) {
        this.refEntries = grow(this.refEntries, this.refCount * 2);
        this.refBaseOids = grow(this.refBaseOids, this.refCount * 2 * 20);
      }
      this.refEntries[this.refCount] = this.parsed;
      this.refBaseOids.set(b.subarray(p, p + 20), this.refCount * 20);
      this.refCount++;
      p += 20;
    }

    this.ensureCapacity(this.parsed + 1);
    const i = this.parsed;
    this.offsets[i] = start;
    this.headerLengths[i] = p - start;
    this.kinds[i] = kind;
    this.entrySizes[i] = size;
    this.bases[i] = base;
    this.entryKind = kind;
    this.entrySize = size;

    // Non-delta objects are hashed as they inflate; deltas are only inflated to find where they end.
    const isDelta = kind === OBJ_OFS_DELTA || kind === OBJ_REF_DELTA;
    this.hashing = !isDelta;
    let out: Uint8Array;
    if (size <= this.wholeObjectLimit) {
      if (this.scratch.length < size) {
        this.scratch = new Uint8Array(
          Math.min(this.wholeObjectLimit, Math.max(size, this.scratch.length * 2)),
        );
      }
      out = this.scratch.subarray(0, size);
    } else {
      this.window ??= new Uint8Array(WINDOW_SIZE);
      out = this.window;
      if (this.hashing) this.hasher.begin(typeName(kind), size);
    }
    this.inflater.start(b, p, out, size);
    this.state = S_DATA;
    return true;
  }

  /** Index of the entry starting at `offset`, or -1. Entries are in offset order. */
  private findEntry(offset: number): number {
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

  private inflateEntry(): boolean {
    const inflater = this.inflater;
    for (;;) {
      let status: number;
      try {
        status = inflater.run(this.buf, this.len);
      } catch (e) {
        if (e instanceof PackError) throw this.corrupt(this.entryStart, e.detail, e);
        throw e;
      }
      if (status === INFLATE_NEED_INPUT) return false;
      if (status === INFLATE_OUTPUT_FULL) {
        if (this.hashing) this.hasher.update(inflater.out.subarray(inflater.outStart, inflater.outPos));
        inflater.slide();
        continue;
      }
      if (status === INFLATE_DONE) break;
    }
    const i = this.parsed;
    const end = inflater.inputEnd;
    if (this.hashing) {
      if (this.entrySize > this.wholeObjectLimit) {
        this.hasher.update(inflater.out.subarray(inflater.outStart, inflater.outPos));
        this.hasher.end(this.oids, i * 20);
      } else {
        this.hashObject(i, this.entryKind, inflater.out);
      }
      this.types[i] = this.entryKind;
      this.objectSizes[i] = this.entrySize;
    } else {
      this.deltaCount++;
    }
    this.crcs[i] = crc32(this.buf, this.entryStart, end);
    this.spend(this.entrySize, this.len);
    this.parsed++;
    this.entryStart = end;
    this.state = S_ENTRY;
    if (this.arrivalCache && this.entrySize <= this.wholeObjectLimit) {
      // Set until it returns: a delta that fails to apply is not taken for a trailer (see parse).
      this.resolvingOnArrival = true;
      this.keepOnArrival(i, inflater.out);
      this.resolvingOnArrival = false;
    }
    return true;
  }

  /** Entry `i`'s id from its type and bytes. */
  private hashObject(i: number, typeCode: number, data: Uint8Array): void {
    this.hasher.hash(typeName(typeCode), data, this.oids, i * 20);
  }

  /**
   * Entry `i` has just been inflated whole into `data` (the receive scratch). A delta whose base is still
   * kept is resolved now; what it resolves to, or a whole object, is kept for the deltas that follow.
   */
  private keepOnArrival(i: number, data: Uint8Array): void {
    const ring = this.arrivalCache!;
    ring.beginEntry();
    const kind = this.kinds[i];
    if (kind === OBJ_REF_DELTA) return;
    if (kind !== OBJ_OFS_DELTA) {
      if (data.length <= ring.maxObject) ring.place(i, data.length).set(data);
      return;
    }
    const b = this.bases[i];
    const baseSize = this.objectSizes[b];
    let base = this.types[b] === 0 ? null : ring.get(b, baseSize);
    if (!base) return;
    // Used again: moved ahead of what the ring overwrites next, so that a base with many children stays.
    // (set copies through a temporary when source and target share a buffer, so an overlap is harmless.)
    if (ring.isOld(b)) {
      const moved = ring.place(b, baseSize);
      moved.set(base);
      base = moved;
    }
    // The result, placed at the head, never reaches its base: the base is in the newer half of the ring, and
    // the head moves less than half of it (the skipped tail is shorter than the result, each under a quarter).
    const take = (size: number): Uint8Array => {
      if (size <= ring.maxObject) return ring.place(i, size);
      if (this.arrivalScratch.length < size) this.arrivalScratch = new Uint8Array(Math.max(size, 64 * 1024));
      return this.arrivalScratch.subarray(0, size);
    };
    const result = this.applyEntry(i, base, data, take);
    const type = this.types[b];
    this.types[i] = type;
    this.objectSizes[i] = result.length;
    this.hashObject(i, type, result);
    this.arrivalResolved++;
  }

  /**
   * Counts `bytes` more inflated against the budget for a pack of `packBytes` (what has arrived so far while
   * receiving, the whole pack while resolving); throws PACK_INFLATE_BUDGET, before the caller allocates.
   */
  private spend(bytes: number, packBytes: number): void {
    this.inflated += bytes;
    const budget = inflateBudget(this.limits, packBytes);
    if (this.inflated > budget) {
      throw new PackError(
        'PACK_INFLATE_BUDGET',
        `The pack inflates to more than ${formatBytes(budget)} from ${formatBytes(packBytes)} received: over the ` +
          `limit of ${this.limits.inflateRatio} times its size, at least ${formatBytes(this.limits.inflateFloor)} ` +
          '(inflateRatio, inflateFloor).',
        { limit: 'inflateRatio' },
      );
    }
  }

  /** Applies a delta once its declared result fits the budget; PACK_OBJECT_TOO_LARGE comes from applyDelta. */
  private applyCounted(base: Uint8Array, delta: Uint8Array, take: (size: number) => Uint8Array): Uint8Array {
    const size = deltaResultSize(delta);
    if (size <= this.limits.maxObjectSize) this.spend(size, this.len);
    return applyDelta(base, delta, take, this.limits.maxObjectSize);
  }

  /** Entry `i`'s delta applied to its base; a delta that does not apply names the entry's offset. */
  private applyEntry(
    i: number,
    base: Uint8Array,
    delta: Uint8Array,
    take: (size: number) => Uint8Array,
  ): Uint8Array {
    try {
      return this.applyCounted(base, delta, take);
    } catch (e) {
      if (e instanceof PackError) {
        const where = `The delta at offset ${this.offsets[i]} does not apply to its base.`;
        throw new PackError(e.code, `${where} ${e.detail}`, { cause: e, limit: e.limit });
      }
      throw e;
    }
  }

  private corrupt(offset: number, detail: string, cause?: unknown): PackError {
    const which = `Object ${this.parsed + 1} of ${this.count} (at offset ${offset}) in the pack is damaged`;
    return new PackError('PACK_CORRUPT', `${which}: ${detail.replace(/\.$/, '')}.`, { cause });
  }

  // All entries are in: what follows must be the 20-byte SHA-1 of everything before.
  private endEntries(): void {
    if (this.hashedUpTo < this.entryStart) {
      this.packSha.update(this.buf.subarray(this.hashedUpTo, this.entryStart));
      this.hashedUpTo = this.entryStart;
    }
    this.computedChecksum = new Uint8Array(20);
    this.packSha.digestInto(this.computedChecksum, 0);
    this.state = S_TRAILER;
    // No delta arrives any more: the rest are resolved from the whole pack.
    this.arrivalCache?.free();
    this.arrivalCache = null;
    this.arrivalScratch = new Uint8Array(0);
    this.reportReceiving();
  }

  private trailerMatches(at: number, expected: Uint8Array): boolean {
    for (let k = 0; k < 20; k++) if (this.buf[at + k] !== expected[k]) return false;
    return true;
  }

  // Refuses an endless stream as soon as it is clear that the pack is complete and more bytes follow.
  private checkTrailerEarly(): void {
    const extra = this.len - this.entryStart;
    if (extra > 20 && this.trailerMatches(this.entryStart, this.computedChecksum!)) {
      throw new PackError('PACK_TRAILING_DATA', `The pack is followed by ${extra - 20} unexpected bytes.`);
    }
  }

  /** Whether the stream is a consistent pack of fewer objects than its header declares. */
  private endsEarlyWithTrailer(): boolean {
    if (this.len - this.entryStart !== 20 || this.state === S_TRAILER) return false;
    const digest = new Uint8Array(20);
    this.packSha.digestInto(digest, 0);
    return this.trailerMatches(this.entryStart, digest);
  }

  /** Verifies the end of the stream; returns the pack checksum. */
  private checkEnd(): Uint8Array {
    const state = this.state;
    if (state === S_HEADER) {
      throw new PackError(
        'PACK_TRUNCATED',
        this.len === 0
          ? 'No pack data was received.'
          : `The pack ended after ${this.len} bytes, inside its header.`,
      );
    }
    if (state !== S_TRAILER) {
      if (this.endsEarlyWithTrailer()) {
        throw new PackError(
          'PACK_CORRUPT',
          `The pack header declares ${plural(this.count, 'object')} but the pack holds only ${this.parsed}.`,
        );
      }
      if (state === S_SUSPECT) throw this.suspect;
      throw new PackError(
        'PACK_TRUNCATED',
        `The pack ended after ${this.len} bytes, inside object ${this.parsed + 1} of ${this.count}.`,
      );
    }
    const at = this.entryStart;
    const extra = this.len - at;
    if (extra < 20) {
      throw new PackError(
        'PACK_TRUNCATED',
        `The pack ended ${20 - extra} bytes short of its trailing checksum.`,
      );
    }
    const computed = this.computedChecksum!;
    if (!this.trailerMatches(at, computed)) {
      if (extra > 20) {
        // Either trailing bytes after a bad checksum, or more objects than the header declares.
        const whole = new Uint8Array(20);
        this.objSha.init();
        this.objSha.update(this.buf.subarray(0, this.len - 20));
        this.objSha.digestInto(whole, 0);
        if (this.trailerMatches(this.len - 20, whole)) {
          throw new PackError(
            'PACK_CORRUPT',
            `The pack header declares ${plural(this.count, 'object')} but the pack holds more.`,
          );
        }
      }
      throw new PackError(
        'PACK_CHECKSUM_MISMATCH',
        "The pack's checksum does not match its contents: the download was corrupted.",
      );
    }
    if (extra > 20) {
      throw new PackError('PACK_TRAILING_DATA', `The pack is followed by ${extra - 20} unexpected bytes.`);
    }
    return computed;
  }

  /** Inflates entry `i` whole from the kept pack bytes into `out` (fresh if omitted). */
  private inflateAt(i: number, out?: Uint8Array): Uint8Array {
    const size = this.entrySizes[i];
    const target = out ?? new Uint8Array(size);
    const inflater = this.inflater;
    inflater.start(this.buf, this.offsets[i] + this.headerLengths[i], target, size);
    // The entry was inflated once already, so the whole stream is here.
    if (inflater.run(this.buf, this.len) !== INFLATE_DONE)
      throw new Error('Pack entry changed after receiving');
    return target;
  }

  private async resolveDeltas(): Promise<void> {
    const total = this.deltaCount;
    if (total === 0) return;
    this.onProgress?.({ phase: 'resolving', resolved: this.arrivalResolved, total });
    let resolved = this.arrivalResolved;
    if (resolved < total) resolved = await this.resolveFrom(0, resolved);
    if (resolved < total && this.externalBase) resolved = await this.completeThinPack(resolved);
    if (resolved < total) {
      // Every unresolved chain ends in a ref-delta whose base never turned up.
      for (let k = 0; k < this.refCount; k++) {
        const entry = this.refEntries[k];
        if (this.types[entry] === 0) {
          throw new PackError(
            'PACK_DELTA_BASE_MISSING',
            `The delta at offset ${this.offsets[entry]} needs object ${toHex(this.refBaseOids, k * 20, 20)}, which is not in the pack${this.externalBase ? ' nor in the repository' : ''}.`,
          );
        }
      }
      throw new Error(`Resolved ${resolved} of ${total} deltas`);
    }
  }

  /**
   * Appends, as whole objects, the bases the repo holds for the ref-deltas still unresolved, then rewrites
   * the object count and the trailing checksum, as index-pack.c's fix_unresolved_deltas and
   * fixup_pack_header_footer do: the stored pack then needs nothing outside itself. One base at a time, in
   * pack order, each resolved before the next is looked at: a delta whose base is another delta of the pack
   * is resolved through it, and that base is not appended a second time.
   */
  private async completeThinPack(resolvedBefore: number): Promise<number> {
    let resolved = resolvedBefore;
    const pending: number[] = [];
    for (let k = 0; k < this.refCount; k++) if (this.types[this.refEntries[k]] === 0) pending.push(k);
    pending.sort((a, b) => this.refEntries[a] - this.refEntries[b]);
    // Room for every base up front: grown one entry per base (the header's count caps ensureCapacity), each
    // base copied every per-object table; 26 s of large.git's 33 s unshallow fetch went to that and its GC.
    if (this.parsed + pending.length > this.capacity) this.resize(this.parsed + pending.length);
    const appended = new Set<string>();
    const trailerAt = this.len - 20;
    for (const k of pending) {
      if (this.types[this.refEntries[k]] !== 0) continue;
      const oid = toHex(this.refBaseOids, k * 20, 20);
      if (appended.has(oid)) continue;
      throwIfAborted(this.signal);
      const object = await this.externalBase!(oid);
      if (!object) continue;
      throwIfAborted(this.signal);
      appended.add(oid);
      // The entries go where the old trailer was.
      if (appended.size === 1) this.len = trailerAt;
      const code = TYPE_CODES[object.type];
      const header = entryHeader(code, object.data.length);
      const compressed = await deflate(object.data);
      const start = this.len;
      this.append(header);
      this.append(compressed);
      this.count++;
      this.ensureCapacity(this.parsed + 1);
      const i = this.parsed++;
      this.offsets[i] = start;
      this.headerLengths[i] = header.length;
      this.kinds[i] = code;
      this.types[i] = code;
      this.entrySizes[i] = object.data.length;
      this.objectSizes[i] = object.data.length;
      this.bases[i] = -1;
      this.crcs[i] = crc32(this.buf, start, this.len);
      this.oids.set(oidFromHex(oid), i * 20);
      resolved = await this.resolveFrom(i, resolved);
    }
    if (appended.size === 0) return resolved;
    new DataView(this.buf.buffer, this.buf.byteOffset, 12).setUint32(8, this.count);
    const trailer = new Uint8Array(20);
    this.objSha.init();
    this.objSha.update(this.buf.subarray(0, this.len));
    this.objSha.digestInto(trailer, 0);
    this.append(trailer);
    this.fixedChecksum = trailer;
    this.appendedBases = appended.size;
    return resolved;
  }

  private children?: {
    entries: number;
    ofsStart: Int32Array;
    ofsChildren: Int32Array;
    refOrder: Int32Array;
    refParent: Int32Array;
    needed: Uint8Array | null;
  };

  /**
   * Children lists, as index-pack builds them: ofs-deltas by base entry (compressed rows), ref-deltas
   * sorted by base id (binary searched once each object's id is known). Built once over the entries
   * received: completing a thin pack resolves once per appended base, and building them per base made
   * that O(bases × objects) (large.git's unshallow fetch: minutes).
   *
   * `needed` marks the entries the walk must reach: unresolved, or on the way to one. An ofs-delta's base
   * comes before it in the pack, so one backward pass finds them. With ref-deltas, whose bases are known by
   * id only, the walk visits everything (null).
   */
  private childLists() {
    if (this.children) return this.children;
    const n = this.parsed;
    const bases = this.bases;
    // Rows by counting sort, filled backwards so that ofsStart[b] ends as row b's start.
    const ofsStart = new Int32Array(n + 1);
    for (let i = 0; i < n; i++) if (bases[i] >= 0) ofsStart[bases[i]]++;
    for (let i = 1; i < n; i++) ofsStart[i] += ofsStart[i - 1];
    ofsStart[n] = n > 0 ? ofsStart[n - 1] : 0;
    const ofsChildren = new Int32Array(ofsStart[n]);
    for (let i = n - 1; i >= 0; i--) if (bases[i] >= 0) ofsChildren[--ofsStart[bases[i]]] = i;
    const refCount = this.refCount;
    const refBaseOids = this.refBaseOids;
    const refOrder = new Int32Array(refCount);
    for (let k = 0; k < refCount; k++) refOrder[k] = k;
    refOrder.sort((a, b) => compareOids(refBaseOids, a, refBaseOids, b));
    const refParent = new Int32Array(refCount > 0 ? n : 0).fill(-1);
    let needed: Uint8Array | null = null;
    if (refCount === 0) {
      needed = new Uint8Array(n);
      const types = this.types;
      for (let i = n - 1; i >= 0; i--) {
        if (types[i] === 0) needed[i] = 1;
        if (needed[i] && bases[i] >= 0) needed[bases[i]] = 1;
      }
    }
    this.children = { entries: n, ofsStart, ofsChildren, refOrder, refParent, needed };
    return this.children;
  }

  /** Resolves the delta trees under the non-delta entries from `firstRoot` on; returns the new count. */
  private async resolveFrom(firstRoot: number, alreadyResolved: number): Promise<number> {
    const total = this.deltaCount;
    const n = this.parsed;
    const kinds = this.kinds;
    const bases = this.bases;
    const oids = this.oids;

    const { ofsStart, ofsChildren, refOrder, refParent, needed, entries: listed } = this.childLists();
    const types = this.types;
    const refCount = this.refCount;
    const refBaseOids = this.refBaseOids;
    // Bases appended to complete a thin pack come after the listed entries and are never deltas, so
    // nothing names them by offset.
    const ofsFirst = (i: number) => (i < listed ? ofsStart[i] : 0);
    const ofsLast = (i: number) => (i < listed ? ofsStart[i + 1] : 0);
    // [first, end) of refOrder whose base is the object with id oids[i].
    const refRange = (i: number): [number, number] => {
      if (refCount === 0) return [0, 0];
      let lo = 0;
      let hi = refCount;
      while (lo < hi) {
        const mid = (lo + hi) >>> 1;
        if (compareOids(refBaseOids, refOrder[mid], oids, i) < 0) lo = mid + 1;
        else hi = mid;
      }
      let end = lo;
      while (end < refCount && compareOids(refBaseOids, refOrder[end], oids, i) === 0) end++;
      return [lo, end];
    };

    // The walk's stack: one frame per object on the current chain, with the data its children need.
    interface Frame {
      entry: number;
      data: Uint8Array | null;
      ofsNext: number;
      ofsEnd: number;
      refNext: number;
      refEnd: number;
    }
    const stack: Frame[] = [];
    let held = 0;
    const frameFor = (entry: number, data: Uint8Array): Frame | null => {
      const [refNext, refEnd] = refRange(entry);
      const ofsNext = ofsFirst(entry);
      const ofsEnd = ofsLast(entry);
      if (ofsNext === ofsEnd && refNext === refEnd) return null;
      return { entry, data, ofsNext, ofsEnd, refNext, refEnd };
    };
    const parentOf = (entry: number): number => (bases[entry] >= 0 ? bases[entry] : refParent[entry]);
    // Rebuilds a base dropped to stay under the cache limit, from the nearest ancestor still held.
    const rebuild = (entry: number): Uint8Array => {
      const chain: number[] = [];
      let j = entry;
      let data: Uint8Array | null = null;
      for (;;) {
        const frame = stack.find((f) => f.entry === j && f.data);
        if (frame) {
          data = frame.data;
          break;
        }
        if (kinds[j] !== OBJ_OFS_DELTA && kinds[j] !== OBJ_REF_DELTA) {
          data = this.inflateAt(j);
          break;
        }
        chain.push(j);
        j = parentOf(j);
      }
      for (let k = chain.length - 1; k >= 0; k--) {
        data = this.applyCounted(data!, this.inflateAt(chain[k]), take);
      }
      return data!;
    };

    let resolved = alreadyResolved;
    let reported = alreadyResolved;
    let walked = 0;
    const step = Math.max(1, Math.floor(total / 256));
    let lastYield = performance.now();
    let deltaScratch = new Uint8Array(64 * 1024);
    const pool = new BufferPool();
    const take = (size: number) => pool.take(size);

    for (let root = firstRoot; root < n; root++) {
      const kind = kinds[root];
      if (kind === OBJ_OFS_DELTA || kind === OBJ_REF_DELTA) continue;
      if (needed && root < listed && !needed[root]) continue;
      if (ofsFirst(root) === ofsLast(root) && refRange(root)[0] === refRange(root)[1]) continue;
      const data = this.inflateAt(root, take(this.entrySizes[root]));
      stack.push(frameFor(root, data)!);
      held = data.length;
      const type = this.types[root];

      while (stack.length > 0) {
        const top = stack[stack.length - 1];
        let child: number;
        if (top.ofsNext < top.ofsEnd) {
          child = ofsChildren[top.ofsNext++];
          // Resolved as it arrived, and nothing below it was not.
          if (needed && !needed[child]) continue;
        } else if (top.refNext < top.refEnd) {
          child = this.refEntries[refOrder[top.refNext++]];
          // Resolved already: a delta whose result has its own base's id (or a base that appears twice)
          // lists it again among that id's children. Walking it again would loop forever.
          if (this.types[child] !== 0) continue;
        } else {
          stack.pop();
          if (top.data) {
            held -= top.data.length;
            pool.give(top.data);
          }
          continue;
        }
        const base = top.data ?? rebuild(top.entry);
        if (!top.data) {
          top.data = base;
          held += base.length;
        }
        // The last child no longer needs its parent: drop the parent first so chains hold one object.
        const lastChild = top.ofsNext === top.ofsEnd && top.refNext === top.refEnd;
        if (lastChild) {
          stack.pop();
          held -= base.length;
        }
        const deltaSize = this.entrySizes[child];
        if (deltaScratch.length < deltaSize)
          deltaScratch = new Uint8Array(Math.max(deltaSize, deltaScratch.length * 2));
        const delta = this.inflateAt(child, deltaScratch.subarray(0, deltaSize));
        const result = this.applyEntry(child, base, delta, take);
        if (lastChild) pool.give(base);
        // Resolved as it arrived: here only on the way to a descendant that was not.
        const known = types[child] !== 0;
        if (!known) {
          if (kinds[child] === OBJ_REF_DELTA) refParent[child] = top.entry;
          types[child] = type;
          this.objectSizes[child] = result.length;
          this.hashObject(child, type, result);
        }

        const frame = frameFor(child, result);
        if (frame) {
          stack.push(frame);
          held += result.length;
          // Over the limit: drop the oldest bases (never the current one); rebuilt if needed again.
          for (let k = 0; held > this.deltaBaseCacheLimit && k < stack.length - 1; k++) {
            const f = stack[k];
            if (f.data) {
              held -= f.data.length;
              pool.give(f.data);
              f.data = null;
            }
          }
        } else {
          pool.give(result);
        }

        if (!known) resolved++;
        if (resolved - reported >= step) {
          reported = resolved;
          this.onProgress?.({ phase: 'resolving', resolved, total });
        }
        throwIfAborted(this.signal);
        if ((++walked & 63) === 0) {
          if (performance.now() - lastYield > YIELD_INTERVAL_MS) {
            await yieldToEventLoop();
            throwIfAborted(this.signal);
            lastYield = performance.now();
          }
        }
      }
      held = 0;
    }

    if (reported < resolved) this.onProgress?.({ phase: 'resolving', resolved, total });
    return resolved;
  }

  /**
   * Frees what only parsing and resolving used, before the .idx is made: on large.git 8 MB that the write
   * step held on top of the pack, the .idx and the tables the result reads (oids, types, offsets, crcs,
   * objectSizes, for `objects`).
   */
  private releaseResolverTables(): void {
    const children = this.children;
    this.children = undefined;
    if (children) {
      for (const table of [children.ofsStart, children.ofsChildren, children.refOrder, children.refParent])
        releaseBuffer(table);
      if (children.needed) releaseBuffer(children.needed);
    }
    for (const table of [this.headerLengths, this.kinds, this.entrySizes, this.bases]) releaseBuffer(table);
    this.headerLengths = new Uint8Array(0);
    this.kinds = new Uint8Array(0);
    this.entrySizes = new Uint32Array(0);
    this.bases = new Int32Array(0);
  }

  private result(checksum: Uint8Array, keepObjects: boolean): IngestedPack {
    this.releaseResolverTables();
    const n = this.parsed;
    const types = this.types;
    const counts: Record<GitObjectType, number> = { commit: 0, tree: 0, blob: 0, tag: 0 };
    for (let i = 0; i < n; i++) counts[typeName(types[i])]++;
    // Made when first read: a clone needs only the counts, and 430,000 objects (large.git) as JS objects
    // with hex ids would be tens of megabytes of heap.
    const { oids, offsets, crcs, objectSizes } = this;
    let objects: IngestedObject[] | undefined;
    const listObjects = (): IngestedObject[] => {
      if (!keepObjects) throw new Error('PackIngester.finish({ objects: false }) kept no objects to list');
      objects ??= Array.from({ length: n }, (_, i) => ({
        oid: toHex(oids, i * 20, 20),
        type: typeName(types[i]),
        offset: offsets[i],
        crc32: crcs[i],
        size: objectSizes[i],
      }));
      return objects;
    };
    // Sizes and types first: the .idx needs neither, and it is made at the clone's second peak.
    if (!keepObjects) for (const table of [objectSizes, types]) releaseBuffer(table);
    const idx = writePackIndexV2Tables(this.oids, this.offsets, this.crcs, n, checksum, this.objSha);
    if (!keepObjects) for (const table of [oids, offsets, crcs]) releaseBuffer(table);
    // The pack is handed over exactly: stored as is, with no slack for IndexedDB to clone along.
    this.buf = fixedLength(this.buf, this.len);
    return {
      pack: this.buf,
      checksum: toHex(checksum),
      idx,
      counts,
      appendedBases: this.appendedBases,
      get objects() {
        return listObjects();
      },
    };
  }
}
