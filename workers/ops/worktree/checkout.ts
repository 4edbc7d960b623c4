// Checks out a commit into the repo's working tree (`/` of its lightning-fs, beside `/.git`). The trees
// of a blob:none clone are all local, so the blobs the target needs are listed first and the ones no pack
// holds are fetched in batches (lazyBlobs.ts). Where there is no working tree yet (after a clone), each
// file is written as its blob arrives (newWorktree.ts); otherwise isomorphic-git updates the working tree
// and the index once the blobs are here. Either way every change reaches IndexedDB in one transaction
// (repoFs.ts writeAllOrNothing), so a checkout that fails or is cancelled leaves the previous working tree
// as it was.

import git from 'isomorphic-git';
import { comparePaths } from '../../model/pathOrder.ts';
import { MODE_GITLINK, MODE_SYMLINK, MODE_TREE_PADDED as MODE_TREE } from '../../pack/treeCheck.ts';
import { GITDIR, type PromiseFs } from '../../store/repoFs.ts';
import { assertSafeSymlinks, commitTree, linkTarget, walkCheckedTree } from '../common/checkedTrees.ts';
import {
  abortedError,
  HostileTreeError,
  MissingObjectError,
  OperationError,
  throwIfAborted,
  WorktreeDirtyError,
} from '../common/errors.ts';
import type { OperationHooks } from '../common/operationHooks.ts';
import { usePackObjectCache } from '../common/packObjectCache.ts';
import {
  forgetLoadedPacks,
  openRepo,
  type RepoHandle,
  readBlobBytes,
  readingStoredPacks,
  resolveCommit,
} from '../common/repoAccess.ts';
import { type Timeline, timeline } from '../common/timeline.ts';
import { maintenanceIdle, scheduleRepack } from '../maintenance/packMaintenance.ts';
import {
  type BlobContext,
  type BlobFetchHooks,
  type BlobFetchProgress,
  type BlobFetchResult,
  ensureBlobs,
} from '../sync/lazyBlobs.ts';
import {
  hasNoWorktree,
  type NewWorktreeFile,
  type NewWorktreeHooks,
  placeNewWorktree,
  writeNewWorktree,
} from './newWorktree.ts';
import { clearTypeChanges, removeAll } from './typeChanges.ts';

/** The working tree's root in the repo's file system; the git directory is `/.git` inside it. */
export const WORKTREE_DIR = '/';

/**
 * What a checkout (and each working-tree operation) tells onProgress: the blobs it fetches, then the files
 * it writes.
 */
export type CheckoutProgress =
  | BlobFetchProgress
  /** Working tree changes applied so far (files written or deleted, folders made or removed). */
  | {
      /** The working tree being updated. */
      phase: 'writing-files';
      /** Changes applied so far. */
      files: number;
      /** Changes to apply in all. */
      totalFiles: number;
    }
  /** Another tab (or operation) holds the repo's lock; `what` it runs, once it said. */
  | {
      /** Sent once, when the wait starts. */
      phase: 'waiting-for-lock';
      /** What the operation holding the repo does, when it said; undefined otherwise. */
      what: string | undefined;
    };

/** Which files a checkout updates, and whether it may overwrite local changes. */
export interface CheckoutOptions {
  /**
   * Only the files under these paths (files or folders, relative to the root) are fetched and updated: a
   * sparse checkout. HEAD still moves to the target; the rest of the working tree and index is left as it
   * was (after a clone: absent).
   */
  paths?: string[];
  /** Throw away local changes to tracked files instead of refusing with WORKTREE_DIRTY, as `git checkout -f`. */
  force?: boolean;
  /**
   * Check the commit out on this branch: the branch moves to it and HEAD names the branch, in the same
   * batch as the working tree (a pull's fast-forward or merge: no crash can leave one moved, not the other).
   */
  onBranch?: string;
}

/**
 * Progress and cancellation; `connection` and `batching` go to the blob fetch (lazyBlobs.ts), `hookedBytes`
 * to a first checkout's (newWorktree.ts).
 */
export type CheckoutHooks = OperationHooks<CheckoutProgress> &
  Pick<BlobFetchHooks, 'connection' | 'batching'> &
  Pick<NewWorktreeHooks, 'hookedBytes'>;

