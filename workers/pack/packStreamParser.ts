// The receive half of the ingester: parses a pack as its bytes arrive (gitformat-pack: "pack-*.pack
// files"), in any split. For each entry, its header, then its data inflated as far as the bytes go; a
// whole object is hashed as it inflates, a delta only inflated to find where it ends. Then the trailing
// checksum, checked as soon as the last entry is in, so that an endless stream is refused early.

import { crc32 } from './crc32.ts';
import { objectTooLarge, PackError, throwIfAborted } from './errors.ts';
import type { ReceivedBytes } from './growableBuffers.ts';
import { INFLATE_DONE, INFLATE_NEED_INPUT, INFLATE_OUTPUT_FULL, type StreamInflater } from './inflate.ts';
import type { ObjectHasher, Sha1 } from './objectHash.ts';
import { OBJ_OFS_DELTA, OBJ_REF_DELTA, type PackEntries, typeName } from './packEntries.ts';
import type { InflateMeter, PackLimits } from './packLimits.ts';

export type ReceiveProgress = { phase: 'receiving'; bytes: number; objects: number; totalObjects: number };

/** Told of each entry as it arrives whole (the delta resolver, which resolves what it can at once). */
export interface ArrivalObserver {
  /** The header declared `count` entries. */
  begin(count: number): void;
  /** Entry `i` was just inflated whole into `data`, valid only during the call. */
  inflated(i: number, data: Uint8Array): void;
  /** Every entry is in: nothing more arrives. */
  end(): void;
}

export interface PackStreamParserOptions {
  entries: PackEntries;
  received: ReceivedBytes;
  inflater: StreamInflater;
  /** Hashes the pack's bytes, for its trailing checksum. */
  packSha: Sha1;
  /** Hashes objects, into `entries.oids`; its Sha1 (`objSha`) serves for one-off checksums too. */
  hasher: ObjectHasher;
  objSha: Sha1;
  meter: InflateMeter;
  limits: PackLimits;
  wholeObjectLimit: number;
  arrivals: ArrivalObserver | null;
  onProgress?: (progress: ReceiveProgress) => void;
  signal?: AbortSignal;
}

// Receive states.
const S_HEADER = 0;
const S_ENTRY = 1;
const S_DATA = 2;
const S_TRAILER = 3;
// An entry failed to parse in the last 20 bytes received: it may be the trailer of a pack whose header
// counts more objects than it holds, which only the bytes still to come (or their absence) can tell.
const S_SUSPECT = 4;

const PROGRESS_BYTES = 64 * 1024;
const WINDOW_SIZE = 1024 * 1024;

const plural = (n: number, noun: string) => `${n} ${noun}${n === 1 ? '' : 's'}`;

export class PackStreamParser {
  private readonly entries: PackEntries;
  private readonly received: ReceivedBytes;
  private readonly inflater: StreamInflater;
  private readonly packSha: Sha1;
  private readonly objSha: Sha1;
  private readonly hasher: ObjectHasher;
  private readonly meter: InflateMeter;
  private readonly limits: PackLimits;
  private readonly wholeObjectLimit: number;
  private arrivals: ArrivalObserver | null;
  private readonly onProgress?: (progress: ReceiveProgress) => void;
  private readonly signal?: AbortSignal;

  private hashedUpTo = 0;
  private lastProgressBytes = 0;
  private state = S_HEADER;
  private suspect: PackError | null = null;
  private computedChecksum: Uint8Array | null = null;
  private version = 0;

  // Current entry.
  private entryStart = 0;
  private entryKind = 0;
  private entrySize = 0;
  private hashing = false;
  private scratch = new Uint8Array(64 * 1024);
  private window: Uint8Array | null = null;
  // Set while an arrival observer runs: a delta that fails to apply is not taken for a trailer (see parse).
  private resolvingOnArrival = false;

  constructor(o: PackStreamParserOptions) {
    this.entries = o.entries;
    this.received = o.received;
    this.inflater = o.inflater;
    this.packSha = o.packSha;
    this.objSha = o.objSha;
    this.hasher = o.hasher;
    this.meter = o.meter;
    this.limits = o.limits;
    this.wholeObjectLimit = o.wholeObjectLimit;
    this.arrivals = o.arrivals;
    this.onProgress = o.onProgress;
    this.signal = o.signal;
  }

