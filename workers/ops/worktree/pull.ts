// `git pull` for the branch HEAD is on: fetch, then fast-forward, or merge (isomorphic-git's merge) when
// both sides moved. The working tree follows through the lazy checkout, which fetches only the blobs the
// new tree lacks. A merge with conflicts stops as git's does (mergeState.ts): MERGE_HEAD, the conflicted
// files with markers and their stages in the index, the clean part staged; the person resolves and commits,
// or aborts. With local changes in the way it changes nothing and names the files.

import git from 'isomorphic-git';
import { comparePaths } from '../../model/pathOrder.ts';
import { TimeSlice } from '../../pack/timeSlice.ts';
import { MODE_GITLINK, MODE_SYMLINK, MODE_TREE_PADDED } from '../../pack/treeCheck.ts';
import { readCheckedTree } from '../common/checkedTrees.ts';
import { abortedError, OperationError, throwIfAborted } from '../common/errors.ts';
import type { OperationHooks } from '../common/operationHooks.ts';
import { openRepo, type RepoHandle } from '../common/repoAccess.ts';
import { type FetchProgress, type FetchResult, fetchRepo } from '../sync/fetch.ts';
import { type BlobContext, ensureBlobs } from '../sync/lazyBlobs.ts';
import { type CheckoutProgress, type CheckoutResult, checkout } from './checkout.ts';
import { writeConflictedMerge } from './mergeState.ts';
import { type TextMergeHazard, textMergeHazard } from './textMergeHazard.ts';
import { ensureWorktree, status } from './workingTree.ts';

/** How pull merges. */
export interface PullOptions {
  /** Author and committer of a merge commit; EngineOptions' `mergeAuthor` when absent. */
  author?: {
    /** The name in the merge commit's author and committer lines. */
    name: string;
    /** The email in those lines. */
    email: string;
  };
}

/** What pull tells onProgress: its fetch's phases, then the merge's, then the checkout's. */
export type PullProgress =
  | FetchProgress
  | CheckoutProgress
  | {
      /** The branch and its upstream being merged (trees only; blobs fetched where both sides changed a file). */
      phase: 'merging';
    };

/** What pull did to the current branch, and its fetch's result. */
export interface PullResult {
  /** The fetch pull ran first. */
  fetch: FetchResult;
  /** The branch pulled into (the current one). */
  branch: string;
  /** `conflict`: `conflicts` names the files both sides changed incompatibly. */
  status: 'up-to-date' | 'fast-forward' | 'merged' | 'conflict';
  /**
   * With a conflict: true when the merge was left in progress for the person to resolve (MERGE_HEAD and
   * the rest, as git leaves it); false when local changes were in the way and nothing was changed.
   */
  merging?: boolean;
  /** The branch's commit before and after. */
  from: string;
  /** The branch's commit after: `from` when up to date or in conflict. */
  to: string;
  /** Commits the branch gained (the remote's, plus the merge commit). */
  newCommits: number;
  /** With `conflict`, the paths both sides changed incompatibly; empty otherwise. */
  conflicts: string[];
  /** What updating the working tree did, or null when it did not change (up to date, or refused). */
  checkout: CheckoutResult | null;
}

