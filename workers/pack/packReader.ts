// Objects read back out of a whole pack held in memory: a pack just received and checked, whose blobs a
// checkout writes to the working tree before the pack leaves memory (ops/worktree/newWorktree.ts), so
// that nothing is read back from storage. Pure: bytes in, objects out (gitformat-pack: entry headers,
// ofs-delta and ref-delta). The pack was checked when it arrived; every read is bounds-checked all the same.

import { applyDelta } from './delta.ts';
import { PackError } from './errors.ts';
import { INFLATE_DONE, Inflater } from './inflate.ts';
import type { GitObjectType } from './objectHash.ts';
import { OBJ_OFS_DELTA, OBJ_REF_DELTA, typeName } from './packEntries.ts';
import { DEFAULT_PACK_LIMITS } from './packLimits.ts';

/** Delta bases kept between reads (objects are mostly read in pack order, bases before their deltas). */
const BASE_CACHE_BYTES = 8 * 1024 * 1024;
/** A chain longer than this is refused: git's own packs stay far below (pack.depth is 50; --depth=250 rarely more). */
const MAX_CHAIN = 10_000;

interface Entry {
  typeCode: number;
  size: number;
  /** Where the compressed data starts. */
  dataStart: number;
  /** For a delta: its base's offset (ofs-delta) or id (ref-delta). */
  baseOffset?: number;
  baseOid?: string;
}

function corrupt(detail: string): PackError {
  return new PackError('PACK_CORRUPT', `The pack cannot be read back: ${detail}.`);
}

export class PackReader {
  private readonly inflater = new Inflater(false);
  private readonly cache = new Map<number, { typeCode: number; data: Uint8Array }>();
  private cached = 0;

  /**
   * @param pack the whole pack, trailer included
   * @param offsetOf where the object with this id starts in the pack (for ref-deltas), or undefined
   */
  constructor(
    private readonly pack: Uint8Array,
    private readonly offsetOf: (oid: string) => number | undefined,
    private readonly maxObjectSize = DEFAULT_PACK_LIMITS.maxObjectSize,
  ) {}

  /** The object whose entry starts at `offset`: its type and bytes (resolved when it is a delta). */
  read(offset: number): { type: GitObjectType; data: Uint8Array } {
    // The chain down to a whole object, then the deltas applied upwards.
    const chain: { offset: number; entry: Entry }[] = [];
    let at = offset;
    let base: { typeCode: number; data: Uint8Array } | undefined;
    for (;;) {
      base = this.cache.get(at);
      if (base) break;
      const entry = this.entry(at);
      chain.push({ offset: at, entry });
      if (entry.typeCode !== OBJ_OFS_DELTA && entry.typeCode !== OBJ_REF_DELTA) break;
      if (chain.length > MAX_CHAIN) throw corrupt(`a delta chain at ${offset} is longer than ${MAX_CHAIN}`);
      if (entry.baseOffset !== undefined) at = entry.baseOffset;
      else {
        const found = this.offsetOf(entry.baseOid!);
        if (found === undefined) {
          throw new PackError('PACK_DELTA_BASE_MISSING', `The pack lacks the delta base ${entry.baseOid}.`);
        }
        at = found;
      }
    }
    if (!base) {
      const whole = chain.pop()!;
      base = { typeCode: whole.entry.typeCode, data: this.inflate(whole.entry) };
      this.remember(whole.offset, base);
    }
    while (chain.length > 0) {
      const { offset: deltaOffset, entry } = chain.pop()!;
      const data = applyDelta(base.data, this.inflate(entry), undefined, this.maxObjectSize);
      base = { typeCode: base.typeCode, data };
      // The top of the chain is what was asked for: the caller has it, and deltas rarely build on it.
      if (chain.length > 0) this.remember(deltaOffset, base);
    }
    return { type: typeName(base.typeCode), data: base.data };
  }

  private remember(offset: number, object: { typeCode: number; data: Uint8Array }): void {
    if (object.data.length > BASE_CACHE_BYTES / 4) return;
    if (this.cached + object.data.length > BASE_CACHE_BYTES) {
      this.cache.clear();
      this.cached = 0;
    }
    this.cache.set(offset, object);
    this.cached += object.data.length;
  }

  /** gitformat-pack: the entry header at `offset` (type, size, and for a delta its base). */
  private entry(offset: number): Entry {
    const pack = this.pack;
    // The 12-byte header comes first; the 20-byte trailer last.
    const end = pack.length - 20;
    if (!Number.isInteger(offset) || offset < 12 || offset >= end) throw corrupt(`no entry at ${offset}`);
    let p = offset;
    let c = pack[p++];
    const typeCode = (c >> 4) & 7;
    let size = c & 15;
    let shift = 16;
    while (c & 0x80) {
      if (p >= end || shift > 2 ** 35) throw corrupt(`the entry at ${offset} has a broken header`);
      c = pack[p++];
      size += (c & 0x7f) * shift;
      shift *= 128;
    }
    if (typeCode === 0 || typeCode === 5) throw corrupt(`the entry at ${offset} has type ${typeCode}`);
    if (size > this.maxObjectSize) throw corrupt(`the entry at ${offset} declares ${size} bytes`);
    if (typeCode === OBJ_OFS_DELTA) {
      // A big-endian number in 7-bit groups, each continuation adding one (gitformat-pack: offset encoding).
      if (p >= end) throw corrupt(`the delta at ${offset} is cut short`);
      c = pack[p++];
      let distance = c & 0x7f;
      while (c & 0x80) {
        if (p >= end || distance > 2 ** 45) throw corrupt(`the delta at ${offset} has a broken base offset`);
        c = pack[p++];
        distance = (distance + 1) * 128 + (c & 0x7f);
      }
      if (distance <= 0 || distance > offset - 12)
        throw corrupt(`the delta at ${offset} points outside the pack`);
      return { typeCode, size, dataStart: p, baseOffset: offset - distance };
    }
    if (typeCode === OBJ_REF_DELTA) {
      if (p + 20 > end) throw corrupt(`the delta at ${offset} is cut short`);
      let oid = '';
      for (let i = 0; i < 20; i++) oid += pack[p + i].toString(16).padStart(2, '0');
      return { typeCode, size, dataStart: p + 20, baseOid: oid };
    }
    return { typeCode, size, dataStart: p };
  }

  private inflate(entry: Entry): Uint8Array {
    const out = new Uint8Array(entry.size);
    this.inflater.start(this.pack, entry.dataStart, out, entry.size);
    const status = this.inflater.run(this.pack, this.pack.length - 20);
    if (status !== INFLATE_DONE || this.inflater.outPos !== entry.size) {
      throw corrupt(`an entry does not inflate to its ${entry.size} bytes`);
    }
    return out;
  }
}
