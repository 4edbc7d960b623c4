// Writing a commit-graph file as git 2.39 writes it (commit-graph.c write_commit_graph_file), byte for
// byte: the commits sorted by id, OIDF, OIDL, CDAT with topological levels, GDA2 (and GDO2 when an offset
// does not fit 31 bits) with corrected commit dates, EDGE for octopus merges, BIDX and BDAT with the
// changed-path Bloom filters, BASE for a layer of a split chain, then the SHA-1 of it all.

import { sha1 } from '../pack/objectHash.ts';
import { BLOOM_SETTINGS } from './bloomFilter.ts';
import { type Chunk, writeChunks } from './chunkFile.ts';
import type { CommitGraph } from './commitGraph.ts';
import { CommitGraphError } from './errors.ts';
import {
  BLOOM_HEADER_SIZE,
  CHUNK,
  COMMIT_DATA_SIZE,
  EXTRA_EDGES_NEEDED,
  FANOUT_SIZE,
  GENERATION_V1_MAX,
  GENERATION_V2_OFFSET_MAX,
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

export interface GraphCommit {
  oid: string;
  tree: string;
  parents: string[];
  /** Committer time in seconds. */
  time: number;
  /** The changed-path filter (bloomFilterFor of the commit's changes against its first parent). */
  bloom?: Uint8Array;
}

export interface WriteGraphOptions {
  /** The layers this one goes on top of; its parents may be there. */
  base?: CommitGraph | null;
  /** Write BIDX and BDAT (`--changed-paths`): every commit must carry `bloom`. */
  changedPaths?: boolean;
}

function invalid(message: string): never {
  throw new CommitGraphError('COMMIT_GRAPH_INVALID_INPUT', message);
}

/** One commit-graph file (a whole graph, or the top layer of a chain over `base`). */
export function writeCommitGraph(commits: GraphCommit[], opts: WriteGraphOptions = {}): Uint8Array {
  const base = opts.base ?? null;
  const baseCount = base?.size ?? 0;
  const sorted = [...commits].sort((a, b) => (a.oid < b.oid ? -1 : a.oid > b.oid ? 1 : 0));
  const n = sorted.length;
  const index = new Map<string, number>();
  const lookup = new Uint8Array(n * HASH_SIZE);
  sorted.forEach((c, i) => {
    if (!hexInto(c.oid, lookup, i * HASH_SIZE)) invalid(`${c.oid} is not a commit id.`);
    if (index.has(c.oid)) invalid(`Commit ${c.oid} is given twice.`);
    if (base && base.position(c.oid) >= 0) invalid(`Commit ${c.oid} is already in a lower layer.`);
    index.set(c.oid, i);
  });

  // Parent positions: in this file after the base layers, or in a base layer.
  const parents: number[][] = sorted.map((c) =>
    c.parents.map((p) => {
      const local = index.get(p);
      if (local !== undefined) return baseCount + local;
      const below = base ? base.position(p) : -1;
      if (below < 0) invalid(`The parent ${p} of ${c.oid} is not in the commit-graph.`);
      return below;
    }),
  );
  const { levels, corrected } = generations(sorted, parents, baseCount, base);

  // OIDF and OIDL.
  const fanout = new Uint8Array(FANOUT_SIZE);
  const fanoutView = new DataView(fanout.buffer);
  const counts = new Uint32Array(256);
  for (let i = 0; i < n; i++) counts[lookup[i * HASH_SIZE]]++;
  for (let b = 0, total = 0; b < 256; b++) {
    total += counts[b];
    fanoutView.setUint32(4 * b, total);
  }

  // CDAT, EDGE, GDA2, GDO2.
  const data = new Uint8Array(n * COMMIT_DATA_SIZE);
  const dataView = new DataView(data.buffer);
  const edges: number[] = [];
  const offsets = new Uint8Array(n * 4);
  const offsetsView = new DataView(offsets.buffer);
  const overflow: number[] = [];
  sorted.forEach((c, i) => {
    const at = i * COMMIT_DATA_SIZE;
    if (!hexInto(c.tree, data, at)) invalid(`Commit ${c.oid} has tree ${c.tree}.`);
    const ps = parents[i];
    dataView.setUint32(at + HASH_SIZE, ps.length > 0 ? ps[0] : PARENT_NONE);
    if (ps.length <= 2) {
      dataView.setUint32(at + HASH_SIZE + 4, ps.length === 2 ? ps[1] : PARENT_NONE);
    } else {
      dataView.setUint32(at + HASH_SIZE + 4, (EXTRA_EDGES_NEEDED | edges.length) >>> 0);
      for (let k = 1; k < ps.length; k++) edges.push(k === ps.length - 1 ? (ps[k] | LAST_EDGE) >>> 0 : ps[k]);
    }
    if (!Number.isInteger(c.time) || c.time < 0 || c.time >= 2 ** 34)
      invalid(`Commit ${c.oid} has time ${c.time}.`);
    const high = Math.floor(c.time / 0x1_0000_0000);
    dataView.setUint32(at + HASH_SIZE + 8, (Math.min(levels[i], GENERATION_V1_MAX) * 4 + high) >>> 0);
    dataView.setUint32(at + HASH_SIZE + 12, c.time >>> 0);
    const offset = corrected[i] - c.time;
    if (offset > GENERATION_V2_OFFSET_MAX) {
      offsetsView.setUint32(4 * i, (OFFSET_OVERFLOW | (overflow.length / 2)) >>> 0);
      overflow.push(Math.floor(offset / 0x1_0000_0000), offset >>> 0);
    } else {
      offsetsView.setUint32(4 * i, offset);
    }
  });

  const chunks: Chunk[] = [
    { id: CHUNK.fanout, data: fanout },
    { id: CHUNK.lookup, data: lookup },
    { id: CHUNK.data, data },
    { id: CHUNK.generations, data: offsets },
  ];
  if (overflow.length) chunks.push({ id: CHUNK.generationOverflow, data: be32s(overflow) });
  if (edges.length) chunks.push({ id: CHUNK.extraEdges, data: be32s(edges) });
  if (opts.changedPaths) {
    const ends: number[] = [];
    let total = 0;
    for (const c of sorted) {
      if (!c.bloom) invalid(`Commit ${c.oid} has no changed-path filter.`);
      total += c.bloom.length;
      ends.push(total);
    }
    const bloomData = new Uint8Array(BLOOM_HEADER_SIZE + total);
    bloomData.set(be32s([BLOOM_SETTINGS.hashVersion, BLOOM_SETTINGS.numHashes, BLOOM_SETTINGS.bitsPerEntry]));
    let at = BLOOM_HEADER_SIZE;
    for (const c of sorted) {
      bloomData.set(c.bloom!, at);
      at += c.bloom!.length;
    }
    chunks.push({ id: CHUNK.bloomIndexes, data: be32s(ends) }, { id: CHUNK.bloomData, data: bloomData });
  }
  const baseLayers = base?.layers ?? [];
  if (baseLayers.length) {
    const hashes = new Uint8Array(baseLayers.length * HASH_SIZE);
    baseLayers.forEach((l, i) => {
      hexInto(l.hash, hashes, i * HASH_SIZE);
    });
    chunks.push({ id: CHUNK.base, data: hashes });
  }

  const body = writeChunks(HEADER_SIZE, chunks);
  const view = new DataView(body.buffer);
  view.setUint32(0, SIGNATURE);
  body[4] = GRAPH_VERSION;
  body[5] = HASH_VERSION_SHA1;
  body[6] = chunks.length;
  body[7] = baseLayers.length;
  const file = new Uint8Array(body.length + HASH_SIZE);
  file.set(body);
  file.set(sha1(body), body.length);
  return file;
}

function be32s(values: number[]): Uint8Array {
  const out = new Uint8Array(values.length * 4);
  const view = new DataView(out.buffer);
  values.forEach((v, i) => {
    view.setUint32(4 * i, v);
  });
  return out;
}

/**
 * Topological levels and corrected commit dates (compute_topological_levels, compute_generation_numbers),
 * walking parents first with an explicit stack. A parent in a base layer brings its stored values.
 */
function generations(
  commits: GraphCommit[],
  parents: number[][],
  baseCount: number,
  base: CommitGraph | null,
): { levels: Float64Array; corrected: Float64Array } {
  const n = commits.length;
  const levels = new Float64Array(n);
  const corrected = new Float64Array(n);
  const done = new Uint8Array(n);
  const levelOf = (p: number) => (p >= baseCount ? levels[p - baseCount] : base!.topoLevel(p));
  const dateOf = (p: number) => {
    if (p >= baseCount) return corrected[p - baseCount];
    const d = base!.correctedDate(p);
    if (d === undefined) invalid('A base layer has no corrected commit dates (GDA2).');
    return d;
  };
  const stack: number[] = [];
  for (let start = 0; start < n; start++) {
    if (done[start]) continue;
    stack.push(start);
    while (stack.length) {
      const i = stack[stack.length - 1];
      if (done[i]) {
        stack.pop();
        continue;
      }
      let pending = -1;
      for (const p of parents[i]) {
        if (p >= baseCount && !done[p - baseCount]) {
          pending = p - baseCount;
          break;
        }
      }
      if (pending >= 0) {
        stack.push(pending);
        if (stack.length > n + 1) invalid('The commits given form a cycle.');
        continue;
      }
      let maxLevel = 0;
      let maxDate = 0;
      for (const p of parents[i]) {
        maxLevel = Math.max(maxLevel, levelOf(p));
        maxDate = Math.max(maxDate, dateOf(p));
      }
      levels[i] = Math.min(maxLevel + 1, GENERATION_V1_MAX);
      corrected[i] = Math.max(commits[i].time, maxDate + 1);
      done[i] = 1;
      stack.pop();
    }
  }
  return { levels, corrected };
}
