// Split commit-graphs (`git commit-graph write --split`): new commits go into a new top layer, and the top
// layers are merged into it while each is no more than twice as large as what is being written
// (split_graph_merge_strategy, --size-multiple=2), so a graph built as history arrives stays a few files
// whose sizes fall geometrically. The chain lists the layers' hashes in commit-graphs/commit-graph-chain.

import { toHex } from '../pack/objectHash.ts';
import { CommitGraph } from './commitGraph.ts';
import { type GraphCommit, writeCommitGraph } from './commitGraphWriter.ts';
import { CommitGraphError } from './errors.ts';

export interface SplitOptions {
  /** A layer merges into the new one when it has at most this many times the new layer's commits. */
  sizeMultiple?: number;
  /** `--max-commits`: merge further while the new layer has more commits than this (0: no such rule). */
  maxCommits?: number;
  /** `--split=no-merge`: always a new layer. */
  noMerge?: boolean;
  changedPaths?: boolean;
}

export interface ChainLayerFile {
  /** `graph-<hash>.graph` in objects/info/commit-graphs/. */
  hash: string;
  bytes: Uint8Array;
}

export interface SplitWrite {
  /** The chain after the write, bottom first: the layers kept, then the new one. */
  layers: ChainLayerFile[];
  /** The new top layer (also the last of `layers`). */
  written: ChainLayerFile;
  /** Hashes of the layers merged into the new one: their files can go. */
  replaced: string[];
  /** The content of commit-graph-chain. */
  chainFile: string;
}

/** How many of the top layers (sizes bottom first) merge into a new layer of `commits` commits. */
export function layersToMerge(layerSizes: number[], commits: number, opts: SplitOptions = {}): number {
  if (opts.noMerge) return 0;
  const multiple = opts.sizeMultiple ?? 2;
  const maxCommits = opts.maxCommits ?? 0;
  let total = commits;
  let merged = 0;
  for (let i = layerSizes.length - 1; i >= 0; i--) {
    if (!(layerSizes[i] <= multiple * total || (maxCommits && total > maxCommits))) break;
    total += layerSizes[i];
    merged++;
  }
  return merged;
}

/** The commits of some layers of a graph, read back so they can be written again into a merged layer. */
function commitsOfLayers(graph: CommitGraph, from: number): GraphCommit[] {
  const out: GraphCommit[] = [];
  for (const layer of graph.layers.slice(from)) {
    for (let i = 0; i < layer.count; i++) {
      const p = layer.baseCount + i;
      out.push({
        oid: graph.oid(p),
        tree: graph.tree(p),
        parents: graph.parents(p).map((q) => graph.oid(q)),
        time: graph.commitTime(p),
        bloom: graph.bloomFilter(p) ?? undefined,
      });
    }
  }
  return out;
}

/**
 * Adds `commits` (none of them in the chain yet; their parents in the chain or among them) as a new layer
 * of the chain `chain` (layer files bottom first; empty for none), merging top layers as git would.
 */
export function writeSplitLayer(
  chain: Uint8Array[],
  commits: GraphCommit[],
  opts: SplitOptions = {},
): SplitWrite {
  const graph = CommitGraph.fromChain(chain);
  const merge = layersToMerge(
    graph.layers.map((l) => l.count),
    commits.length,
    opts,
  );
  const keep = graph.layers.length - merge;
  const merged = commitsOfLayers(graph, keep);
  if (opts.changedPaths && merged.some((c) => !c.bloom)) {
    throw new CommitGraphError('COMMIT_GRAPH_INVALID_INPUT', 'A layer to merge has no changed-path filters.');
  }
  const base = keep ? CommitGraph.fromChain(chain.slice(0, keep)) : null;
  const bytes = writeCommitGraph([...commits, ...merged], { base, changedPaths: opts.changedPaths });
  const written = { hash: toHex(bytes, bytes.length - 20, 20), bytes };
  const layers = [...graph.layers.slice(0, keep).map((l, i) => ({ hash: l.hash, bytes: chain[i] })), written];
  return {
    layers,
    written,
    replaced: graph.layers.slice(keep).map((l) => l.hash),
    chainFile: layers.map((l) => `${l.hash}\n`).join(''),
  };
}