/** What a checkout changed and fetched. */
export interface CheckoutResult {
  /** The commit now checked out. */
  commit: string;
  /** The branch HEAD now names, or null when HEAD is detached (a tag or commit was checked out). */
  branch: string | null;
  /** Files and symlinks written in the working tree. */
  filesWritten: number;
  /** Files and symlinks deleted from the working tree (and not written again). */
  filesDeleted: number;
  /** Blobs fetched from the server for it (those the partial clone had left there). */
  blobsFetched: number;
  /** Requests those fetches made. */
  requests: number;
  /** Response bytes of those fetches. */
  bytes: number;
}

const PROGRESS_INTERVAL_MS = 50;

interface Target {
  commit: string;
  branch: string | null;
  /** The branch does not exist yet: it is made from `refs/remotes/origin/<branch>`. */
  createBranch: boolean;
  /** What isomorphic-git is told to check out: `refs/heads/<branch>`, or the commit id for a detached HEAD. */
  ref: string;
}

/**
 * Checks out `ref`: a local branch; a branch that only the remote has (a local one is made from
 * `origin/<ref>` and set to track it, as `git checkout <ref>` does); a tag, remote-tracking ref or commit id
 * (HEAD is detached); or `HEAD` (the current branch or commit again, e.g. right after a clone). Throws
 * REF_NOT_FOUND, PATH_NOT_FOUND for a path in `paths` that the target does not have, HostileTreeError for a
 * tree or symlink git would refuse (before any blob is fetched for a tree; for a symlink's target, once its
 * blob is here), MissingObjectError
 * (naming a file) when a blob cannot be fetched, WorktreeDirtyError when local changes would be lost, and
 * ABORTED; in every case the working tree, index, HEAD and branches are as they were. Blobs fetched before
 * the failure are kept: the next checkout will not fetch them again.
 */
export async function checkout(
  ctx: BlobContext,
  repoId: string,
  ref: string,
  opts: CheckoutOptions = {},
  hooks: CheckoutHooks = {},
): Promise<CheckoutResult> {
  const { signal, onProgress, connection, batching } = hooks;
  throwIfAborted(signal);
  const steps = timeline(ctx, 'checkout');
  steps.clear();
  const started = performance.now();
  const repo = await openRepo(ctx, repoId);
  const intoNothing = await hasNoWorktree(repo);
  // Where nothing is checked out, no blob is read from the stored packs after the trees: our reader lists
  // them, so that isomorphic-git does not parse the clone's whole .idx for them (storedPackReader.ts).
  // What isomorphic-git loaded before (the clone's commit-graph build reads commits) is let go: nothing
  // below reads it again.
  if (intoNothing) forgetLoadedPacks(repo);
  const reading = intoNothing ? await readingStoredPacks(ctx, repo) : repo;
  const resolved = await resolveTarget(reading, ref);
  const target = opts.onBranch ? { ...resolved, branch: opts.onBranch } : resolved;
  const paths = opts.paths === undefined ? undefined : normalizePaths(opts.paths);
  const files = await steps.step('list-files', () => listFiles(reading, target.commit, paths));
  // The packs of trees it read (the clone's, tens of MB on a large repo) go now, not when the checkout ends.
  reading.storedPacks?.release();
  // listFiles loaded the repo's packs: the blobs' reads below reuse their delta bases.
  await usePackObjectCache(repo.cache, ctx.settings.packObjectCacheBytes);
  throwIfAborted(signal);

  if (intoNothing) {
    // Whatever pack isomorphic-git did load (for an object our reader left to it) is not read again:
    // blobs come from the packs as they arrive.
    forgetLoadedPacks(repo);
    const result = await checkoutIntoNothing(ctx, steps, repo, target, files, hooks, opts.onBranch);
    steps.measure('total', started);
    return result;
  }

  const blobs = [...files.values()].filter((f) => f.mode !== MODE_GITLINK).map((f) => f.oid);
  let fetched: BlobFetchResult;
  try {
    // No pack merge inside a checkout: it would hold the checkout up, and its writes would fall inside the
    // all-or-nothing batch below. It is scheduled once the checkout is done.
    fetched = await steps.step('fetch-blobs', () =>
      ensureBlobs(ctx, repoId, blobs, { onProgress, signal, connection, batching, deferMaintenance: true }),
    );
  } catch (err) {
    throw blobFetchFailed(ctx, repoId, files, err);
  }
  try {
    // A link's target is its blob: only now can it be checked, and still before anything is written.
    const links = new Map<string, string>();
    for (const [path, f] of files) {
      if (f.mode === MODE_SYMLINK)
        links.set(path, linkTarget(path, await readBlobBytes(repo, f.oid), repo.treeLimits));
    }
    await assertSafeSymlinks(links, repo.treeLimits);
    const result = await writeCheckout(ctx, steps, repo, target, files, paths, opts, hooks, fetched);
    steps.measure('total', started);
    return result;
  } finally {
    if (fetched.fetched > 0) scheduleRepack(ctx, repoId);
  }
}

