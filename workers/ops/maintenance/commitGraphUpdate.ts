// The commit-graph, written as history arrives: after a clone, the history fill's last step and each fetch,
// the commits the refs reach that the graph lacks become a new layer of objects/info/commit-graphs, as
// `git commit-graph write --reachable --split --changed-paths` would write it (layers merged by git's
// strategy), with each commit's changed-path Bloom filter computed from its trees. Nothing is written
// while the repository is shallow: git neither writes nor reads a commit-graph there, and a shallow
// commit's parents are not stored.

import { bloomFilterFor } from '../../commitgraph/bloomFilter.ts';
import { writeSplitLayer } from '../../commitgraph/commitGraphChain.ts';
import type { GraphCommit } from '../../commitgraph/commitGraphWriter.ts';
import { parsePackedRefs } from '../../store/packedRefs.ts';
import { GITDIR, mkdirp, type PromiseFs } from '../../store/repoFs.ts';
import {
  COMMIT_GRAPH_CHAIN,
  COMMIT_GRAPHS_DIR,
  commitGraphFor,
  layerPath,
  readChainFiles,
  readChainHashes,
} from '../common/commitGraphAccess.ts';
import { throwIfAborted } from '../common/errors.ts';
import {
  openRepo,
  peelTags,
  type RepoHandle,
  readCommitObject,
  shallowCommits,
} from '../common/repoAccess.ts';
import { timeline } from '../common/timeline.ts';
import { changedPaths, TreeEntriesCache } from '../common/treePair.ts';
import { type MaintenanceContext, maintenanceIdle, scheduleUnderLock } from './packMaintenance.ts';

/**
 * New commits written inside the operation that stored them (under its lock) up to this many; more (a
 * clone or the history fill bringing a long history) are written in the background after it, so that the
 * clone's time is not spent on Bloom filters. Each commit costs one tree diff against its parent.
 */
export const COMMIT_GRAPH_INLINE_COMMITS = 2_000;

/**
 * Trees kept while the Bloom filters are computed (TreeEntriesCache), each a parsed tree of a few KB.
 * Trees read for small-sized.git's 300 commits (counted in Node, 2026-12-01; times too noisy on a machine
 * at load 17 to choose by): none kept 2,730; 16: 2,275; 256: 1,441; 2,000: 1,346.
 */
export const COMMIT_GRAPH_TREE_CACHE = 256;

export interface CommitGraphUpdate {
  /** Commits added to the graph. */
  commits: number;
  /** Layers in the chain afterwards. */
  layers: number;
}

/** Every ref's tip (HEAD, loose and packed refs), tags peeled to their commits. */
async function refTips(repo: RepoHandle): Promise<string[]> {
  const fs = repo.fs.promises;
  const ids = new Set<string>();
  const head = ((await fs.readFile(`${GITDIR}/HEAD`, 'utf8').catch(() => '')) as string).trim();
  if (/^[0-9a-f]{40}$/.test(head)) ids.add(head);
  const packed = (await fs.readFile(`${GITDIR}/packed-refs`, 'utf8').catch(() => '')) as string;
  for (const r of parsePackedRefs(packed)) ids.add(r.peeled ?? r.oid);
  const walk = async (dir: string): Promise<void> => {
    for (const name of (await fs.readdir(dir).catch(() => [])) as string[]) {
      const path = `${dir}/${name}`;
      if ((await fs.lstat(path)).isDirectory()) await walk(path);
      else {
        const value = ((await fs.readFile(path, 'utf8')) as string).trim();
        if (/^[0-9a-f]{40}$/.test(value)) ids.add(value);
      }
    }
  };
  await walk(`${GITDIR}/refs`);
  const tips: string[] = [];
  for (const id of ids) {
    const commit = await peelTags(repo, id).catch(() => null);
    if (commit) tips.push(commit);
  }
  return tips;
}

/**
 * Adds the commits the refs reach and the graph lacks as a new layer. The caller holds the repo's lock.
 * Null when there is nothing to add or the repository is shallow; 'too-many' (and nothing written) when
 * there are more than `maxCommits` to add.
 */