export async function pull(
  ctx: BlobContext,
  repoId: string,
  opts: PullOptions = {},
  hooks: OperationHooks<PullProgress> = {},
): Promise<PullResult> {
  const { signal, onProgress } = hooks;
  let repo = await openRepo(ctx, repoId);
  const branch = await git.currentBranch({ fs: repo.fs, gitdir: repo.gitdir });
  if (!branch) {
    throw new OperationError(
      'DETACHED_HEAD',
      'HEAD is not on a branch, so there is nothing to pull into. Switch to a branch first.',
    );
  }
  const merge = (await git.getConfig({ fs: repo.fs, gitdir: repo.gitdir, path: `branch.${branch}.merge` })) as
    | string
    | undefined;
  const upstreamBranch = merge ? String(merge).replace(/^refs\/heads\//, '') : branch;
  const upstream = `refs/remotes/origin/${upstreamBranch}`;

  const fetched = await fetchRepo(ctx, repoId, {}, { signal, onProgress });
  throwIfAborted(signal);
  repo = await openRepo(ctx, repoId);
  const ours = await git.resolveRef({ fs: repo.fs, gitdir: repo.gitdir, ref: `refs/heads/${branch}` });
  const theirs = await git.resolveRef({ fs: repo.fs, gitdir: repo.gitdir, ref: upstream }).catch(() => null);
  if (!theirs) {
    throw new OperationError(
      'REF_NOT_FOUND',
      `The remote has no branch "${upstreamBranch}" to pull into ${branch}.`,
    );
  }
  const base = { fetch: fetched, branch, from: ours, conflicts: [] as string[] };
  if (ours === theirs) return { ...base, status: 'up-to-date', to: ours, newCommits: 0, checkout: null };

  const bases = await git.findMergeBase({
    fs: repo.fs,
    gitdir: repo.gitdir,
    oids: [ours, theirs],
    cache: repo.cache,
  });
  if (bases.includes(theirs)) {
    return { ...base, status: 'up-to-date', to: ours, newCommits: 0, checkout: null };
  }
  if (bases.includes(ours)) {
    const done = await moveBranch(ctx, repoId, branch, theirs, hooks);
    const newCommits = await countCommits(repo, theirs, ours);
    return { ...base, status: 'fast-forward', to: theirs, newCommits, checkout: done };
  }
  if (bases.length === 0) {
    throw new OperationError(
      'UNRELATED_HISTORIES',
      `${branch} and origin/${upstreamBranch} share no history (or a shallow clone stops before it): fetch more of it, then pull again.`,
    );
  }
  if (bases.length > 1) {
    // isomorphic-git's merge would throw its untyped MergeNotSupportedError here, before writing anything.
    throw new OperationError(
      'MULTIPLE_MERGE_BASES',
      `${branch} and origin/${upstreamBranch} have ${bases.length} merge bases (each was merged into the other), and Blobless merges from one base only: merge them with git (git pull), push the merge, then pull again.`,
    );
  }

  // Both moved: a merge. Only the files both sides changed need their blobs (base, ours, theirs).
  onProgress?.({ phase: 'merging' });
  const refused = await mergeRefusals(repo, bases[0], ours, theirs);
  if (refused.length > 0) throw mergeNotSupported(branch, upstreamBranch, refused);
  const { blobs: needed, texts } = await blobsForMerge(repo, bases[0], ours, theirs);
  if (needed.length > 0) await ensureBlobs(ctx, repoId, needed, { signal, onProgress });
  throwIfAborted(signal);
  const damaged = await textMergeRefusals(repo, texts);
  if (damaged.length > 0) throw mergeNotSupported(branch, upstreamBranch, damaged);
  const who = { ...(opts.author ?? ctx.settings.mergeAuthor), timestamp: Math.floor(Date.now() / 1000) };
  let mergeOid: string;
  try {
    mergeOid = await ctx.store.repoFs.writeAllOrNothing(repoId, async () => {
      const result = await git.merge({
        fs: repo.fs,
        dir: '/',
        gitdir: repo.gitdir,
        cache: repo.cache,
        ours: `refs/heads/${branch}`,
        theirs: upstream,
        // The branch moves only once the working tree has followed (moveBranch).
        noUpdateBranch: true,
        abortOnConflict: true,
        message: `Merge branch '${upstreamBranch}' of ${repo.record.url} into ${branch}`,
        author: who,
        committer: who,
      });
      throwIfAborted(signal);
      return result.oid!;
    });
  } catch (err) {
    ctx.repos.forget(repoId);
    if (signal?.aborted) throw abortedError();
    // mergeRefusals names every case known to throw it; should isomorphic-git throw it elsewhere, still typed.
    if ((err as { code?: string }).code === 'MergeNotSupportedError') {
      throw mergeNotSupported(branch, upstreamBranch, []);
    }
    const data = (err as { code?: string; data?: { filepaths?: string[] } }).data;
    if ((err as { code?: string }).code === 'MergeConflictError' && data?.filepaths) {
      const conflict = { ...base, status: 'conflict' as const, to: ours, newCommits: 0, checkout: null };
      // git refuses to start a merge that would overwrite local changes; so does this.
      const local = (await status(ctx, repoId)).entries;
      if (local.length > 0)
        return { ...conflict, conflicts: [...data.filepaths].sort(comparePaths), merging: false };
      const conflicts = await startConflictedMerge(ctx, repoId, {
        ours,
        theirs,
        base: bases[0],
        branch,
        upstream,
        message: `Merge branch '${upstreamBranch}' of ${repo.record.url} into ${branch}`,
        hooks,
      });
      return { ...conflict, conflicts, merging: true };
    }
    throw err;
  }
  // A crash here leaves a commit nothing names: the branch and the working tree have not moved.
  await ctx.store.crash.at('pull:merge-committed');
  const done = await moveBranch(ctx, repoId, branch, mergeOid, hooks);
  const newCommits = await countCommits(repo, mergeOid, ours);
  return { ...base, status: 'merged', to: mergeOid, newCommits, checkout: done };
}

/**
 * Leaves the merge in progress, as git does on a conflict: the working tree (checked out first if the
 * repo has none) gets the merged files, conflicts marked; the blobs of every file they changed are
 * fetched first, and the trees they come from pass the tree checks every checkout passes.
 */
async function startConflictedMerge(
  ctx: BlobContext,
  repoId: string,
  o: {
    ours: string;
    theirs: string;
    base: string;
    branch: string;
    upstream: string;
    message: string;
    hooks: OperationHooks<PullProgress>;
  },
): Promise<string[]> {
  const { signal, onProgress } = o.hooks;
  await ensureWorktree(ctx, repoId, { signal });
  let repo = await openRepo(ctx, repoId);
  const needed = await blobsToTake(repo, o.ours, o.theirs);
  if (needed.length > 0) await ensureBlobs(ctx, repoId, needed, { signal, onProgress });
  throwIfAborted(signal);
  repo = await openRepo(ctx, repoId);
  const conflicts = await ctx.store.repoFs.writeAllOrNothing(repoId, () =>
    writeConflictedMerge(repo, {
      ours: o.ours,
      theirs: o.theirs,
      base: o.base,
      oursRef: `refs/heads/${o.branch}`,
      theirsRef: o.upstream,
      message: o.message,
    }),
  );
  ctx.repos.forget(repoId);
  return conflicts;
}

/** Why a path both sides changed cannot be merged: its shape (files, folders, submodules), or its text. */
type RefusalReason = 'shape' | 'link' | TextMergeHazard;

/** A path both sides changed that isomorphic-git's merge would fail on, or merge wrongly. */
interface Refusal {
  path: string;
  why: RefusalReason;
}

/** How the refusal's message says a reason. */
function reasonText(why: RefusalReason): string {
  switch (why) {
    case 'shape':
      return 'a file on one side where the other has a folder, or a submodule both changed';
    case 'link':
      return 'a symbolic link on one side';
    case 'binary':
      return 'binary content';
    case 'encoding':
      return 'text that is not UTF-8';
    case 'line-ends':
      return 'lines ended by a carriage return alone, U+2028 or U+2029';
  }
}

/**
 * The refusal of a merge isomorphic-git cannot make, or would make wrongly, naming the paths (the first five)
 * and each reason among them.
 */
function mergeNotSupported(branch: string, upstream: string, refused: readonly Refusal[]): OperationError {
  const paths = refused.map((r) => r.path);
  const shown = paths.slice(0, 5).join(', ') + (paths.length > 5 ? ` and ${paths.length - 5} more` : '');
  const what = paths.length > 0 ? `both changed ${shown}` : 'both changed a path';
  const whys = refused.length > 0 ? [...new Set(refused.map((r) => r.why))] : ['shape' as const];
  return new OperationError(
    'MERGE_NOT_SUPPORTED',
    `${branch} and origin/${upstream} ${what} in a way Blobless cannot merge (${whys.map(reasonText).join('; ')}): merge them with git (git pull), push the merge, then pull again.`,
  );
}

/**
 * Brings the working tree to `oid` on `branch`: a checkout of the commit (it refuses to overwrite local
 * changes) that moves the branch and HEAD in the same all-or-nothing batch as the files.
 */
function moveBranch(
  ctx: BlobContext,
  repoId: string,
  branch: string,
  oid: string,
  hooks: OperationHooks<PullProgress>,
): Promise<CheckoutResult> {
  return checkout(ctx, repoId, oid, { onBranch: branch }, hooks);
}

/** A tree entry as the walk below sees it; undefined where a side has no entry of that name. */
type Side = { oid: string; mode: string } | undefined;

const isFile = (x: Side): x is NonNullable<Side> =>
  x !== undefined && x.mode !== MODE_TREE_PADDED && x.mode !== MODE_GITLINK;

const isTree = (x: Side): boolean => x?.mode === MODE_TREE_PADDED;

const isLink = (x: Side): boolean => x?.mode === MODE_SYMLINK;

/** Whether `x` is the base's own folder: nothing below it changed on that side. */
const keptFolder = (x: Side, base: Side): boolean => isTree(base) && x?.oid === base?.oid;

/**
 * Walks the trees of `commits` side by side, a folder of each at a time, and collects what `pick` takes
 * (blobs, or refusals): for each name of any side's folder, `pick` gets that name's entry on every side and
 * its path, and answers with the items to take, or `descend` to walk into the sides where it is a folder.
 * Folders wait on a stack, not in recursion (a server chooses the depth), and are read through the tree
 * checks every op uses: a hostile tree stops the walk before anything is fetched.
 */
async function blobsOfChanges<T>(
  repo: RepoHandle,
  commits: readonly string[],
  pick: (sides: Side[], path: string) => readonly T[] | 'descend',
): Promise<T[]> {
  const out = new Set<T>();
  const entries = async (tree: string | null, path: string, depth: number) => {
    const map = new Map<string, Side>();
    if (tree) for (const e of await readCheckedTree(repo, tree, path, depth)) map.set(e.name, e);
    return map;
  };
  const roots = await Promise.all(
    commits.map(
      async (oid) =>
        (await git.readCommit({ fs: repo.fs, gitdir: repo.gitdir, oid, cache: repo.cache })).commit.tree,
    ),
  );
  type Folder = { trees: (string | null)[]; path: string; depth: number };
  const pending: Folder[] = [{ trees: roots, path: '', depth: 0 }];
  const slice = new TimeSlice();
  for (let next = pending.pop(); next; next = pending.pop()) {
    const { trees, path, depth } = next;
    await slice.pause();
    const folders = await Promise.all(trees.map((t) => entries(t, path, depth)));
    for (const name of new Set(folders.flatMap((f) => [...f.keys()]))) {
      const sides = folders.map((f) => f.get(name));
      const taken = pick(sides, `${path}${name}`);
      if (taken === 'descend') {
        const trees = sides.map((x) => (x?.mode === MODE_TREE_PADDED ? x.oid : null));
        pending.push({ trees, path: `${path}${name}/`, depth: depth + 1 });
      } else for (const item of taken) out.add(item);
    }
  }
  return [...out];
}

/** The blobs of every file `theirs` has and `ours` has not in the same version: what merging writes. */
function blobsToTake(repo: RepoHandle, ours: string, theirs: string): Promise<string[]> {
  return blobsOfChanges(repo, [ours, theirs], ([o, t]) => {
    if (!t || o?.oid === t.oid) return [];
    if (isTree(t)) return 'descend';
    return isFile(t) ? [t.oid] : [];
  });
}

/**
 * Whether an entry differs from the base's, as isomorphic-git's merge judges it (`modified`): in type, mode or
 * object, or by being there on one side only; two folders never do (the walk compares what is in them).
 */
const changedFrom = (x: Side, base: Side): boolean => {
  if (!x || !base) return x !== base;
  if (isTree(x) && isTree(base)) return false;
  return x.mode !== base.mode || x.oid !== base.oid;
};

/** A file both sides changed to different texts, each other's and the base's: what the text merge reads. */
interface TextMerge {
  path: string;
  /** The blobs of the base (when it held a file there), ours and theirs. */
  blobs: string[];
}

/**
 * The blobs a three-way merge reads, exactly those isomorphic-git's mergeTree reads (mergeBlobs): where both
 * sides changed an entry and both hold a file there, the base's version whenever the base holds a file, even
 * where it then takes one side whole (both made the same change, or one changed the mode alone); and both
 * sides' versions when neither is the other's nor the base's, for the text merge (`texts`).
 */
async function blobsForMerge(
  repo: RepoHandle,
  base: string,
  ours: string,
  theirs: string,
): Promise<{ blobs: string[]; texts: TextMerge[] }> {
  const texts: TextMerge[] = [];
  const blobs = await blobsOfChanges(repo, [base, ours, theirs], ([b, o, t], path) => {
    if (isTree(o) || isTree(t)) {
      // Below a folder one side kept as the base's, or that only one side holds, no file changed on both.
      const both = isTree(o) && isTree(t);
      return both && !keptFolder(o, b) && !keptFolder(t, b) ? 'descend' : [];
    }
    if (!changedFrom(o, b) || !changedFrom(t, b) || !isFile(o) || !isFile(t)) return [];
    const baseBlob = isFile(b) ? b.oid : null;
    const read = baseBlob ? [baseBlob] : [];
    if (o.oid !== t.oid && o.oid !== baseBlob && t.oid !== baseBlob) {
      read.push(o.oid, t.oid);
      texts.push({ path, blobs: read });
    }
    return read;
  });
  return { blobs, texts };
}

/**
 * The files whose text merge would damage them (textMergeHazard), read from the store (blobsForMerge's
 * blobs, fetched), in git's order. git stops on a conflict for binary ones and merges the rest by bytes.
 */
async function textMergeRefusals(repo: RepoHandle, texts: readonly TextMerge[]): Promise<Refusal[]> {
  const out: Refusal[] = [];
  for (const { path, blobs } of texts) {
    const versions = await Promise.all(
      blobs.map(
        async (oid) =>
          (await git.readBlob({ fs: repo.fs, gitdir: repo.gitdir, oid, cache: repo.cache })).blob,
      ),
    );
    const why = textMergeHazard(versions);
    if (why) out.push({ path, why });
  }
  return out.sort((a, b) => comparePaths(a.path, b.path));
}

/**
 * The paths where isomorphic-git's merge throws its untyped MergeNotSupportedError: both sides changed the
 * entry, and not as two files, a deletion of a file against a change to it, or one deletion by both: a file
 * on one side where the other has a folder, a submodule both moved, a folder one side made a file of and the
 * other deleted. And where it merges wrongly: two files both changed, a link on either side, which it would
 * merge as text (git stops on a conflict, keeping ours). Blobless refuses each before fetching or writing.
 */
async function mergeRefusals(
  repo: RepoHandle,
  base: string,
  ours: string,
  theirs: string,
): Promise<Refusal[]> {
  const refused = await blobsOfChanges<Refusal>(repo, [base, ours, theirs], ([b, o, t], path) => {
    if (isTree(o) || isTree(t)) {
      // Below a folder only one side has, its entries differ from the base's on both sides only where the
      // base had a folder there too (the other side's are then deletions).
      const below = (isTree(o) && isTree(t)) || isTree(b);
      if (below && !keptFolder(o, b) && !keptFolder(t, b)) return 'descend';
    }
    if (!changedFrom(o, b) || !changedFrom(t, b)) return [];
    if (isTree(o) && isTree(t)) return [];
    if (isFile(o) && isFile(t)) {
      return changedFrom(o, t) && (isLink(o) || isLink(t)) ? [{ path, why: 'link' }] : [];
    }
    if (isFile(b) && ((!o && isFile(t)) || (isFile(o) && !t))) return [];
    if (b && !o && !t && (isFile(b) || isTree(b))) return [];
    return [{ path, why: 'shape' }];
  });
  return refused.sort((a, b) => comparePaths(a.path, b.path));
}

/**
 * How many commits past the last one still to count the walk goes on through commits `from` reaches, for one
 * of them to reach back (a clock behind) to a commit taken as counted: revision.c's SLOP.
 */
const SLOP = 5;

/**
 * The commits `git rev-list --count from..tip` counts: revision.c's limit_list, step for step, so that a
 * clock gone wrong counts what git counts. Commits are taken newest first (the same date: in the order they
 * were reached); a commit `from` reaches marks its parents, and theirs again where they were read, as
 * `from`'s; the walk stops once every commit left is `from`'s and SLOP of them in turn were older than the
 * last one counted. A merge of commits dated before `from` (a branch worked on earlier) still counts them;
 * a commit this repo does not hold (past a shallow boundary) ends its line. Exported for its tests.
 */
export async function countCommits(repo: RepoHandle, tip: string, from: string): Promise<number> {
  type Commit = { oid: string; time: number; parents: string[] };
  /** Every commit read (git's SEEN): each enters the list once. */
  const seen = new Map<string, Commit>();
  /** git's UNINTERESTING: reachable from `from`; may name commits not read yet. */
  const fromReaches = new Set<string>();
  /** Still to visit, newest first. */
  const list: Commit[] = [];
  const read = async (oid: string): Promise<Commit | null> => {
    const known = seen.get(oid);
    if (known) return known;
    const c = await git
      .readCommit({ fs: repo.fs, gitdir: repo.gitdir, oid, cache: repo.cache })
      .catch(() => null);
    if (!c) return null;
    const commit = { oid, time: c.commit.committer.timestamp, parents: c.commit.parent };
    seen.set(oid, commit);
    // commit_list_insert_by_date: after every commit of the same date or newer.
    let at = 0;
    while (at < list.length && list[at].time >= commit.time) at++;
    list.splice(at, 0, commit);
    return commit;
  };
  /** mark_parents_uninteresting: through the commits read, their parents are `from`'s too. */
  const markParents = (commit: Commit) => {
    const pending = [...commit.parents];
    for (let oid = pending.pop(); oid !== undefined; oid = pending.pop()) {
      if (fromReaches.has(oid)) continue;
      fromReaches.add(oid);
      pending.push(...(seen.get(oid)?.parents ?? []));
    }
  };
  // Both ends are read before from's parents are marked, as setup_revisions parses them.
  const start = await read(from);
  await read(tip);
  fromReaches.add(from);
  if (start) markParents(start);
  /** The commits taken as counted, in order; some may turn out to be `from`'s. */
  const counted: string[] = [];
  /** The date of the last commit counted. */
  let date = Number.POSITIVE_INFINITY;
  let slop = SLOP;
  while (list.length > 0) {
    const commit = list.shift()!;
    if (!fromReaches.has(commit.oid)) {
      for (const parent of commit.parents) await read(parent);
      date = commit.time;
      counted.push(commit.oid);
      continue;
    }
    for (const parent of commit.parents) {
      fromReaches.add(parent);
      const p = await read(parent);
      if (p) markParents(p);
    }
    // still_interesting: go on while a commit to count is left, or one left is newer than the last counted.
    if (list.length === 0) break;
    if (date <= list[0].time || list.some((c) => !fromReaches.has(c.oid))) slop = SLOP;
    else if (--slop === 0) break;
  }
  return counted.filter((oid) => !fromReaches.has(oid)).length;
}