/** What a failed blob fetch throws: a missing blob names a file that wants it. */
function blobFetchFailed(
  ctx: BlobContext,
  repoId: string,
  files: Map<string, TreeFile>,
  err: unknown,
): unknown {
  // Packs of the batches that did arrive are stored: they may want merging all the same.
  scheduleRepack(ctx, repoId);
  if (err instanceof MissingObjectError) {
    const path = [...files].find(([, f]) => f.oid === err.oid)?.[0];
    return path ? err.withPath(path) : err;
  }
  return err;
}

/**
 * The first checkout, where there is no working tree: the files are written as their blobs arrive
 * (newWorktree.ts), then named with the index and HEAD in one all-or-nothing write.
 */
async function checkoutIntoNothing(
  ctx: BlobContext,
  steps: Timeline,
  repo: RepoHandle,
  target: Target,
  files: Map<string, TreeFile>,
  hooks: CheckoutHooks,
  onBranch: string | undefined,
): Promise<CheckoutResult> {
  const repoId = repo.record.id;
  const { signal } = hooks;
  let written: Awaited<ReturnType<typeof writeNewWorktree>>;
  try {
    written = await steps.step('fetch-and-write-files', () =>
      writeNewWorktree(ctx, repo, files, { ...hooks, steps }),
    );
  } catch (err) {
    throw blobFetchFailed(ctx, repoId, files, err);
  }
  try {
    // A link's target is its blob: checked before anything is named.
    await assertSafeSymlinks(written.links, repo.treeLimits);
    // See writeCheckout: a merge an earlier lazy fetch started must not write into this batch.
    if (!ctx.store.locks.heldHereNow(repoId)) await maintenanceIdle(ctx, repoId);
    await ctx.store.crash.at('checkout:blobs-stored');
    throwIfAborted(signal);
    const commitStarted = performance.now();
    await ctx.store.repoFs.writeAllOrNothing(repoId, async () => {
      await placeNewWorktree(ctx, repo, files, written);
      // onBranch (pull's merge or fast-forward): the branch moves to the commit, as in the other path.
      if (onBranch) await moveBranchHere(repo, onBranch, target.commit);
      else await setHead(repo, target);
      await ctx.store.crash.at('checkout:files-written');
    });
    steps.measure('commit', commitStarted);
  } catch (err) {
    await ctx.store.repoFs.dropStaged(repoId, [...written.staged.values()]);
    ctx.store.forgetRepo(repoId);
    ctx.repos.forget(repoId);
    if (signal?.aborted) throw abortedError();
    throw err;
  } finally {
    if (written.fetched.fetched > 0) scheduleRepack(ctx, repoId);
  }
  await ctx.store.crash.at('checkout:files-committed');
  await ctx.store.registry.update(repoId, (r) => ({ ...r, branch: target.branch, headOid: target.commit }));
  hooks.onProgress?.({ phase: 'writing-files', files: files.size, totalFiles: files.size });
  return {
    commit: target.commit,
    branch: target.branch,
    filesWritten: written.staged.size + written.links.size,
    filesDeleted: 0,
    blobsFetched: written.fetched.fetched,
    requests: written.fetched.requests,
    bytes: written.fetched.bytes,
  };
}

/** HEAD on the target, as isomorphic-git's checkout leaves it: the branch (made first if new), or the commit. */
async function setHead(repo: RepoHandle, target: Target): Promise<void> {
  const { fs, gitdir } = repo;
  if (target.branch && target.createBranch) await makeBranch(repo, target.branch, target.commit);
  if (target.branch) {
    await git.writeRef({ fs, gitdir, ref: 'HEAD', value: target.ref, symbolic: true, force: true });
  } else {
    await git.writeRef({ fs, gitdir, ref: 'HEAD', value: target.commit, force: true });
  }
}

