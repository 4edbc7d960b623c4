// Reading a commit-graph: one file (objects/info/commit-graph) or a split chain of layers
// (objects/info/commit-graphs/), base layer first. Positions are global: a layer's first commit comes
// after every commit of the layers below it. Every length and position is checked before it is used, so
// a damaged file is a CommitGraphError, never a wrong answer or an exception from a typed array.

import { sha1, toHex } from '../pack/objectHash.ts';
import { readChunks } from './chunkFile.ts';
import { CommitGraphError } from './errors.ts';
import {
  BLOOM_HEADER_SIZE,
  CHUNK,
  COMMIT_DATA_SIZE,
  EXTRA_EDGES_NEEDED,
  FANOUT_SIZE,
  GRAPH_VERSION,
  HASH_SIZE,
  HASH_VERSION_SHA1,
  HEADER_SIZE,
  LAST_EDGE,
  OFFSET_OVERFLOW,
  PARENT_NONE,
  SIGNATURE,
} from './graphFormat.ts';
import { hexInto } from './hexIds.ts';

export interface GraphLayer {
  /** The trailing checksum in hex: a chain layer's file is `graph-<hash>.graph`. */
  hash: string;
  count: number;
  /** Commits in the layers below. */
  baseCount: number;
  fanout: Uint8Array;
  oids: Uint8Array;
  data: Uint8Array;
  generations?: Uint8Array;
  generationOverflow?: Uint8Array;
  extraEdges?: Uint8Array;
  bloomIndexes?: Uint8Array;
  bloomData?: Uint8Array;
  /** The hashes the BASE chunk names, bottom first. */
  baseHashes: string[];
}

function corrupt(message: string): never {
  throw new CommitGraphError('COMMIT_GRAPH_CORRUPT', message);
}

function u32(bytes: Uint8Array, at: number): number {
  return ((bytes[at] << 24) | (bytes[at + 1] << 16) | (bytes[at + 2] << 8) | bytes[at + 3]) >>> 0;
}

/** Parses and checks one commit-graph file; `baseCount` is the number of commits in the layers below it. */
export function parseGraphLayer(file: Uint8Array, baseCount = 0): GraphLayer {
  if (file.length < HEADER_SIZE + 12 + HASH_SIZE) corrupt('The commit-graph is too short to hold a header.');
  if (u32(file, 0) !== SIGNATURE) corrupt('The commit-graph does not start with CGPH.');
  if (file[4] !== GRAPH_VERSION) corrupt(`Commit-graph version ${file[4]} is not supported.`);
  if (file[5] !== HASH_VERSION_SHA1) corrupt(`Commit-graph hash version ${file[5]} is not SHA-1.`);
  const end = file.length - HASH_SIZE;
  const trailer = file.subarray(end);
  const digest = sha1(file.subarray(0, end));
  if (!digest.every((b, i) => b === trailer[i]))
    corrupt('The commit-graph checksum does not match its content.');
  const chunks = readChunks(file, HEADER_SIZE, file[6], end);
  const bases = file[7];

  const fanout = chunks.get(CHUNK.fanout) ?? corrupt('The commit-graph has no OIDF chunk.');
  if (fanout.length !== FANOUT_SIZE) corrupt('The commit-graph OIDF chunk has the wrong size.');
  let previous = 0;
  for (let i = 0; i < 256; i++) {
    const n = u32(fanout, 4 * i);
    if (n < previous) corrupt('The commit-graph fan-out table goes down.');
    previous = n;
  }
  const count = previous;
  const sized = (id: string, size: number, required: boolean): Uint8Array | undefined => {
    const chunk = chunks.get(id);
    if (!chunk) return required ? corrupt(`The commit-graph has no ${id} chunk.`) : undefined;
    if (chunk.length !== size) corrupt(`The commit-graph ${id} chunk has the wrong size.`);
    return chunk;
  };
  const oids = sized(CHUNK.lookup, count * HASH_SIZE, true)!;
  const data = sized(CHUNK.data, count * COMMIT_DATA_SIZE, true)!;
  const generations = sized(CHUNK.generations, count * 4, false);
  const generationOverflow = chunks.get(CHUNK.generationOverflow);
  if (generationOverflow && generationOverflow.length % 8)
    corrupt('The commit-graph GDO2 chunk has the wrong size.');
  const extraEdges = chunks.get(CHUNK.extraEdges);
  if (extraEdges && extraEdges.length % 4) corrupt('The commit-graph EDGE chunk has the wrong size.');
  let bloomIndexes = chunks.get(CHUNK.bloomIndexes);
  let bloomData = chunks.get(CHUNK.bloomData);
  if (bloomIndexes && bloomData) {
    if (bloomIndexes.length !== count * 4) corrupt('The commit-graph BIDX chunk has the wrong size.');
    if (bloomData.length < BLOOM_HEADER_SIZE) corrupt('The commit-graph BDAT chunk is too short.');
    let last = 0;
    for (let i = 0; i < count; i++) {
      const e = u32(bloomIndexes, 4 * i);
      if (e < last || BLOOM_HEADER_SIZE + e > bloomData.length)
        corrupt('A commit-graph Bloom filter lies outside BDAT.');
      last = e;
    }
  } else {
    // git ignores one without the other.
    bloomIndexes = undefined;
    bloomData = undefined;
  }
  const base = chunks.get(CHUNK.base);
  if ((base?.length ?? 0) !== bases * HASH_SIZE)
    corrupt('The commit-graph BASE chunk does not match its header.');
  const baseHashes: string[] = [];
  for (let i = 0; i < bases; i++) baseHashes.push(toHex(base!, i * HASH_SIZE, HASH_SIZE));
  return {
    hash: toHex(trailer),
    count,
    baseCount,
    fanout,
    oids,
    data,
    generations,
    generationOverflow,
    extraEdges,
    bloomIndexes,
    bloomData,
    baseHashes,
  };
}