export async function updateCommitGraph(
  ctx: MaintenanceContext,
  repoId: string,
  hooks: { signal?: AbortSignal; maxCommits?: number } = {},
): Promise<CommitGraphUpdate | 'too-many' | null> {
  const repo = await openRepo(ctx, repoId);
  if ((await shallowCommits(repo)).size > 0) return null;
  const graph = await commitGraphFor(repo);
  // The steps' times go to the timeline (`blobless:commitGraph:*`), where the benchmark reads the build time.
  let started = performance.now();
  const fresh: GraphCommit[] = [];
  const trees = new Map<string, string>();
  const seen = new Set<string>();
  const stack = await refTips(repo);
  while (stack.length) {
    throwIfAborted(hooks.signal);
    const oid = stack.pop()!;
    if (seen.has(oid)) continue;
    seen.add(oid);
    if (graph && graph.position(oid) >= 0) continue;
    if (hooks.maxCommits !== undefined && fresh.length >= hooks.maxCommits) {
      timeline(ctx, 'commitGraph').measure('commits', started);
      return 'too-many';
    }
    const commit = await readCommitObject(repo, oid);
    trees.set(oid, commit.tree);
    fresh.push({ oid, tree: commit.tree, parents: commit.parent, time: commit.committer.timestamp });
    for (const p of commit.parent) stack.push(p);
  }
  if (!fresh.length) return null;
  timeline(ctx, 'commitGraph').measure('commits', started);
  started = performance.now();
  const treeOf = async (oid: string): Promise<string> => {
    const known = trees.get(oid);
    if (known) return known;
    const position = graph ? graph.position(oid) : -1;
    return position >= 0 ? graph!.tree(position) : (await readCommitObject(repo, oid)).tree;
  };
  // The commits come child before parent, so a commit's trees are read again as its parent's next.
  const read = new TreeEntriesCache(COMMIT_GRAPH_TREE_CACHE);
  for (const c of fresh) {
    throwIfAborted(hooks.signal);
    const parentTree = c.parents.length ? await treeOf(c.parents[0]) : null;
    c.bloom = bloomFilterFor(await changedPaths(repo, parentTree, c.tree, read));
  }
  timeline(ctx, 'commitGraph').measure('bloomFilters', started);
  started = performance.now();
  const fs = repo.fs.promises;
  const hashes = await readChainHashes(fs);
  const written = writeSplitLayer(await readChainFiles(fs, hashes), fresh, { changedPaths: true });
  await ctx.store.repoFs.writeAllOrNothing(repoId, async () => {
    await mkdirp(fs, COMMIT_GRAPHS_DIR);
    await fs.writeFile(layerPath(written.written.hash), written.written.bytes);
    await fs.writeFile(COMMIT_GRAPH_CHAIN, written.chainFile, 'utf8');
    for (const hash of written.replaced)
      if (hash !== written.written.hash) await removeQuietly(fs, layerPath(hash));
  });
  await ctx.store.repoFs.flush(repoId);
  timeline(ctx, 'commitGraph').measure('write', started);
  return { commits: fresh.length, layers: written.layers.length };
}

export interface CommitGraphStatus {
  /** Commits in the graph, over all layers. */
  commits: number;
  layers: number;
  /** The layer files' sizes summed, the chain file left out. */
  bytes: number;
}

/**
 * What the repository's commit-graph holds once the writes scheduled so far are done (the benchmark asks,
 * to time reads after the history arrived). Not to be awaited under the repo's lock, as maintenanceIdle.
 */
export async function commitGraphStatus(ctx: MaintenanceContext, repoId: string): Promise<CommitGraphStatus> {
  await maintenanceIdle(ctx, repoId);
  const repo = await openRepo(ctx, repoId);
  const fs = repo.fs.promises;
  const files = await readChainFiles(fs, await readChainHashes(fs));
  const graph = await commitGraphFor(repo);
  return {
    commits: graph?.size ?? 0,
    layers: files.length,
    bytes: files.reduce((sum, f) => sum + f.length, 0),
  };
}

async function removeQuietly(fs: PromiseFs, path: string): Promise<void> {
  await fs.unlink(path).catch(() => undefined);
}

/**
 * What a clone, a fetch or the history fill calls once it stored commits, holding the lock: the graph is
 * written now when few commits are missing from it, else in the background once the lock is free.
 */
export async function commitGraphAfterStore(ctx: MaintenanceContext, repoId: string): Promise<void> {
  try {
    const done = await updateCommitGraph(ctx, repoId, { maxCommits: COMMIT_GRAPH_INLINE_COMMITS });
    if (done !== 'too-many') return;
  } catch (err) {
    // The graph only speeds reads up: a failure to write it fails nothing, and the next store tries again.
    console.warn(`Writing the commit-graph of ${repoId} failed; it will be tried again.`, err);
    return;
  }
  scheduleUnderLock(ctx, repoId, 'writing the commit-graph', () => updateCommitGraph(ctx, repoId));
}
