// `git pull` for the branch HEAD is on: fetch, then fast-forward, or merge (isomorphic-git's merge) when
// both sides moved. The working tree follows through the lazy checkout, which fetches only the blobs the
// new tree lacks. A merge with conflicts changes nothing but the remote-tracking refs the fetch updated:
// the merge runs inside one all-or-nothing batch, and the conflicting files are reported.

import git from 'isomorphic-git';
import { GITDIR } from '../../store/repoFs.ts';
import { readCheckedTree } from '../common/checkedTrees.ts';
import { abortedError, OperationError, throwIfAborted } from '../common/errors.ts';
import type { OperationHooks } from '../common/operationHooks.ts';
import { openRepo, type RepoHandle } from '../common/repoAccess.ts';
import { type FetchProgress, type FetchResult, fetchRepo } from '../sync/fetch.ts';
import { type BlobContext, ensureBlobs } from '../sync/lazyBlobs.ts';
import { type CheckoutProgress, type CheckoutResult, checkout } from './checkout.ts';

export interface PullOptions {
  /** Author and committer of a merge commit; a neutral identity when absent. */
  author?: { name: string; email: string };
}

export type PullProgress = FetchProgress | CheckoutProgress | { phase: 'merging' };

export interface PullResult {
  fetch: FetchResult;
  branch: string;
  /** `conflict`: nothing was merged; `conflicts` names the files both sides changed incompatibly. */
  status: 'up-to-date' | 'fast-forward' | 'merged' | 'conflict';
  /** The branch's commit before and after. */
  from: string;
  to: string;
  /** Commits the branch gained (the remote's, plus the merge commit). */
  newCommits: number;
  conflicts: string[];
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

  // Both moved: a merge. Only the files both sides changed need their blobs (base, ours, theirs).
  onProgress?.({ phase: 'merging' });
  const needed = await blobsForMerge(repo, bases[0], ours, theirs);
  if (needed.length > 0) await ensureBlobs(ctx, repoId, needed, { signal, onProgress });
  throwIfAborted(signal);
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
    const data = (err as { code?: string; data?: { filepaths?: string[] } }).data;
    if ((err as { code?: string }).code === 'MergeConflictError' && data?.filepaths) {
      return {
        ...base,
        status: 'conflict',
        to: ours,
        newCommits: 0,
        conflicts: [...data.filepaths].sort(),
        checkout: null,
      };
    }
    throw err;
  }
  const done = await moveBranch(ctx, repoId, branch, mergeOid, hooks);
  const newCommits = await countCommits(repo, mergeOid, ours);
  return { ...base, status: 'merged', to: mergeOid, newCommits, checkout: done };
}

/**
 * Brings the working tree to `oid` (a checkout of the commit: it refuses to overwrite local changes and
 * writes all or nothing), then points the branch at it and HEAD back at the branch.
 */
async function moveBranch(
  ctx: BlobContext,
  repoId: string,
  branch: string,
  oid: string,
  hooks: OperationHooks<PullProgress>,
): Promise<CheckoutResult> {
  const result = await checkout(ctx, repoId, oid, {}, hooks);
  const repo = await openRepo(ctx, repoId);
  await ctx.store.repoFs.writeAllOrNothing(repoId, async () => {
    await git.writeRef({ fs: repo.fs, gitdir: GITDIR, ref: `refs/heads/${branch}`, value: oid, force: true });
    await git.writeRef({
      fs: repo.fs,
      gitdir: GITDIR,
      ref: 'HEAD',
      value: `refs/heads/${branch}`,
      symbolic: true,
      force: true,
    });
  });
  await ctx.store.registry.update(repoId, (r) => ({ ...r, branch, headOid: oid }));
  return { ...result, branch };
}

/** The blobs a three-way merge reads: of every file that both sides changed, its three versions. */
async function blobsForMerge(
  repo: RepoHandle,
  base: string,
  ours: string,
  theirs: string,
): Promise<string[]> {
  const treeOf = async (commit: string) =>
    (await git.readCommit({ fs: repo.fs, gitdir: repo.gitdir, oid: commit, cache: repo.cache })).commit.tree;
  const out = new Set<string>();
  // Through the tree checks every op uses: a hostile tree stops the merge before anything is fetched.
  const entries = async (tree: string | null, path: string) => {
    const map = new Map<string, { oid: string; type: string }>();
    if (!tree) return map;
    for (const e of await readCheckedTree(repo, tree, path)) {
      const type = e.mode === '040000' ? 'tree' : e.mode === '160000' ? 'commit' : 'blob';
      map.set(e.name, { oid: e.oid, type });
    }
    return map;
  };
  const visit = async (b: string | null, o: string | null, t: string | null, path: string): Promise<void> => {
    const [eb, eo, et] = await Promise.all([entries(b, path), entries(o, path), entries(t, path)]);
    for (const name of new Set([...eb.keys(), ...eo.keys(), ...et.keys()])) {
      const [xb, xo, xt] = [eb.get(name), eo.get(name), et.get(name)];
      if (xo?.oid === xt?.oid || xo?.oid === xb?.oid || xt?.oid === xb?.oid) continue;
      const sub = (x?: { oid: string; type: string }) => (x?.type === 'tree' ? x.oid : null);
      if (xo?.type === 'tree' || xt?.type === 'tree') {
        await visit(sub(xb), sub(xo), sub(xt), `${path}${name}/`);
        continue;
      }
      for (const x of [xb, xo, xt]) if (x?.type === 'blob') out.add(x.oid);
    }
  };
  await visit(await treeOf(base), await treeOf(ours), await treeOf(theirs), '');
  return [...out];
}

/**
 * Commits reachable from `tip` and not from `from`: a walk from `tip` that stops at `from` and at commits
 * older than it (less a day of clock skew), which cannot lead back above it.
 */
async function countCommits(repo: RepoHandle, tip: string, from: string): Promise<number> {
  const read = (oid: string) =>
    git.readCommit({ fs: repo.fs, gitdir: repo.gitdir, oid, cache: repo.cache }).catch(() => null);
  const floor = ((await read(from))?.commit.committer.timestamp ?? 0) - 86_400;
  let count = 0;
  const seen = new Set<string>([from]);
  const walk = [tip];
  while (walk.length > 0) {
    const oid = walk.pop()!;
    if (seen.has(oid)) continue;
    seen.add(oid);
    const c = await read(oid);
    if (!c || c.commit.committer.timestamp < floor) continue;
    count++;
    walk.push(...c.commit.parent);
  }
  return count;
}
