// The working tree as a person edits it: status with per-file staging, and file writes, renames and deletes.
// It is the tree checkout.ts writes at `/` of the repo's lightning-fs, with isomorphic-git's index at
// `/.git/index`. Every change reaches IndexedDB in one transaction (writeAllOrNothing), or not at all.
// Nothing here reads a blob of HEAD: statusMatrix compares hashes of working files with the ids in trees
// and the index, so editing a blob:none clone fetches nothing beyond what its checkout fetched.

import git from 'isomorphic-git';
import { comparePaths } from '../../model/pathOrder.ts';
import { GITDIR, mkdirp } from '../../store/repoFs.ts';
import { OperationError, throwIfAborted } from '../common/errors.ts';
import type { OperationHooks } from '../common/operationHooks.ts';
import { openRepo, type RepoHandle } from '../common/repoAccess.ts';
import type { FileDiff } from '../read/diff.ts';
import { diffFile } from '../read/diff.ts';
import type { BlobContext } from '../sync/lazyBlobs.ts';
import { type CheckoutProgress, checkout, WORKTREE_DIR } from './checkout.ts';
import { removeEmptyParents } from './emptyParents.ts';
import { abortMergeState, type MergeState, readMergeState } from './mergeState.ts';

/** One changed path, as `git status --porcelain` shows it: the index against HEAD, the file against the index. */
export interface StatusEntry {
  /** The path from the repository's root. */
  path: string;
  /** Index against HEAD: what a commit would record. */
  staged: 'added' | 'modified' | 'deleted' | null;
  /** Working file against the index: what `stage` would take. */
  unstaged: 'modified' | 'deleted' | 'untracked' | null;
  /** Unmerged (a merge's conflict not resolved yet): stages 1-3 in the index; staging resolves it. */
  conflict?: boolean;
}

/** What `git status` says: the branch, and every path that differs somewhere. */
export interface WorktreeStatus {
  /** The branch HEAD names, or null when detached. */
  branch: string | null;
  /** The commit HEAD points at. */
  head: string;
  /**
   * The changed paths (unchanged ones are left out) in `git status --porcelain`'s order: the paths the index
   * knows (conflicts too), then the untracked ones, each part by path as git orders paths (comparePaths).
   */
  entries: StatusEntry[];
  /** A merge left in progress by a conflicting pull, or null. */
  merging: MergeState | null;
}

/** Cancellation, and the progress of the checkout of HEAD that a repo without a working tree needs first. */
export type WorktreeHooks = OperationHooks<CheckoutProgress>;

/**
 * Makes sure the repo has a working tree (a clone leaves none until something checks out), checking out
 * HEAD when it has none: editing starts from the files of the current commit.
 */
export async function ensureWorktree(
  ctx: BlobContext,
  repoId: string,
  hooks: OperationHooks<CheckoutProgress> = {},
): Promise<RepoHandle> {
  throwIfAborted(hooks.signal);
  const repo = await openRepo(ctx, repoId);
  const hasIndex = await repo.fs.promises.stat(`${GITDIR}/index`).then(
    () => true,
    () => false,
  );
  if (!hasIndex) await checkout(ctx, repoId, 'HEAD', {}, hooks);
  throwIfAborted(hooks.signal);
  return repo;
}

export async function status(
  ctx: BlobContext,
  repoId: string,
  hooks: WorktreeHooks = {},
): Promise<WorktreeStatus> {
  const repo = await ensureWorktree(ctx, repoId, hooks);
  const { fs, gitdir, cache } = repo;
  const matrix = await git.statusMatrix({ fs, dir: WORKTREE_DIR, gitdir, cache });
  const merging = await readMergeState(repo);
  const unmerged = new Set(merging?.conflicts ?? []);
  const entries: StatusEntry[] = [];
  for (const [path, head, workdir, stage] of matrix) {
    // An unmerged path has no one index version to compare: `git status` says "both modified".
    if (unmerged.delete(path)) entries.push({ path, staged: null, unstaged: 'modified', conflict: true });
    else {
      const entry = { path, ...classify(head, workdir, stage) };
      if (entry.staged || entry.unstaged) entries.push(entry);
    }
  }
  // Deleted on one side and conflicted: in the index only.
  for (const path of unmerged) entries.push({ path, staged: null, unstaged: 'deleted', conflict: true });
  const branch = (await git.currentBranch({ fs, gitdir })) ?? null;
  const headOid = await git.resolveRef({ fs, gitdir, ref: 'HEAD' });
  return { branch, head: headOid, entries: entries.sort(porcelainOrder), merging };
}

