// The resolving half of the ingester: every delta of the pack turned into its object, as `git index-pack`
// does it (index-pack.c): each delta tree walked depth first from its non-delta base, re-inflating entries
// from the kept pack bytes and holding only the current chain's objects. A delta whose base arrived shortly
// before is resolved as it arrives instead (the arrival ring), in the time the receive waits for the network.

import { ArrivalRing } from './arrivalRing.ts';
import { crc32 } from './crc32.ts';
import { deflate } from './deflate.ts';
import { applyDelta, deltaResultSize } from './delta.ts';
import { PackError, throwIfAborted } from './errors.ts';
import type { ReceivedBytes } from './growableBuffers.ts';
import { INFLATE_DONE, type StreamInflater } from './inflate.ts';
import { type GitObjectType, type ObjectHasher, oidFromHex, type Sha1, toHex } from './objectHash.ts';
import {
  entryHeader,
  OBJ_OFS_DELTA,
  OBJ_REF_DELTA,
  type PackEntries,
  TYPE_CODES,
  typeName,
} from './packEntries.ts';
import { compareOids } from './packIndexWriter.ts';
import type { InflateMeter, PackLimits } from './packLimits.ts';
import type { ArrivalObserver } from './packStreamParser.ts';
import { releaseBuffer } from './releaseBuffer.ts';

export type ResolveProgress = { phase: 'resolving'; resolved: number; total: number };

/** An object the repo already holds, as `externalBase` returns it. */
export interface ExternalObject {
  type: GitObjectType;
  data: Uint8Array;
}

export interface DeltaResolverOptions {
  entries: PackEntries;
  received: ReceivedBytes;
  inflater: StreamInflater;
  hasher: ObjectHasher;
  objSha: Sha1;
  meter: InflateMeter;
  limits: PackLimits;
  deltaBaseCacheLimit: number;
  externalBase?: (oid: string) => Promise<ExternalObject | null>;
  onProgress?: (progress: ResolveProgress) => void;
  signal?: AbortSignal;
}

const YIELD_INTERVAL_MS = 100;