/** A local branch made from `origin/<branch>`, tracking it, as `git checkout <branch>` sets one up. */
async function makeBranch(repo: RepoHandle, branch: string, commit: string): Promise<void> {
  const { fs, gitdir } = repo;
  await git.writeRef({ fs, gitdir, ref: `refs/heads/${branch}`, value: commit });
  await git.setConfig({ fs, gitdir, path: `branch.${branch}.remote`, value: 'origin' });
  await git.setConfig({ fs, gitdir, path: `branch.${branch}.merge`, value: `refs/heads/${branch}` });
}

async function writeCheckout(
  ctx: BlobContext,
  steps: Timeline,
  repo: RepoHandle,
  target: Target,
  files: Map<string, TreeFile>,
  paths: string[] | undefined,
  opts: CheckoutOptions,
  hooks: CheckoutHooks,
  fetched: BlobFetchResult,
): Promise<CheckoutResult> {
  const { signal } = hooks;
  const repoId = repo.id;
  // A merge that an earlier lazy fetch (a file view, say) started writes to the same file system: its writes
  // must not fall inside this checkout's all-or-nothing batch, where a cancel would drop them. This
  // checkout's own fetch started none (deferMaintenance), so this is normally no wait at all.
  // Under the repo's lock (the API's checkout) no merge can run: it takes the lock only when free.
  if (!ctx.store.locks.heldHereNow(repoId)) await maintenanceIdle(ctx, repoId);
  await ctx.store.crash.at('checkout:blobs-stored');
  throwIfAborted(signal);

  // Submodule folders of the current HEAD that the target drops: git removes them when they are empty.
  const previous = await git.resolveRef({ fs: repo.fs, gitdir: repo.gitdir, ref: 'HEAD' }).catch(() => null);
  const droppedGitlinks: string[] = [];
  if (previous && previous !== target.commit) {
    for (const [path, f] of await previousFiles(repo, previous, paths)) {
      if (f.mode === MODE_GITLINK && files.get(path)?.mode !== MODE_GITLINK) droppedGitlinks.push(path);
    }
  }
  const targetDirs = new Set<string>();
  for (const [path, f] of files) {
    if (f.mode === MODE_GITLINK) targetDirs.add(path);
    for (let i = path.indexOf('/'); i !== -1; i = path.indexOf('/', i + 1)) targetDirs.add(path.slice(0, i));
  }

  const changes: WorktreeChanges = { written: new Set(), deleted: new Set() };
  let commitStarted = performance.now();
  try {
    const writeStarted = performance.now();
    await ctx.store.repoFs.writeAllOrNothing(repoId, async () => {
      const worktreeFs = watchedFs(repo.fs.promises, changes, signal);
      await clearTypeChanges(repo, worktreeFs, WORKTREE_DIR, files, paths, !!opts.force).catch(
        async (err: unknown) => {
          throw err instanceof WorktreeDirtyError ? await withOtherConflicts(repo, target, paths, err) : err;
        },
      );
      await steps.step('write-files', () =>
        applyCheckout(repo, worktreeFs, target, paths, !!opts.force, hooks),
      );
      const emptied = [...droppedGitlinks, ...[...changes.deleted].map(parentOf)];
      await removeEmptyDirs(worktreeFs.promises, emptied, targetDirs);
      if (opts.onBranch) await moveBranchHere(repo, opts.onBranch, target.commit);
      await ctx.store.crash.at('checkout:files-written');
      commitStarted = performance.now();
    });
    steps.measure('commit', commitStarted);
    steps.measure('write-and-commit', writeStarted);
  } catch (err) {
    // The discard also dropped whatever else was written meanwhile (a lazy fetch's pack, say): what is
    // known of the packs in memory is read again from what is stored.
    ctx.store.forgetRepo(repoId);
    ctx.repos.forget(repoId);
    if (signal?.aborted) throw abortedError();
    throw err;
  }
  // The record follows the files: a crash in between leaves it behind, and startup repair (repair.ts)
  // brings it in line with HEAD.
  await ctx.store.crash.at('checkout:files-committed');
  await ctx.store.registry.update(repoId, (r) => ({ ...r, branch: target.branch, headOid: target.commit }));
  let deleted = 0;
  for (const path of changes.deleted) if (!changes.written.has(path)) deleted++;
  return {
    commit: target.commit,
    branch: target.branch,
    filesWritten: changes.written.size,
    filesDeleted: deleted,
    blobsFetched: fetched.fetched,
    requests: fetched.requests,
    bytes: fetched.bytes,
  };
}