export interface BloomSettings {
  hashVersion: number;
  numHashes: number;
  bitsPerEntry: number;
}

/** A commit-graph, one file or a chain, and what it says about each commit. */
export class CommitGraph {
  readonly size: number;
  private readonly scratch = new Uint8Array(HASH_SIZE);

  private constructor(readonly layers: GraphLayer[]) {
    this.size = layers.reduce((n, l) => n + l.count, 0);
  }

  static fromFile(file: Uint8Array): CommitGraph {
    const layer = parseGraphLayer(file);
    if (layer.baseHashes.length) corrupt('A single commit-graph file names base layers.');
    return new CommitGraph([layer]);
  }

  /** The files of a chain, bottom first (the order of commit-graph-chain's lines). */
  static fromChain(files: Uint8Array[]): CommitGraph {
    const layers: GraphLayer[] = [];
    let baseCount = 0;
    for (const file of files) {
      const layer = parseGraphLayer(file, baseCount);
      const below = layers.map((l) => l.hash);
      if (layer.baseHashes.join() !== below.join())
        corrupt('A commit-graph layer does not name the layers below it.');
      layers.push(layer);
      baseCount += layer.count;
    }
    return new CommitGraph(layers);
  }

  /** The global position of a commit, or -1 when the graph does not hold it. */
  position(oid: string): number {
    const id = this.scratch;
    if (!hexInto(oid, id, 0)) return -1;
    for (const layer of this.layers) {
      const lo0 = id[0] === 0 ? 0 : u32(layer.fanout, 4 * (id[0] - 1));
      let lo = lo0;
      let hi = u32(layer.fanout, 4 * id[0]);
      if (hi > layer.count) corrupt('The commit-graph fan-out table counts more commits than it holds.');
      while (lo < hi) {
        const mid = (lo + hi) >>> 1;
        const c = compareOid(layer.oids, mid * HASH_SIZE, id);
        if (c === 0) return layer.baseCount + mid;
        if (c < 0) lo = mid + 1;
        else hi = mid;
      }
    }
    return -1;
  }

  private at(position: number): { layer: GraphLayer; index: number } {
    for (const layer of this.layers) {
      if (position >= layer.baseCount && position < layer.baseCount + layer.count) {
        return { layer, index: position - layer.baseCount };
      }
    }
    throw new CommitGraphError(
      'COMMIT_GRAPH_CORRUPT',
      `Commit-graph position ${position} is outside the graph.`,
    );
  }

  oid(position: number): string {
    const { layer, index } = this.at(position);
    return toHex(layer.oids, index * HASH_SIZE, HASH_SIZE);
  }

