// The commit-graph, written as history arrives: after a clone, the history fill's last step and each fetch,
// the commits the refs reach that the graph lacks become a new layer of objects/info/commit-graphs, as
// `git commit-graph write --reachable --split --changed-paths` would write it (layers merged by git's
// strategy), with each commit's changed-path Bloom filter computed from its trees. Nothing is written
// while the repository is shallow: git neither writes nor reads a commit-graph there, and a shallow
// commit's parents are not stored.

import { bloomFilterFor } from '../../commitgraph/bloomFilter.ts';
import type { CommitGraph } from '../../commitgraph/commitGraph.ts';
import { writeSplitLayer } from '../../commitgraph/commitGraphChain.ts';
import type { GraphCommit } from '../../commitgraph/commitGraphWriter.ts';
import { parseCommitHeader } from '../../model/commitHeader.ts';
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
import { HostileTreeError, isRepoGone, throwIfAborted } from '../common/errors.ts';
import {
  openRepo,
  peelTags,
  type RepoHandle,
  readCommitObject,
  readingStoredPacks,
  shallowCommits,
} from '../common/repoAccess.ts';
import { timeline } from '../common/timeline.ts';
import { changedPaths, TreeEntriesCache } from '../common/treePair.ts';
import type { MissingWalk } from './commitGraphBuilds.ts';
import { type MaintenanceContext, maintenanceIdle, scheduleUnderLock } from './packMaintenance.ts';

/**
 * New commits written inside the operation that stored them (under its lock) up to this many; more (a
 * clone or the history fill bringing a long history) are written in the background after it, so that the
 * clone's time is not spent on Bloom filters. Each commit costs one tree diff against its parent.
 */
export const COMMIT_GRAPH_INLINE_COMMITS = 2_000;

/**
 * Commits per step of the background build: each step holds the lock for its Bloom filters (stopping
 * early when an operation waits for the lock) and writes one layer, merged by git's strategy.
 */
export const COMMIT_GRAPH_STEP_COMMITS = 2_000;

/** How often, in commits, a step asks whether an operation waits for the lock. */
const LOCK_CHECK_EVERY = 32;

/**
 * The longest stretch a build runs without a turn of the event loop: reads answered from caches resolve as
 * microtasks only, which would hold the page's calls (and timers) back for seconds (a timer of 2 s fired
 * 7 s late in Node during medium's build).
 */
const SLICE_MS = 50;