  /** Takes the next bytes of the pack (any split) and parses every entry they complete. */
  push(chunk: Uint8Array): void {
    this.received.append(chunk);
    this.parse();
    if (this.hashedUpTo < this.entryStart) {
      this.packSha.update(this.received.bytes.subarray(this.hashedUpTo, this.entryStart));
      this.hashedUpTo = this.entryStart;
    }
    if (this.state === S_TRAILER) this.checkTrailerEarly();
    if (this.received.length - this.lastProgressBytes >= PROGRESS_BYTES) this.reportReceiving();
  }

  /** Drops the buffers only receiving used: the resolver works from the pack bytes. */
  release(): void {
    this.scratch = new Uint8Array(0);
    this.window = null;
    this.arrivals = null;
  }

  private reportReceiving(): void {
    this.lastProgressBytes = this.received.length;
    this.onProgress?.({
      phase: 'receiving',
      bytes: this.received.length,
      objects: this.entries.parsed,
      totalObjects: this.entries.count,
    });
  }

  private parse(): void {
    try {
      this.parseSteps();
    } catch (e) {
      // An entry that fails within the last 20 bytes received may be a trailer: decide when more comes.
      // A delta that does not apply was received whole: no trailer can explain it.
      const inEntry = (this.state === S_ENTRY || this.state === S_DATA) && !this.resolvingOnArrival;
      if (e instanceof PackError && inEntry && this.received.length - this.entryStart <= 20) {
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
          if (this.entries.parsed === this.entries.count) {
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
          if (this.received.length - this.entryStart > 20) throw this.suspect;
          return;
        default:
          return;
      }
    }
  }

  private parseHeader(): boolean {
    const b = this.received.bytes;
    const len = this.received.length;
    const n = Math.min(len, 4);
    for (let i = 0; i < n; i++) {
      if (b[i] !== 'PACK'.charCodeAt(i)) {
        throw new PackError(
          'PACK_SIGNATURE',
          'The data received is not a git pack (it does not start with "PACK").',
        );
      }
    }
    if (len < 12) return false;
    const view = new DataView(b.buffer, b.byteOffset, 12);
    this.version = view.getUint32(4);
    if (this.version !== 2 && this.version !== 3) {
      throw new PackError('PACK_VERSION', `The pack is version ${this.version}.`);
    }
    const count = view.getUint32(8);
    this.entries.begin(count);
    this.arrivals?.begin(count);
    this.entries.ensureCapacity(Math.min(count, 1 << 16));
    this.entryStart = 12;
    this.state = S_ENTRY;
    return true;
  }

  /** Parses the type, size and delta base of the entry at entryStart; false if its bytes are not all here. */
  private parseEntryHeader(): boolean {
    const entries = this.entries;
    const b = this.received.bytes;
    const len = this.received.length;
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
        `Object ${entries.parsed + 1} of ${entries.count} (at offset ${start}) in the pack`,
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
      base = entries.findEntry(baseOffset);
      if (base < 0)
        throw this.corrupt(start, `its delta base offset ${baseOffset} is not the start of an object`);
    } else if (kind === OBJ_REF_DELTA) {
      if (len - p < 20) return false;
      entries.addRefDelta(entries.parsed, b, p);
      p += 20;
    }

    entries.ensureCapacity(entries.parsed + 1);
    const i = entries.parsed;
    entries.offsets[i] = start;
    entries.headerLengths[i] = p - start;
    entries.kinds[i] = kind;
    entries.entrySizes[i] = size;
    entries.bases[i] = base;
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

  private inflateEntry(): boolean {
    const inflater = this.inflater;
    const entries = this.entries;
    for (;;) {
      let status: number;
      try {
        status = inflater.run(this.received.bytes, this.received.length);
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
    const i = entries.parsed;
    const end = inflater.inputEnd;
    if (this.hashing) {
      if (this.entrySize > this.wholeObjectLimit) {
        this.hasher.update(inflater.out.subarray(inflater.outStart, inflater.outPos));
        this.hasher.end(entries.oids, i * 20);
      } else {
        this.hasher.hash(typeName(this.entryKind), inflater.out, entries.oids, i * 20);
      }
      entries.types[i] = this.entryKind;
      entries.objectSizes[i] = this.entrySize;
    } else {
      entries.deltaCount++;
    }
    entries.crcs[i] = crc32(this.received.bytes, this.entryStart, end);
    this.meter.spend(this.entrySize, this.received.length);
    entries.parsed++;
    this.entryStart = end;
    this.state = S_ENTRY;
    if (this.arrivals && this.entrySize <= this.wholeObjectLimit) {
      this.resolvingOnArrival = true;
      this.arrivals.inflated(i, inflater.out);
      this.resolvingOnArrival = false;
    }
    return true;
  }

  private corrupt(offset: number, detail: string, cause?: unknown): PackError {
    const { parsed, count } = this.entries;
    const which = `Object ${parsed + 1} of ${count} (at offset ${offset}) in the pack is damaged`;
    return new PackError('PACK_CORRUPT', `${which}: ${detail.replace(/\.$/, '')}.`, { cause });
  }

  // All entries are in: what follows must be the 20-byte SHA-1 of everything before.
  private endEntries(): void {
    if (this.hashedUpTo < this.entryStart) {
      this.packSha.update(this.received.bytes.subarray(this.hashedUpTo, this.entryStart));
      this.hashedUpTo = this.entryStart;
    }
    this.computedChecksum = new Uint8Array(20);
    this.packSha.digestInto(this.computedChecksum, 0);
    this.state = S_TRAILER;
    // No delta arrives any more: the rest are resolved from the whole pack.
    this.arrivals?.end();
    this.arrivals = null;
    this.reportReceiving();
  }

  private trailerMatches(at: number, expected: Uint8Array): boolean {
    const b = this.received.bytes;
    for (let k = 0; k < 20; k++) if (b[at + k] !== expected[k]) return false;
    return true;
  }

  // Refuses an endless stream as soon as it is clear that the pack is complete and more bytes follow.
  private checkTrailerEarly(): void {
    const extra = this.received.length - this.entryStart;
    if (extra > 20 && this.trailerMatches(this.entryStart, this.computedChecksum!)) {
      throw new PackError('PACK_TRAILING_DATA', `The pack is followed by ${extra - 20} unexpected bytes.`);
    }
  }

  /** Whether the stream is a consistent pack of fewer objects than its header declares. */
  private endsEarlyWithTrailer(): boolean {
    if (this.received.length - this.entryStart !== 20 || this.state === S_TRAILER) return false;
    const digest = new Uint8Array(20);
    this.packSha.digestInto(digest, 0);
    return this.trailerMatches(this.entryStart, digest);
  }

  /** Verifies the end of the stream; returns the pack checksum. */
  checkEnd(): Uint8Array {
    const state = this.state;
    const len = this.received.length;
    const { parsed, count } = this.entries;
    if (state === S_HEADER) {
      throw new PackError(
        'PACK_TRUNCATED',
        len === 0 ? 'No pack data was received.' : `The pack ended after ${len} bytes, inside its header.`,
      );
    }
    if (state !== S_TRAILER) {
      if (this.endsEarlyWithTrailer()) {
        throw new PackError(
          'PACK_CORRUPT',
          `The pack header declares ${plural(count, 'object')} but the pack holds only ${parsed}.`,
        );
      }
      if (state === S_SUSPECT) throw this.suspect;
      throw new PackError(
        'PACK_TRUNCATED',
        `The pack ended after ${len} bytes, inside object ${parsed + 1} of ${count}.`,
      );
    }
    const at = this.entryStart;
    const extra = len - at;
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
        this.objSha.update(this.received.bytes.subarray(0, len - 20));
        this.objSha.digestInto(whole, 0);
        if (this.trailerMatches(len - 20, whole)) {
          throw new PackError(
            'PACK_CORRUPT',
            `The pack header declares ${plural(count, 'object')} but the pack holds more.`,
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
}