/**
 * `git status --porcelain`'s order (wt-status.c): every path the index or HEAD has, by path, before the untracked
 * ones, by path. A staged deletion whose file is back is both ("D " and "??"): it stands where its first line does.
 */
function porcelainOrder(a: StatusEntry, b: StatusEntry): number {
  const untracked = (e: StatusEntry) => e.unstaged === 'untracked' && !e.staged;
  return Number(untracked(a)) - Number(untracked(b)) || comparePaths(a.path, b.path);
}

/**
 * statusMatrix's numbers to git's two columns. head: 0 absent, 1 present. workdir: 0 absent, 1 same as
 * HEAD, 2 different from HEAD. stage: 0 absent, 1 same as HEAD, 2 same as workdir, 3 different from both.
 */
export function classify(head: number, workdir: number, stage: number): Omit<StatusEntry, 'path'> {
  let staged: StatusEntry['staged'] = null;
  if (head === 0 && stage !== 0) staged = 'added';
  else if (head === 1 && stage === 0) staged = 'deleted';
  else if (head === 1 && (stage === 3 || (stage === 2 && workdir === 2))) staged = 'modified';

  let unstaged: StatusEntry['unstaged'] = null;
  if (stage === 0) {
    if (workdir !== 0) unstaged = 'untracked';
  } else if (workdir === 0) unstaged = 'deleted';
  else if (stage === 1 && workdir === 2) unstaged = 'modified';
  else if (stage === 3) unstaged = workdir === 1 && head === 0 ? null : 'modified';
  else if (stage === 2 && workdir === 1) unstaged = 'modified';
  return { staged, unstaged };
}

/** Takes each path's working file into the index (`git add`), or its deletion (`git rm --cached`). */
export async function stage(
  ctx: BlobContext,
  repoId: string,
  paths: string[],
  hooks: WorktreeHooks = {},
): Promise<void> {
  const repo = await ensureWorktree(ctx, repoId, hooks);
  const { fs, gitdir, cache } = repo;
  const clean = paths.map(checkPath);
  await ctx.store.repoFs.writeAllOrNothing(repoId, async () => {
    for (const path of clean) {
      if (await exists(repo, path)) await git.add({ fs, dir: WORKTREE_DIR, gitdir, cache, filepath: path });
      else await git.remove({ fs, dir: WORKTREE_DIR, gitdir, cache, filepath: path });
    }
  });
}

/** `git merge --abort`: the files the merge touched back to HEAD's, MERGE_HEAD and the rest removed. */
export async function abortMerge(ctx: BlobContext, repoId: string): Promise<void> {
  const repo = await ensureWorktree(ctx, repoId);
  await ctx.store.repoFs.writeAllOrNothing(repoId, () => abortMergeState(repo));
}

/** Puts each path's index entry back to HEAD's (`git restore --staged`); the working file stays. */
export async function unstage(
  ctx: BlobContext,
  repoId: string,
  paths: string[],
  hooks: WorktreeHooks = {},
): Promise<void> {
  const repo = await ensureWorktree(ctx, repoId, hooks);
  const { fs, gitdir, cache } = repo;
  const clean = paths.map(checkPath);
  await ctx.store.repoFs.writeAllOrNothing(repoId, async () => {
    for (const path of clean) await git.resetIndex({ fs, dir: WORKTREE_DIR, gitdir, cache, filepath: path });
  });
}

/** A working file's bytes (not HEAD's: what the editor opens). */
export async function readWorktreeFile(
  ctx: BlobContext,
  repoId: string,
  path: string,
  hooks: WorktreeHooks = {},
): Promise<Uint8Array> {
  const repo = await ensureWorktree(ctx, repoId, hooks);
  const clean = checkPath(path);
  try {
    return (await repo.fs.promises.readFile(`/${clean}`)) as Uint8Array;
  } catch {
    throw new OperationError('PATH_NOT_FOUND', `"${clean}" is not in the working tree.`);
  }
}

/** Writes (or creates, with its folders) a working file. Refuses a path where a folder is. */
export async function writeWorktreeFile(
  ctx: BlobContext,
  repoId: string,
  path: string,
  content: Uint8Array | string,
  hooks: WorktreeHooks = {},
): Promise<void> {
  const repo = await ensureWorktree(ctx, repoId, hooks);
  const fs = repo.fs.promises;
  const clean = checkPath(path);
  const st = await fs.lstat(`/${clean}`).catch(() => null);
  if (st?.isDirectory()) throw new OperationError('INVALID_PATH', `"${clean}" is a folder.`);
  await ctx.store.repoFs.writeAllOrNothing(repoId, async () => {
    await makeParents(repo, clean);
    const mode = st && st.mode & 0o111 ? 0o777 : 0o666;
    await fs.writeFile(`/${clean}`, content, { mode });
  });
}