function yieldToEventLoop(): Promise<void> {
  const scheduler = (globalThis as { scheduler?: { yield?: () => Promise<void> } }).scheduler;
  if (scheduler?.yield) return scheduler.yield();
  return new Promise((resolve) => setTimeout(resolve, 0));
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

export class DeltaResolver implements ArrivalObserver {
  private readonly entries: PackEntries;
  private readonly received: ReceivedBytes;
  private readonly inflater: StreamInflater;
  private readonly hasher: ObjectHasher;
  private readonly objSha: Sha1;
  private readonly meter: InflateMeter;
  private readonly limits: PackLimits;
  private readonly deltaBaseCacheLimit: number;
  private readonly externalBase?: (oid: string) => Promise<ExternalObject | null>;
  private readonly onProgress?: (progress: ResolveProgress) => void;
  private readonly signal?: AbortSignal;
  // Deltas resolved as they arrived (types[i] set), and the ring of recent objects that made it possible.
  private arrivalResolved = 0;
  private ring: ArrivalRing | null;
  private arrivalScratch = new Uint8Array(0);
  /** Objects appended from the repo to complete a thin pack, and the pack's checksum rewritten then. */
  appendedBases = 0;
  fixedChecksum: Uint8Array | null = null;

  constructor(o: DeltaResolverOptions) {
    this.entries = o.entries;
    this.received = o.received;
    this.inflater = o.inflater;
    this.hasher = o.hasher;
    this.objSha = o.objSha;
    this.meter = o.meter;
    this.limits = o.limits;
    this.deltaBaseCacheLimit = o.deltaBaseCacheLimit;
    this.externalBase = o.externalBase;
    this.onProgress = o.onProgress;
    this.signal = o.signal;
    this.ring = o.limits.arrivalCacheBytes > 0 ? new ArrivalRing(o.limits.arrivalCacheBytes) : null;
  }

  /** Whether deltas are resolved as they arrive: the stream parser tells this resolver of each entry. */
  get resolvesOnArrival(): boolean {
    return this.ring !== null;
  }

  begin(count: number): void {
    this.ring?.reserve(count);
  }

  /**
   * Entry `i` has just been inflated whole into `data` (the receive scratch). A delta whose base is still
   * kept is resolved now; what it resolves to, or a whole object, is kept for the deltas that follow.
   */
  inflated(i: number, data: Uint8Array): void {
    const ring = this.ring!;
    const entries = this.entries;
    ring.beginEntry();
    const kind = entries.kinds[i];
    if (kind === OBJ_REF_DELTA) return;
    if (kind !== OBJ_OFS_DELTA) {
      if (data.length <= ring.maxObject) ring.place(i, data.length).set(data);
      return;
    }
    const b = entries.bases[i];
    const baseSize = entries.objectSizes[b];
    let base = entries.types[b] === 0 ? null : ring.get(b, baseSize);
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
    const type = entries.types[b];
    entries.types[i] = type;
    entries.objectSizes[i] = result.length;
    this.hashObject(i, type, result);
    this.arrivalResolved++;
  }

  /** Nothing arrives any more: the ring's memory goes back at once; the rest resolve from the whole pack. */
  end(): void {
    this.ring?.free();
    this.ring = null;
    this.arrivalScratch = new Uint8Array(0);
  }

  /** Drops the ring, if receiving never ended (finish on a failed or cut pack). */
  release(): void {
    this.ring = null;
  }

  /** Entry `i`'s id from its type and bytes. */
  private hashObject(i: number, typeCode: number, data: Uint8Array): void {
    this.hasher.hash(typeName(typeCode), data, this.entries.oids, i * 20);
  }

  /** Applies a delta once its declared result fits the budget; PACK_OBJECT_TOO_LARGE comes from applyDelta. */
  private applyCounted(base: Uint8Array, delta: Uint8Array, take: (size: number) => Uint8Array): Uint8Array {
    const size = deltaResultSize(delta);
    if (size <= this.limits.maxObjectSize) this.meter.spend(size, this.received.length);
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
        const where = `The delta at offset ${this.entries.offsets[i]} does not apply to its base.`;
        throw new PackError(e.code, `${where} ${e.detail}`, { cause: e, limit: e.limit });
      }
      throw e;
    }
  }

  /** Inflates entry `i` whole from the kept pack bytes into `out` (fresh if omitted). */
  private inflateAt(i: number, out?: Uint8Array): Uint8Array {
    const entries = this.entries;
    const bytes = this.received.bytes;
    const size = entries.entrySizes[i];
    const target = out ?? new Uint8Array(size);
    const inflater = this.inflater;
    inflater.start(bytes, entries.offsets[i] + entries.headerLengths[i], target, size);
    // The entry was inflated once already, so the whole stream is here.
    if (inflater.run(bytes, this.received.length) !== INFLATE_DONE)
      throw new Error('Pack entry changed after receiving');
    return target;
  }

  /** Resolves every delta not resolved on arrival, completing a thin pack from `externalBase` if needed. */
  async resolveDeltas(): Promise<void> {
    const entries = this.entries;
    const total = entries.deltaCount;
    if (total === 0) return;
    this.onProgress?.({ phase: 'resolving', resolved: this.arrivalResolved, total });
    let resolved = this.arrivalResolved;
    if (resolved < total) resolved = await this.resolveFrom(0, resolved);
    if (resolved < total && this.externalBase) resolved = await this.completeThinPack(resolved);
    if (resolved < total) {
      // Every unresolved chain ends in a ref-delta whose base never turned up.
      for (let k = 0; k < entries.refCount; k++) {
        const entry = entries.refEntries[k];
        if (entries.types[entry] === 0) {
          throw new PackError(
            'PACK_DELTA_BASE_MISSING',
            `The delta at offset ${entries.offsets[entry]} needs object ${toHex(entries.refBaseOids, k * 20, 20)}, which is not in the pack${this.externalBase ? ' nor in the repository' : ''}.`,
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
    // In pack order, as index-pack sorts them: the parser lists ref-deltas as they come.
    for (let k = 0; k < this.entries.refCount; k++)
      if (this.entries.types[this.entries.refEntries[k]] === 0) pending.push(k);
    // Room for every base up front: grown one entry per base (the header's count caps ensureCapacity), each
    // base copied every per-object table; 26 s of large.git's 33 s unshallow fetch went to that and its GC.
    if (this.entries.parsed + pending.length > this.entries.capacity)
      this.entries.resize(this.entries.parsed + pending.length);
    let appended = 0;
    const trailerAt = this.received.length - 20;
    for (const k of pending) {
      if (this.entries.types[this.entries.refEntries[k]] !== 0) continue;
      // A base appended already resolved every ref-delta naming it (or the walk threw): the check above
      // skips them, so no base is asked for or appended twice.
      const oid = toHex(this.entries.refBaseOids, k * 20, 20);
      throwIfAborted(this.signal);
      const object = await this.externalBase!(oid);
      if (!object) continue;
      throwIfAborted(this.signal);
      // The entries go where the old trailer was.
      if (++appended === 1) this.received.length = trailerAt;
      const code = TYPE_CODES[object.type];
      const header = entryHeader(code, object.data.length);
      const compressed = await deflate(object.data);
      const start = this.received.length;
      this.received.append(header);
      this.received.append(compressed);
      this.entries.count++;
      this.entries.ensureCapacity(this.entries.parsed + 1);
      const i = this.entries.parsed++;
      this.entries.offsets[i] = start;
      this.entries.headerLengths[i] = header.length;
      this.entries.kinds[i] = code;
      this.entries.types[i] = code;
      this.entries.entrySizes[i] = object.data.length;
      this.entries.objectSizes[i] = object.data.length;
      this.entries.bases[i] = -1;
      this.entries.crcs[i] = crc32(this.received.bytes, start, this.received.length);
      this.entries.oids.set(oidFromHex(oid), i * 20);
      resolved = await this.resolveFrom(i, resolved);
    }
    if (appended === 0) return resolved;
    new DataView(this.received.bytes.buffer, this.received.bytes.byteOffset, 12).setUint32(
      8,
      this.entries.count,
    );
    const trailer = new Uint8Array(20);
    this.objSha.init();
    this.objSha.update(this.received.bytes.subarray(0, this.received.length));
    this.objSha.digestInto(trailer, 0);
    this.received.append(trailer);
    this.fixedChecksum = trailer;
    this.appendedBases = appended;
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
    const n = this.entries.parsed;
    const bases = this.entries.bases;
    // Rows by counting sort, filled backwards so that ofsStart[b] ends as row b's start.
    const ofsStart = new Int32Array(n + 1);
    for (let i = 0; i < n; i++) if (bases[i] >= 0) ofsStart[bases[i]]++;
    // ofsStart[n] counts nothing (bases are below n): summed, it is the total.
    for (let i = 1; i <= n; i++) ofsStart[i] += ofsStart[i - 1];
    const ofsChildren = new Int32Array(ofsStart[n]);
    for (let i = n - 1; i >= 0; i--) if (bases[i] >= 0) ofsChildren[--ofsStart[bases[i]]] = i;
    const refCount = this.entries.refCount;
    const refBaseOids = this.entries.refBaseOids;
    const refOrder = new Int32Array(refCount);
    for (let k = 0; k < refCount; k++) refOrder[k] = k;
    refOrder.sort((a, b) => compareOids(refBaseOids, a, refBaseOids, b));
    const refParent = new Int32Array(refCount > 0 ? n : 0).fill(-1);
    let needed: Uint8Array | null = null;
    if (refCount === 0) {
      needed = new Uint8Array(n);
      const types = this.entries.types;
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
    const total = this.entries.deltaCount;
    const n = this.entries.parsed;
    const kinds = this.entries.kinds;
    const bases = this.entries.bases;
    const oids = this.entries.oids;

    const { ofsStart, ofsChildren, refOrder, refParent, needed, entries: listed } = this.childLists();
    const types = this.entries.types;
    const refCount = this.entries.refCount;
    const refBaseOids = this.entries.refBaseOids;
    // Bases appended to complete a thin pack come after the listed entries and are never deltas, so
    // nothing names them by offset.
    const ofsFirst = (i: number) => (i < listed ? ofsStart[i] : 0);
    const ofsLast = (i: number) => (i < listed ? ofsStart[i + 1] : 0);
    // [first, end) of refOrder whose base is the object with id oids[i].
    const refRange = (i: number): [number, number] => {
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
    // Rebuilds a base dropped to stay under the cache limit, from the whole object its chain starts at. No
    // ancestor still holds its bytes: bases are dropped oldest first and only the top frame is rebuilt, so the
    // frames that hold data are always the top of the stack, and here the top is the one that does not.
    const rebuild = (entry: number): Uint8Array => {
      const chain: number[] = [];
      let j = entry;
      while (kinds[j] === OBJ_OFS_DELTA || kinds[j] === OBJ_REF_DELTA) {
        chain.push(j);
        j = parentOf(j);
      }
      let data = this.inflateAt(j);
      for (let k = chain.length - 1; k >= 0; k--)
        data = this.applyCounted(data, this.inflateAt(chain[k]), take);
      return data;
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
      const data = this.inflateAt(root, take(this.entries.entrySizes[root]));
      stack.push(frameFor(root, data)!);
      held = data.length;
      const type = this.entries.types[root];

      while (stack.length > 0) {
        const top = stack[stack.length - 1];
        let child: number;
        if (top.ofsNext < top.ofsEnd) {
          child = ofsChildren[top.ofsNext++];
          // Resolved as it arrived, and nothing below it was not.
          if (needed && !needed[child]) continue;
        } else if (top.refNext < top.refEnd) {
          child = this.entries.refEntries[refOrder[top.refNext++]];
          // Resolved already: two objects of the pack have its base's id (a base sent twice, or a delta whose
          // result is its own base). git index-pack refuses the pack ("already resolved (duplicate base)");
          // walking it again would also loop forever.
          if (this.entries.types[child] !== 0) {
            throw new PackError(
              'PACK_DELTA_INVALID',
              `The delta at offset ${this.entries.offsets[child]} was already resolved: two objects of the pack have its base's id, ${toHex(oids, top.entry * 20, 20)}.`,
            );
          }
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
        const deltaSize = this.entries.entrySizes[child];
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
          this.entries.objectSizes[child] = result.length;
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
  releaseTables(): void {
    const children = this.children;
    this.children = undefined;
    if (children) {
      for (const table of [children.ofsStart, children.ofsChildren, children.refOrder, children.refParent])
        releaseBuffer(table);
      if (children.needed) releaseBuffer(children.needed);
    }
    this.entries.releaseResolverTables();
  }
}
