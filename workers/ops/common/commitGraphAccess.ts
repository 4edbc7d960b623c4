// The repository's commit-graph (objects/info/commit-graphs/, a split chain as git writes with --split),
// read once per version of its chain file (kept with the repo's other caches) and shared by the history walks, which use its generation
// numbers and changed-path Bloom filters to skip reading trees.

import { CommitGraph } from '../../commitgraph/commitGraph.ts';
import { CommitGraphError } from '../../commitgraph/errors.ts';
import { GITDIR, type PromiseFs } from '../../store/repoFs.ts';
import type { RepoHandle } from './repoAccess.ts';

export const COMMIT_GRAPHS_DIR = `${GITDIR}/objects/info/commit-graphs`;
export const COMMIT_GRAPH_CHAIN = `${COMMIT_GRAPHS_DIR}/commit-graph-chain`;

export function layerPath(hash: string): string {
  return `${COMMIT_GRAPHS_DIR}/graph-${hash}.graph`;
}

/** The chain's layer hashes, bottom first; none when there is no chain. */
export async function readChainHashes(fs: PromiseFs): Promise<string[]> {
  const text = (await fs.readFile(COMMIT_GRAPH_CHAIN, 'utf8').catch(() => '')) as string;
  return text.split('\n').filter((l) => /^[0-9a-f]{40}$/.test(l));
}

/** The chain's layer files, bottom first. */
export async function readChainFiles(fs: PromiseFs, hashes: string[]): Promise<Uint8Array[]> {
  const files: Uint8Array[] = [];
  for (const hash of hashes) files.push((await fs.readFile(layerPath(hash))) as Uint8Array);
  return files;
}

/**
 * The repository's commit-graph, or null when it has none (a shallow clone, or history not written yet)
 * or it does not read (then the walks read trees, as without one; the next write replaces it).
 */
export async function commitGraphFor(repo: RepoHandle): Promise<CommitGraph | null> {
  const fs = repo.fs.promises;
  const hashes = await readChainHashes(fs);
  const chain = hashes.join();
  const known = repo.kept.commitGraph;
  if (known?.chain === chain) return known.graph;
  let graph: CommitGraph | null = null;
  if (hashes.length) {
    try {
      graph = CommitGraph.fromChain(await readChainFiles(fs, hashes));
    } catch (err) {
      if (!(err instanceof CommitGraphError) && (err as { code?: string }).code !== 'ENOENT') throw err;
      console.warn(
        `The commit-graph of ${repo.record.id} does not read; history walks read trees instead.`,
        err,
      );
    }
  }
  repo.kept.commitGraph = { chain, graph };
  return graph;
}

/** What a history walk needs of a commit: its parents, its tree and its committer's date. */
export interface CommitHeader {
  parent: string[];
  tree: string;
  committer: { timestamp: number };
}

/**
 * Reads commits' headers from the commit-graph where it holds them (no object to inflate and parse), else
 * from the object itself.
 */
export function commitHeaders(
  graph: CommitGraph | null,
  readObject: (oid: string) => Promise<CommitHeader>,
): (oid: string) => Promise<CommitHeader> {
  if (!graph) return readObject;
  return async (oid) => {
    const p = graph.position(oid);
    if (p < 0) return readObject(oid);
    return {
      parent: graph.parents(p).map((q) => graph.oid(q)),
      tree: graph.tree(p),
      committer: { timestamp: graph.commitTime(p) },
    };
  };
}