  tree(position: number): string {
    const { layer, index } = this.at(position);
    return toHex(layer.data, index * COMMIT_DATA_SIZE, HASH_SIZE);
  }

  /** Parent positions, in order. */
  parents(position: number): number[] {
    const { layer, index } = this.at(position);
    const at = index * COMMIT_DATA_SIZE + HASH_SIZE;
    const out: number[] = [];
    const first = u32(layer.data, at);
    if (first === PARENT_NONE) return out;
    out.push(this.checked(first));
    const second = u32(layer.data, at + 4);
    if (second === PARENT_NONE) return out;
    if (!(second & EXTRA_EDGES_NEEDED)) {
      out.push(this.checked(second));
      return out;
    }
    const edges =
      layer.extraEdges ?? corrupt('A commit-graph octopus merge points into a missing EDGE chunk.');
    for (let e = second & ~EXTRA_EDGES_NEEDED; ; e++) {
      if (4 * e + 4 > edges.length) corrupt('A commit-graph octopus merge runs past its EDGE chunk.');
      const v = u32(edges, 4 * e);
      out.push(this.checked(v & ~LAST_EDGE));
      if (v & LAST_EDGE) return out;
    }
  }

  private checked(position: number): number {
    if (position >= this.size) corrupt(`A commit-graph parent position ${position} is outside the graph.`);
    return position;
  }

  /** The committer time, in seconds. */
  commitTime(position: number): number {
    const { layer, index } = this.at(position);
    const at = index * COMMIT_DATA_SIZE + HASH_SIZE + 8;
    return (u32(layer.data, at) & 3) * 0x1_0000_0000 + u32(layer.data, at + 4);
  }

  /** Generation number v1: 1 for a root, else one more than its highest parent. */
  topoLevel(position: number): number {
    const { layer, index } = this.at(position);
    return u32(layer.data, index * COMMIT_DATA_SIZE + HASH_SIZE + 8) >>> 2;
  }

  /**
   * Generation number v2, the corrected commit date: at least the commit time and more than every parent's.
   * Undefined when the layer holding the commit has no GDA2 chunk.
   */
  correctedDate(position: number): number | undefined {
    const { layer, index } = this.at(position);
    if (!layer.generations) return undefined;
    const raw = u32(layer.generations, 4 * index);
    let offset = raw;
    if (raw & OFFSET_OVERFLOW) {
      const o = raw & ~OFFSET_OVERFLOW;
      const gdo =
        layer.generationOverflow ?? corrupt('A commit-graph date offset points into a missing GDO2 chunk.');
      if (8 * o + 8 > gdo.length) corrupt('A commit-graph date offset points past its GDO2 chunk.');
      offset = u32(gdo, 8 * o) * 0x1_0000_0000 + u32(gdo, 8 * o + 4);
    }
    return this.commitTime(position) + offset;
  }

  /** What git orders by: the corrected date when every layer has it, else the topological level. */
  generation(position: number): number {
    if (this.layers.every((l) => l.generations)) return this.correctedDate(position)!;
    return this.topoLevel(position);
  }

  /** The settings of the Bloom filters of the layer holding `position`, or null when it has none. */
  bloomSettings(position: number): BloomSettings | null {
    const { layer } = this.at(position);
    if (!layer.bloomData) return null;
    return {
      hashVersion: u32(layer.bloomData, 0),
      numHashes: u32(layer.bloomData, 4),
      bitsPerEntry: u32(layer.bloomData, 8),
    };
  }

  /** The changed-path Bloom filter of a commit, or null when its layer has none. */
  bloomFilter(position: number): Uint8Array | null {
    const { layer, index } = this.at(position);
    if (!layer.bloomIndexes || !layer.bloomData) return null;
    const end = u32(layer.bloomIndexes, 4 * index);
    const start = index === 0 ? 0 : u32(layer.bloomIndexes, 4 * (index - 1));
    return layer.bloomData.subarray(BLOOM_HEADER_SIZE + start, BLOOM_HEADER_SIZE + end);
  }
}

function compareOid(table: Uint8Array, at: number, id: Uint8Array): number {
  for (let k = 0; k < HASH_SIZE; k++) {
    const d = table[at + k] - id[k];
    if (d) return d;
  }
  return 0;
}