/** Renames a working file (not a folder); the change is staged like any other, by `stage`. */
export async function renameWorktreeFile(
  ctx: BlobContext,
  repoId: string,
  from: string,
  to: string,
  hooks: WorktreeHooks = {},
): Promise<void> {
  const repo = await ensureWorktree(ctx, repoId, hooks);
  const fs = repo.fs.promises;
  const src = checkPath(from);
  const dest = checkPath(to);
  await requireFile(repo, src);
  if (await exists(repo, dest)) throw new OperationError('INVALID_PATH', `"${dest}" already exists.`);
  await ctx.store.repoFs.writeAllOrNothing(repoId, async () => {
    await makeParents(repo, dest);
    await fs.rename(`/${src}`, `/${dest}`);
    await removeEmptyParents(repo, src);
  });
}

/** PATH_NOT_FOUND unless `clean` (a checked path) is a file or symlink of the working tree. */
async function requireFile(repo: RepoHandle, clean: string): Promise<void> {
  const st = await repo.fs.promises.lstat(`/${clean}`).catch(() => null);
  if (!st || st.isDirectory())
    throw new OperationError('PATH_NOT_FOUND', `"${clean}" is not a file of the working tree.`);
}

/** Deletes a working file; the deletion is staged like any other change, by `stage`. */
export async function deleteWorktreeFile(
  ctx: BlobContext,
  repoId: string,
  path: string,
  hooks: WorktreeHooks = {},
): Promise<void> {
  const repo = await ensureWorktree(ctx, repoId, hooks);
  const fs = repo.fs.promises;
  const clean = checkPath(path);
  await requireFile(repo, clean);
  await ctx.store.repoFs.writeAllOrNothing(repoId, async () => {
    await fs.unlink(`/${clean}`);
    await removeEmptyParents(repo, clean);
  });
}

/**
 * What a commit of the index would change in one file: HEAD's blob against the index's (`git diff
 * --cached -- path`). HEAD's blob is fetched if a sparse checkout never did.
 */
export async function stagedDiff(
  ctx: BlobContext,
  repoId: string,
  path: string,
  hooks: WorktreeHooks = {},
): Promise<FileDiff> {
  const repo = await ensureWorktree(ctx, repoId, hooks);
  const { fs, gitdir, cache } = repo;
  const clean = checkPath(path);
  const found = (await git.walk({
    fs,
    dir: WORKTREE_DIR,
    gitdir,
    cache,
    trees: [git.TREE({ ref: 'HEAD' }), git.STAGE()],
    // null skips a folder that cannot hold the path; undefined walks on without a result.
    map: async (filepath, [head, index]) => {
      if (filepath !== '.' && filepath !== clean && !clean.startsWith(`${filepath}/`)) return null;
      if (filepath !== clean) return undefined;
      const oidOf = async (e: typeof head) => (e && (await e.type()) === 'blob' ? await e.oid() : null);
      return { oldOid: await oidOf(head), newOid: await oidOf(index) };
    },
  })) as { oldOid: string | null; newOid: string | null }[];
  const pair = found.find((f) => f.oldOid || f.newOid);
  if (!pair) throw new OperationError('PATH_NOT_FOUND', `"${clean}" is neither in HEAD nor staged.`);
  return diffFile(ctx, repoId, pair.oldOid, pair.newOid, { signal: hooks.signal });
}

/**
 * A path inside the working tree, as git stores it: relative, `/`-separated, no empty, `.` or `..`
 * segment, nothing inside `.git` (git's verify_path refuses the same).
 */
export function checkPath(path: string): string {
  const clean = path.replace(/^\/+|\/+$/g, '');
  const parts = clean.split('/');
  if (
    clean === '' ||
    parts.some((p) => p === '' || p === '.' || p === '..' || p.toLowerCase() === '.git') ||
    /[\0\\]/.test(clean)
  ) {
    throw new OperationError('INVALID_PATH', `"${path}" is not a path git can store in this working tree.`);
  }
  return clean;
}

async function exists(repo: RepoHandle, path: string): Promise<boolean> {
  return repo.fs.promises.lstat(`/${path}`).then(
    () => true,
    () => false,
  );
}

async function makeParents(repo: RepoHandle, path: string): Promise<void> {
  const slash = path.lastIndexOf('/');
  if (slash <= 0) return;
  const dir = `/${path.slice(0, slash)}`;
  const st = await repo.fs.promises.lstat(dir).catch(() => null);
  if (st && !st.isDirectory())
    throw new OperationError('INVALID_PATH', `"${dir.slice(1)}" is a file, not a folder.`);
  await mkdirp(repo.fs.promises, dir);
}
