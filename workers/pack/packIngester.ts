// Receives a pack as it streams in and turns it into what the store keeps: the pack bytes, its .idx and the
// list of objects. One pass over the bytes as they arrive (packStreamParser.ts), then delta resolution the
// way `git index-pack` does it (deltaResolver.ts), over the per-entry tables both fill (packEntries.ts).

import { DeltaResolver, type ExternalObject, type ResolveProgress } from './deltaResolver.ts';
import { throwIfAborted } from './errors.ts';
import { ReceivedBytes } from './growableBuffers.ts';
import { Inflater, type StreamInflater } from './inflate.ts';
import {
  createWasmSha1,
  type GitObjectType,
  ObjectHasher,
  type Sha1,
  type Sha1Factory,
  toHex,
} from './objectHash.ts';
import { PackEntries, typeName } from './packEntries.ts';
import { writePackIndexV2Tables } from './packIndexWriter.ts';
import { InflateMeter, type PackLimits, packLimits } from './packLimits.ts';
import { PackStreamParser, type ReceiveProgress } from './packStreamParser.ts';
import { releaseBuffer } from './releaseBuffer.ts';

export type { ExternalObject } from './deltaResolver.ts';

export type PackProgress = ReceiveProgress | ResolveProgress;

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

/**
 * Told of each object of the pack held whole in memory as soon as it is hashed, while the pack is still
 * arriving: its id, type and bytes, which are the ingester's (valid only during the call; a listener that
 * keeps them copies them). Before the pack is checked whole, so the pack may still be refused after; the
 * bytes do match the id. An object inflated in pieces (past `wholeObjectLimit`) is not told: the caller
 * reads it from the pack. A first checkout stages its files from here, without inflating them again.
 */
export type ObjectHook = (object: { oid: string; type: GitObjectType; data: Uint8Array }) => void;

export interface PackIngesterOptions {
  onProgress?: (progress: PackProgress) => void;
  /** Each object, whole, once hashed (ObjectHook). A throw fails the pack. */
  onObject?: ObjectHook;
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

const WHOLE_OBJECT_LIMIT = 16 * 1024 * 1024;

/** Tells ObjectHook of every object hashed whole: the parser's whole objects and every resolved delta. */
class HookedHasher extends ObjectHasher {
  constructor(
    sha1: Sha1,
    private readonly hook: ObjectHook,
  ) {
    super(sha1);
  }

  override hash(type: GitObjectType, data: Uint8Array, out: Uint8Array, offset: number): void {
    super.hash(type, data, out, offset);
    this.hook({ oid: toHex(out, offset, 20), type, data });
  }
}

export class PackIngester {
  private readonly signal?: AbortSignal;
  private readonly externalBase?: (oid: string) => Promise<ExternalObject | null>;
  private readonly objSha: Sha1;
  private readonly entries = new PackEntries();
  private readonly bytes: ReceivedBytes;
  private readonly parser: PackStreamParser;
  private readonly resolver: DeltaResolver;
  private failed: unknown = null;
  private finished = false;

  private constructor(options: PackIngesterOptions, packSha: Sha1, objSha: Sha1) {
    this.signal = options.signal;
    const limits = packLimits(options.limits);
    // Object sizes are kept in 32 bits; no browser holds a 4 GiB object in one ArrayBuffer anyway.
    limits.maxObjectSize = Math.min(limits.maxObjectSize, 2 ** 32 - 1);
    this.externalBase = options.externalBase;
    this.objSha = objSha;
    const hasher = options.onObject ? new HookedHasher(objSha, options.onObject) : new ObjectHasher(objSha);
    const inflater = options.inflater?.() ?? new Inflater();
    const meter = new InflateMeter(limits);
    const hint = options.expectedSizeHint;
    this.bytes = new ReceivedBytes(hint && hint > 0 ? Math.min(hint, 2 ** 31) : 1024 * 1024);
    const shared = {
      entries: this.entries,
      received: this.bytes,
      inflater,
      hasher,
      objSha,
      meter,
      limits,
    };
    this.resolver = new DeltaResolver({
      ...shared,
      deltaBaseCacheLimit: options.deltaBaseCacheLimit ?? 96 * 1024 * 1024,
      externalBase: options.externalBase,
      onProgress: options.onProgress,
      signal: options.signal,
    });
    this.parser = new PackStreamParser({
      ...shared,
      packSha,
      wholeObjectLimit: options.wholeObjectLimit ?? WHOLE_OBJECT_LIMIT,
      arrivals: this.resolver.resolvesOnArrival ? this.resolver : null,
      onProgress: options.onProgress,
      signal: options.signal,
    });
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
      this.parser.push(chunk);
    } catch (e) {
      this.failed = e;
      throw e;
    }
  }

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
      const checksum = this.parser.checkEnd();
      // The resolver reads the pack from the same memory, now at its exact length.
      return { pack: this.bytes.fix(), checksum: toHex(checksum) };
    } catch (e) {
      this.failed = e;
      throw e;
    }
  }

  /**
   * Checks the trailer, resolves deltas and writes the index. `objects: false`: the caller never reads
   * `objects` (a clone needs only the counts), so the per-object tables are freed as soon as the .idx is
   * made: 15 MB of large.git's write step. Reading it then throws.
   */
  async finish(options: { objects?: boolean } = {}): Promise<IngestedPack> {
    if (this.failed) throw this.failed;
    if (this.finished) throw new Error('PackIngester.finish called twice');
    this.finished = true;
    try {
      throwIfAborted(this.signal);
      const checksum = this.parser.checkEnd();
      await this.resolver.resolveDeltas();
      throwIfAborted(this.signal);
      return this.result(this.resolver.fixedChecksum ?? checksum, options.objects ?? true);
    } catch (e) {
      this.failed = e;
      throw e;
    } finally {
      this.parser.release();
      this.resolver.release();
    }
  }

  private result(checksum: Uint8Array, keepObjects: boolean): IngestedPack {
    this.resolver.releaseTables();
    const n = this.entries.parsed;
    const { types, oids, offsets, crcs, objectSizes } = this.entries;
    const counts: Record<GitObjectType, number> = { commit: 0, tree: 0, blob: 0, tag: 0 };
    for (let i = 0; i < n; i++) counts[typeName(types[i])]++;
    // Made when first read: a clone needs only the counts, and 430,000 objects (large.git) as JS objects
    // with hex ids would be tens of megabytes of heap.
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
    const idx = writePackIndexV2Tables(oids, offsets, crcs, n, checksum, this.objSha);
    if (!keepObjects) for (const table of [oids, offsets, crcs]) releaseBuffer(table);
    // The pack is handed over exactly: stored as is, with no slack for IndexedDB to clone along.
    const pack = this.bytes.fix();
    return {
      pack,
      checksum: toHex(checksum),
      idx,
      counts,
      appendedBases: this.resolver.appendedBases,
      get objects() {
        return listObjects();
      },
    };
  }
}