/** In the order `git checkout <name>` tries them: local branch, any ref or commit id, then a remote branch. */
async function resolveTarget(repo: RepoHandle, ref: string): Promise<Target> {
  const { fs, gitdir } = repo;
  const exists = async (name: string) => {
    try {
      await git.resolveRef({ fs, gitdir, ref: name });
      return true;
    } catch {
      return false;
    }
  };
  if (ref === 'HEAD') {
    const commit = await resolveCommit(repo, 'HEAD');
    const branch = (await git.currentBranch({ fs, gitdir, fullname: false })) ?? null;
    return branch
      ? { commit, branch, createBranch: false, ref: `refs/heads/${branch}` }
      : { commit, branch: null, createBranch: false, ref: commit };
  }
  const name = ref.replace(/^refs\/heads\//, '');
  if (await exists(`refs/heads/${name}`)) {
    const commit = await resolveCommit(repo, `refs/heads/${name}`);
    return { commit, branch: name, createBranch: false, ref: `refs/heads/${name}` };
  }
  const detached = [ref.startsWith('refs/') ? ref : null, `refs/tags/${ref}`, `refs/remotes/${ref}`];
  for (const full of detached) {
    if (full && (await exists(full))) {
      const commit = await resolveCommit(repo, full);
      return { commit, branch: null, createBranch: false, ref: commit };
    }
  }
  // A remote branch named like a commit id ("cafe", "add") is a branch, as git checkout reads it.
  if (await exists(`refs/remotes/origin/${name}`)) {
    const commit = await resolveCommit(repo, `refs/remotes/origin/${name}`);
    return { commit, branch: name, createBranch: true, ref: `refs/heads/${name}` };
  }
  if (/^[0-9a-f]{4,40}$/i.test(ref)) {
    const commit = await resolveCommit(repo, ref);
    return { commit, branch: null, createBranch: false, ref: commit };
  }
  throw new OperationError(
    'REF_NOT_FOUND',
    `"${ref}" is not a branch, tag or commit of ${repo.record.name}.`,
  );
}

function normalizePaths(paths: string[]): string[] {
  const out = paths.map((p) => p.replace(/\/+/g, '/').replace(/^\/|\/$/g, ''));
  if (out.some((p) => p === '' || p === '.')) return [];
  for (const p of out) {
    if (p.split('/').some((part) => part === '.' || part === '..')) {
      throw new OperationError('PATH_NOT_FOUND', `"${p}" is not a path inside the repository.`);
    }
  }
  return out;
}

function isUnder(path: string, base: string): boolean {
  return path === base || path.startsWith(`${base}/`);
}

type TreeFile = NewWorktreeFile;

/**
 * Every file, symlink and gitlink of the commit's tree (under `paths` when given), by path. Only trees are
 * read, and a blob:none clone holds them all; each is checked (HostileTreeError) before its entries count.
 */
async function listFiles(
  repo: RepoHandle,
  commit: string,
  paths: string[] | undefined,
  opts: { strict?: boolean } = {},
): Promise<Map<string, TreeFile>> {
  const all = paths === undefined || paths.length === 0;
  const matched = new Set<string>();
  const files = new Map<string, TreeFile>();
  await walkCheckedTree(repo, await commitTree(repo, commit), (entry, path) => {
    const inside = all || paths.some((p) => isUnder(path, p));
    if (!all) for (const p of paths) if (isUnder(path, p)) matched.add(p);
    if (entry.mode === MODE_TREE) return inside || paths?.some((p) => p.startsWith(`${path}/`));
    if (inside) files.set(path, { oid: entry.oid, mode: entry.mode });
  });
  const unmatched = all || opts.strict === false ? [] : paths.filter((p) => !matched.has(p));
  if (unmatched.length > 0) {
    throw new OperationError(
      'PATH_NOT_FOUND',
      `${unmatched.map((p) => `"${p}"`).join(', ')} ${unmatched.length === 1 ? 'is' : 'are'} not in commit ${commit.slice(0, 10)}.`,
    );
  }
  return files;
}

/**
 * The files of the commit HEAD named before this checkout. A refused checkout leaves HEAD on a hostile
 * commit (right after a clone, say) with nothing of it written: then there is nothing of it to clean up.
 */
async function previousFiles(
  repo: RepoHandle,
  commit: string,
  paths: string[] | undefined,
): Promise<Map<string, TreeFile>> {
  try {
    return await listFiles(repo, commit, paths, { strict: false });
  } catch (err) {
    if (err instanceof HostileTreeError) return new Map();
    throw err;
  }
}

interface WorktreeChanges {
  /** Working tree paths (relative) written; a file written twice counts once. */
  written: Set<string>;
  deleted: Set<string>;
}

/** Points `branch` at `commit` and HEAD at the branch (`onBranch`). */
async function moveBranchHere(repo: RepoHandle, branch: string, commit: string): Promise<void> {
  const { fs, gitdir } = repo;
  await git.writeRef({ fs, gitdir, ref: `refs/heads/${branch}`, value: commit, force: true });
  await git.writeRef({ fs, gitdir, ref: 'HEAD', value: `refs/heads/${branch}`, symbolic: true, force: true });
}

async function applyCheckout(
  repo: RepoHandle,
  worktreeFs: WatchedFs,
  target: Target,
  paths: string[] | undefined,
  force: boolean,
  hooks: OperationHooks<CheckoutProgress>,
): Promise<void> {
  const { gitdir, cache } = repo;
  const { onProgress } = hooks;
  const filepaths = paths && paths.length > 0 ? paths : undefined;
  if (target.branch && target.createBranch) await makeBranch(repo, target.branch, target.commit);

  let lastReport = 0;
  let total = 0;
  const progress = onProgress
    ? (p: { phase: string; loaded: number; total: number }) => {
        if (p.phase !== 'Updating workdir') return;
        // isomorphic-git counts a submodule twice (its folder, then its index entry): clamp.
        total = p.total;
        const files = Math.min(p.loaded, p.total);
        const now = performance.now();
        if (files < total && now - lastReport < PROGRESS_INTERVAL_MS) return;
        lastReport = now;
        onProgress({ phase: 'writing-files', files, totalFiles: total });
      }
    : undefined;
  const run = (pass: { force?: boolean; filepaths?: string[]; noUpdateHead?: boolean } = {}) =>
    git.checkout({
      fs: worktreeFs,
      dir: WORKTREE_DIR,
      gitdir,
      cache,
      ref: target.ref,
      filepaths: pass.filepaths ?? filepaths,
      force: pass.force ?? false,
      noUpdateHead: pass.noUpdateHead,
      // The branch (and its tracking) was made above, from the ref resolved in git's order.
      track: false,
      onProgress: progress as Parameters<typeof git.checkout>[0]['onProgress'],
    });

  onProgress?.({ phase: 'writing-files', files: 0, totalFiles: 0 });
  // isomorphic-git's force rewrites every file it looks at; git's only what differs. So a forced checkout
  // is an ordinary one, with the files in the way (and, after it, the files still modified) forced alone.
  try {
    await run();
  } catch (err) {
    const conflicts = conflictPaths(err);
    if (!conflicts) throw err;
    if (!force) throw new WorktreeDirtyError(conflicts);
    try {
      await run({ force: true, filepaths: conflicts, noUpdateHead: true });
      await run();
    } catch (again) {
      // What isomorphic-git's force cannot fix is left: an untracked file where a folder goes, or an untracked
      // folder where a file goes. git checkout -f removes them ("even if there are untracked files in the way").
      const left = conflictPaths(again);
      if (!left) throw again;
      for (const path of left) await removeAll(worktreeFs.promises, `/${path}`);
      await run();
    }
  }
  if (force) {
    const dirty = (await git.statusMatrix({ fs: worktreeFs, dir: WORKTREE_DIR, gitdir, cache, filepaths }))
      .filter(
        ([, head, workdir, stage]) =>
          !(head === 1 && workdir === 1 && stage === 1) && !(head === 0 && stage === 0),
      )
      .map(([path]) => path);
    if (dirty.length > 0) await run({ force: true, filepaths: dirty, noUpdateHead: true });
  }
  onProgress?.({ phase: 'writing-files', files: total, totalFiles: total });
}

function parentOf(path: string): string {
  return path.slice(0, Math.max(0, path.lastIndexOf('/')));
}

/**
 * isomorphic-git deletes files but never the folders they leave empty, nor the (empty) folder of a
 * submodule that is gone; git removes both. So: each candidate, then its parents, while empty and not a
 * folder of the target. A folder holding anything (an untracked file, say) stays, as in git.
 */
async function removeEmptyDirs(
  fs: WatchedFs['promises'],
  candidates: string[],
  keep: Set<string>,
): Promise<void> {
  const depth = (p: string) => p.split('/').length;
  const sorted = [...new Set(candidates)].filter(Boolean).sort((a, b) => depth(b) - depth(a));
  for (let dir of sorted) {
    while (dir && !keep.has(dir)) {
      let names: string[];
      try {
        if (!(await fs.lstat(`/${dir}`)).isDirectory()) break;
        names = await fs.readdir(`/${dir}`);
      } catch {
        break; // already gone
      }
      if (names.length > 0) break;
      await fs.rmdir(`/${dir}`);
      dir = parentOf(dir);
    }
  }
}

/**
 * A refused change of kind, with the local changes the rest of the switch would overwrite: git names every
 * path in the way at once. A dry run of isomorphic-git's checkout (nothing written) lists the others.
 */
async function withOtherConflicts(
  repo: RepoHandle,
  target: Target,
  paths: string[] | undefined,
  refused: WorktreeDirtyError,
): Promise<WorktreeDirtyError> {
  const others = await git
    .checkout({
      fs: repo.fs,
      dir: WORKTREE_DIR,
      gitdir: repo.gitdir,
      cache: repo.cache,
      ref: target.commit,
      filepaths: paths && paths.length > 0 ? paths : undefined,
      dryRun: true,
      noUpdateHead: true,
      track: false,
    })
    .then(
      () => [],
      (err: unknown) => conflictPaths(err) ?? [],
    );
  // In git's order, as git names them (the refusal's own list is in the index's walk order).
  return new WorktreeDirtyError([...new Set([...refused.paths, ...others])].sort(comparePaths));
}

function conflictPaths(err: unknown): string[] | null {
  const e = err as { code?: string; data?: { filepaths?: string[] } };
  return e?.code === 'CheckoutConflictError' ? (e.data?.filepaths ?? []) : null;
}

/**
 * The repo's file system as isomorphic-git sees it during a checkout: every call first checks the signal
 * (isomorphic-git takes none), and changes to the working tree are recorded.
 */
type WatchedFs = ReturnType<typeof watchedFs>;

function watchedFs(fs: PromiseFs, changes: WorktreeChanges, signal: AbortSignal | undefined) {
  const worktreePath = (path: string): string | null => {
    const clean = path.replace(/\/+/g, '/');
    if (clean === GITDIR || clean.startsWith(`${GITDIR}/`)) return null;
    return clean.replace(/^\//, '');
  };
  const check = () => {
    if (signal?.aborted) throw abortedError();
  };
  type Call = (...args: unknown[]) => Promise<unknown>;
  const guarded = (name: 'readFile' | 'mkdir' | 'rmdir' | 'stat' | 'lstat' | 'readdir' | 'readlink') => {
    return async (...args: unknown[]) => {
      check();
      return (fs[name] as Call)(...args);
    };
  };
  const recorded = (name: 'writeFile' | 'symlink' | 'unlink', set: Set<string>, pathArg: number) => {
    return async (...args: unknown[]) => {
      check();
      await (fs[name] as Call)(...args);
      const path = worktreePath(args[pathArg] as string);
      if (path !== null) set.add(path);
    };
  };
  const promises = {
    readFile: guarded('readFile'),
    writeFile: recorded('writeFile', changes.written, 0),
    symlink: recorded('symlink', changes.written, 1),
    unlink: recorded('unlink', changes.deleted, 0),
    mkdir: guarded('mkdir'),
    rmdir: guarded('rmdir'),
    stat: guarded('stat'),
    lstat: guarded('lstat'),
    readdir: guarded('readdir'),
    readlink: guarded('readlink'),
  };
  // The same calls as PromiseFs, each checked and some recorded.
  return { promises: promises as unknown as PromiseFs };
}