/** Gives the event loop a turn (a macrotask) once SLICE_MS have passed since the last. */
function slicer(): () => Promise<void> {
  let last = performance.now();
  return async () => {
    if (performance.now() - last < SLICE_MS) return;
    await new Promise((resolve) => setTimeout(resolve, 0));
    last = performance.now();
  };
}

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
 * What the graph records of commit `oid`: from its header as our reader reads it when the handle reads the
 * stored packs (model/commitHeader.ts), else (or when the header is not git's) as isomorphic-git reads it.
 */
async function graphCommit(repo: RepoHandle, oid: string): Promise<GraphCommit> {
  const own = await repo.storedPacks?.read(oid);
  const header = own?.type === 'commit' ? parseCommitHeader(own.object) : null;
  if (header) return { oid, tree: header.tree, parents: header.parents, time: header.committerTime };
  const commit = await readCommitObject(repo, oid);
  return { oid, tree: commit.tree, parents: commit.parent, time: commit.committer.timestamp };
}

/**
 * The commits the refs reach that the graph lacks, each child before its parents along a walk from the
 * tips; 'too-many' once there are more than `maxCommits`; 'stopped' when `stopWhen` said so (asked every
 * LOCK_CHECK_EVERY commits), `walk` then holding where to go on.
 */
async function missingCommits(
  repo: RepoHandle,
  graph: CommitGraph | null,
  hooks: { signal?: AbortSignal; maxCommits?: number; stopWhen?: () => Promise<boolean> },
  walk: MissingWalk = { fresh: [], seen: new Set(), stack: null },
): Promise<GraphCommit[] | 'too-many' | 'stopped'> {
  const { fresh, seen } = walk;
  walk.stack ??= await refTips(repo);
  const stack = walk.stack;
  const turn = slicer();
  let asked = 0;
  while (stack.length) {
    await turn();
    throwIfAborted(hooks.signal);
    const oid = stack[stack.length - 1];
    if (seen.has(oid) || (graph && graph.position(oid) >= 0)) {
      stack.pop();
      seen.add(oid);
      continue;
    }
    if (hooks.maxCommits !== undefined && fresh.length >= hooks.maxCommits) return 'too-many';
    if (hooks.stopWhen && ++asked % LOCK_CHECK_EVERY === 0 && (await hooks.stopWhen())) return 'stopped';
    stack.pop();
    seen.add(oid);
    const commit = await graphCommit(repo, oid);
    fresh.push(commit);
    for (const p of commit.parents) stack.push(p);
  }
  return fresh;
}

/**
 * Computes the Bloom filters of `commits` in order, stopping early when `stopWhen` says so (after at least
 * one). Returns how many got theirs. `trees` knows the trees of commits not in the graph.
 */
async function computeFilters(
  repo: RepoHandle,
  graph: CommitGraph | null,
  commits: GraphCommit[],
  trees: Map<string, string>,
  hooks: { signal?: AbortSignal; stopWhen?: () => Promise<boolean> },
): Promise<number> {
  const treeOf = async (oid: string): Promise<string> => {
    const known = trees.get(oid);
    if (known) return known;
    const position = graph ? graph.position(oid) : -1;
    return position >= 0 ? graph!.tree(position) : (await graphCommit(repo, oid)).tree;
  };
  // Consecutive commits are mostly parent and child, so each tree is read again as the next diff's side.
  const read = new TreeEntriesCache(COMMIT_GRAPH_TREE_CACHE);
  const turn = slicer();
  for (const [i, c] of commits.entries()) {
    await turn();
    throwIfAborted(hooks.signal);
    if (hooks.stopWhen && i > 0 && i % LOCK_CHECK_EVERY === 0 && (await hooks.stopWhen())) return i;
    const parentTree = c.parents.length ? await treeOf(c.parents[0]) : null;
    c.bloom = bloomFilterFor(await changedPaths(repo, parentTree, c.tree, read));
  }
  return commits.length;
}

/** Writes `commits` (their parents in the graph or among them) as a new layer, merged as git merges. */
async function writeLayer(
  ctx: MaintenanceContext,
  repoId: string,
  repo: RepoHandle,
  commits: GraphCommit[],
): Promise<number> {
  const fs = repo.fs.promises;
  const hashes = await readChainHashes(fs);
  const written = writeSplitLayer(await readChainFiles(fs, hashes), commits, { changedPaths: true });
  await ctx.store.repoFs.writeAllOrNothing(repoId, async () => {
    await mkdirp(fs, COMMIT_GRAPHS_DIR);
    await fs.writeFile(layerPath(written.written.hash), written.written.bytes);
    await fs.writeFile(COMMIT_GRAPH_CHAIN, written.chainFile, 'utf8');
    for (const hash of written.replaced)
      if (hash !== written.written.hash) await removeQuietly(fs, layerPath(hash));
  });
  await ctx.store.repoFs.flush(repoId);
  return written.layers.length;
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
  // Every commit and many trees are read: by our reader, so that isomorphic-git does not parse the whole
  // .idx of the pack just stored (tens of MB on a large clone, held until the next operation lets it go).
  const repo = await readingStoredPacks(ctx, await openRepo(ctx, repoId));
  if ((await shallowCommits(repo)).size > 0) return null;
  const graph = await commitGraphFor(repo);
  // The steps' times go to the timeline (`blobless:commitGraph:*`), where the benchmark reads the build time.
  let started = performance.now();
  const fresh = await missingCommits(repo, graph, hooks);
  timeline(ctx, 'commitGraph').measure('commits', started);
  if (fresh === 'too-many' || fresh === 'stopped') return 'too-many';
  if (!fresh.length) return null;
  started = performance.now();
  await computeFilters(repo, graph, fresh, new Map(fresh.map((c) => [c.oid, c.tree])), hooks);
  timeline(ctx, 'commitGraph').measure('bloomFilters', started);
  started = performance.now();
  const layers = await writeLayer(ctx, repoId, repo, fresh);
  timeline(ctx, 'commitGraph').measure('write', started);
  return { commits: fresh.length, layers };
}

/** `commits` reordered so that every commit comes after those of its parents that are among them. */
function parentsFirst(commits: GraphCommit[]): GraphCommit[] {
  const byOid = new Map(commits.map((c) => [c.oid, c]));
  const placed = new Set<string>();
  const out: GraphCommit[] = [];
  for (const root of commits) {
    if (placed.has(root.oid)) continue;
    placed.add(root.oid);
    const stack = [root];
    while (stack.length) {
      const c = stack[stack.length - 1];
      const next = c.parents.find((p) => byOid.has(p) && !placed.has(p));
      if (next) {
        placed.add(next);
        stack.push(byOid.get(next)!);
      } else {
        stack.pop();
        out.push(c);
      }
    }
  }
  return out;
}

export interface CommitGraphStep {
  /** The commits of the layer written (none when the step stopped before its first filter). */
  written: string[];
  /** Commits still to write after this step. */
  left: number;
}

/**
 * One step of the background build, the caller holding the lock: the oldest `maxCommits` commits (at most)
 * of the backlog become a new layer, as `git commit-graph write --split --changed-paths --stdin-commits`
 * writes them when given those commits (a prefix of a parents-first order is closed under parents, so git
 * adds no other). The step ends early, writing what it has, once `stopWhen` says an operation waits.
 * Null when the repository is shallow.
 */
export async function commitGraphStep(
  ctx: MaintenanceContext,
  repoId: string,
  hooks: { signal?: AbortSignal; maxCommits?: number; stopWhen?: () => Promise<boolean> } = {},
): Promise<CommitGraphStep | null> {
  // As updateCommitGraph; each step reads the packs again, and holds none between steps.
  const repo = await readingStoredPacks(ctx, await openRepo(ctx, repoId));
  if ((await shallowCommits(repo)).size > 0) return null;
  const graph = await commitGraphFor(repo);
  const { backlogs, walks } = ctx.maintenance.graphBuilds;
  let backlog = backlogs.get(repoId);
  if (!backlog) {
    const started = performance.now();
    const walk = walks.get(repoId) ?? { fresh: [], seen: new Set<string>(), stack: null };
    walks.set(repoId, walk);
    const fresh = await missingCommits(repo, graph, { signal: hooks.signal, stopWhen: hooks.stopWhen }, walk);
    timeline(ctx, 'commitGraph').measure('commits', started);
    if (fresh === 'stopped' || fresh === 'too-many') return { written: [], left: Number.POSITIVE_INFINITY };
    walks.delete(repoId);
    backlog = { commits: parentsFirst(fresh), trees: new Map(fresh.map((c) => [c.oid, c.tree])) };
    backlogs.set(repoId, backlog);
  }
  // Another tab may have written some of them meanwhile.
  const todo = backlog.commits.filter((c) => !graph || graph.position(c.oid) < 0);
  const chunk = todo.slice(0, hooks.maxCommits ?? COMMIT_GRAPH_STEP_COMMITS);
  let started = performance.now();
  const done = await computeFilters(repo, graph, chunk, backlog.trees, hooks);
  timeline(ctx, 'commitGraph').measure('bloomFilters', started);
  const layer = chunk.slice(0, done);
  if (layer.length) {
    started = performance.now();
    try {
      await writeLayer(ctx, repoId, repo, layer);
    } catch (err) {
      backlogs.delete(repoId);
      throw err;
    }
    timeline(ctx, 'commitGraph').measure('write', started);
  }
  const left = todo.slice(done);
  if (left.length) backlogs.set(repoId, { commits: left, trees: backlog.trees });
  else backlogs.delete(repoId);
  return { written: layer.map((c) => c.oid), left: left.length };
}

/** The size of a repo's commit-graph (`objects/info/commit-graphs`). */
export interface CommitGraphStatus {
  /** Commits in the graph, over all layers. */
  commits: number;
  /** Files of the chain (git's split commit-graph); 0 when there is no graph yet. */
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
 * What a fetch or the history fill calls once it stored commits, holding the lock: the graph is
 * written now when few commits are missing from it, else in the background once the lock is free, in
 * steps of COMMIT_GRAPH_STEP_COMMITS that each let the lock go, so no operation waits for the whole build.
 */
export async function commitGraphAfterStore(ctx: MaintenanceContext, repoId: string): Promise<void> {
  try {
    const done = await updateCommitGraph(ctx, repoId, { maxCommits: COMMIT_GRAPH_INLINE_COMMITS });
    if (done !== 'too-many') return;
  } catch (err) {
    reportGraphFailure(repoId, err);
    return;
  }
  commitGraphInBackground(ctx, repoId);
}

/**
 * The graph only speeds reads up: a failure to write it fails nothing, and the next store tries again.
 * A tree git refuses is refused to every read too, so there is nothing for a graph to speed up: said in
 * one line, not with the error's stack (each test of a hostile repo printed one).
 */
function reportGraphFailure(repoId: string, err: unknown): void {
  // Deleted while a step waited for the lock: there is no graph left to write, and nothing went wrong.
  if (isRepoGone(err)) return;
  if (err instanceof HostileTreeError) {
    console.warn(`No commit-graph for ${repoId}: it holds a tree git refuses (${err.code}).`);
  } else {
    console.warn(`Writing the commit-graph of ${repoId} failed; it will be tried again.`, err);
  }
}

/**
 * What a clone calls once it stored its history: the whole graph is written in the background steps,
 * never on the clone's clock. git's clone writes none (`fetch.writeCommitGraph` is off by default), and
 * written inline it was most of a short history's clone: on small-sized.git (300 commits) 4.3 s of a
 * 4.7 s clone, against git's 0.4 s (busy machine, docs/decisions/clone-profile.md).
 */
export function commitGraphInBackground(ctx: MaintenanceContext, repoId: string): void {
  // The walk kept from an earlier build misses what this store brought.
  ctx.maintenance.graphBuilds.forget(repoId);
  scheduleGraphSteps(ctx, repoId);
}

function scheduleGraphSteps(ctx: MaintenanceContext, repoId: string): void {
  const { foreground } = ctx.maintenance;
  scheduleUnderLock(
    ctx,
    repoId,
    'writing the commit-graph',
    async () => {
      let step: CommitGraphStep | null;
      try {
        step = await commitGraphStep(ctx, repoId, {
          stopWhen: async () => foreground.active() || (await ctx.store.locks.repoLockWanted(repoId)),
        });
      } catch (err) {
        reportGraphFailure(repoId, err);
        return;
      }
      if (step?.left) scheduleGraphSteps(ctx, repoId);
    },
    { before: () => foreground.quiet() },
  );
}
