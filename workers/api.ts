import { withAuthRequired } from './ops/common/authRequired.ts';
import { forgetRepo } from './ops/common/repoAccess.ts';
import { type CommitGraphStatus, commitGraphStatus } from './ops/maintenance/commitGraphUpdate.ts';
import { stopWarmUp, warmUpOnce } from './ops/maintenance/ingesterWarmUp.ts';
import { type BlameProgress, type BlameResult, blame } from './ops/read/blame.ts';
import { type Comparison, compareRefs } from './ops/read/compare.ts';
import { type CommitDiff, diffCommits, diffFile, type FileDiff } from './ops/read/diff.ts';
import { type FileHistoryPage, fileHistory, forgetFileHistories } from './ops/read/fileHistory.ts';
import { type CommitSummary, forgetWalks, type LogPage, log, readCommit } from './ops/read/history.ts';
import { type LastCommits, lastCommits } from './ops/read/lastCommits.ts';
import { type Presence, presence } from './ops/read/presence.ts';
import { type FileContent, readFile } from './ops/read/readFile.ts';
import {
  type MinimalEntry,
  type MinimalProgress,
  type MinimalRead,
  type ReadMinimalOptions,
  readFileMinimal,
} from './ops/read/readFileMinimal.ts';
import { listRefs, type RefList } from './ops/read/refs.ts';
import { readTree, type TreeListing } from './ops/read/tree.ts';
import { listPaths } from './ops/read/treePaths.ts';
import { type CloneOptions, type CloneProgress, type CloneResult, clone } from './ops/sync/clone.ts';
import { type FetchOptions, type FetchProgress, type FetchResult, fetchRepo } from './ops/sync/fetch.ts';
import {
  cancelHistoryFill,
  type FillProgress,
  type FillResult,
  fillHistory,
} from './ops/sync/historyFill.ts';
import { type BlobFetchProgress, cancelBlobFetches } from './ops/sync/lazyBlobs.ts';
import { type PushOptions, type PushProgress, type PushResult, push } from './ops/sync/push.ts';
import { createBranch, deleteBranch } from './ops/worktree/branches.ts';
import {
  type CheckoutOptions,
  type CheckoutProgress,
  type CheckoutResult,
  checkout,
} from './ops/worktree/checkout.ts';
import { type CommitOptions, type CommitResult, commit } from './ops/worktree/commit.ts';
import { type PullOptions, type PullProgress, type PullResult, pull } from './ops/worktree/pull.ts';
import {
  abortMerge,
  deleteWorktreeFile,
  readWorktreeFile,
  renameWorktreeFile,
  type StatusEntry,
  stage,
  stagedDiff,
  status,
  unstage,
  type WorktreeStatus,
  writeWorktreeFile,
} from './ops/worktree/workingTree.ts';
import { forgetCredentials, type RepoSummary, repoSummary, setCredentials } from './store/credentials.ts';
import { forgetPackSet } from './store/packSet.ts';
import { listRepoRecords, removeRepo } from './store/registry.ts';
import { type RepairReport, repairStores } from './store/repair.ts';
import { REPO_EVENTS_CHANNEL } from './store/repoEvents.ts';
import { deleteRepoFs } from './store/repoFs.ts';
import { type LockWait, WORKER_ORIGIN, withRepoLock } from './store/repoLock.ts';

let repairing: Promise<RepairReport> | undefined;

export type { BlameLine } from './ops/read/blame.ts';
export type { FileChange } from './ops/read/diff.ts';
export type { FileHistoryEntry } from './ops/read/fileHistory.ts';
export type { TreeEntry } from './ops/read/tree.ts';
export type { RefUpdate } from './ops/sync/fetch.ts';
export type { Author } from './ops/worktree/commit.ts';
export type { RepoEvent } from './store/repoEvents.ts';
export type {
  BlameProgress,
  BlameResult,
  BlobFetchProgress,
  CheckoutOptions,
  CheckoutProgress,
  CheckoutResult,
  CloneOptions,
  CloneProgress,
  CloneResult,
  CommitDiff,
  CommitGraphStatus,
  CommitOptions,
  CommitResult,
  CommitSummary,
  Comparison,
  FetchOptions,
  FetchProgress,
  FetchResult,
  FileContent,
  FileDiff,
  FileHistoryPage,
  FillProgress,
  FillResult,
  LastCommits,
  LockWait,
  LogPage,
  MinimalEntry,
  MinimalProgress,
  MinimalRead,
  Presence,
  PullOptions,
  PullProgress,
  PullResult,
  PushOptions,
  PushProgress,
  PushResult,
  ReadMinimalOptions,
  RefList,
  RepairReport,
  RepoSummary,
  StatusEntry,
  TreeListing,
  WorktreeStatus,
};

/** The history walks kept for the history list and file histories (read/history, read/fileHistory). */
function forgetHistoryWalks(repoId: string): void {
  forgetWalks(repoId);
  forgetFileHistories(repoId);
}

/**
 * Everything the UI may ask of the git worker. Long operations take a progress callback and an
 * AbortSignal; failures are typed errors with a stable `code`.
 */
export const api = {
  /**
   * Warms the pack ingester up at page load (pack/warmUp.ts), so that the first clone does not run it cold;
   * resolves when done. Any clone or fetch that starts meanwhile stops it.
   */
  warmUp(): Promise<'done' | 'stopped'> {
    return warmUpOnce();
  },

  clone(
    options: CloneOptions,
    onProgress?: (p: CloneProgress) => void,
    signal?: AbortSignal,
  ): Promise<CloneResult> {
    stopWarmUp();
    return clone(options, { onProgress, signal });
  },

  /** Brings new commits, branches and tags from the remote (a no-op costs two small requests). */
  fetch(
    repoId: string,
    options?: FetchOptions,
    onProgress?: (p: FetchProgress) => void,
    signal?: AbortSignal,
  ): Promise<FetchResult> {
    stopWarmUp();
    return withRepoLock(
      repoId,
      'fetch',
      () => withAuthRequired(repoId, () => fetchRepo(repoId, options, { onProgress, signal })),
      { signal },
    );
  },

  /**
   * Brings the history, branches and tags of a first-view clone (its record has `historyFill`), in steps
   * each stored whole; a no-op for other repos, and when another tab is filling it (`busyElsewhere`).
   * Cancelled or failed, it leaves a valid shallow repo that the next call completes.
   */
  fillHistory(
    repoId: string,
    onProgress?: (p: FillProgress) => void,
    signal?: AbortSignal,
  ): Promise<FillResult> {
    stopWarmUp();
    return withAuthRequired(repoId, () =>
      fillHistory(repoId, { onStepStored: () => forgetHistoryWalks(repoId) }, { onProgress, signal }),
    );
  },

  /** Fetches, then fast-forwards or merges the current branch; conflicts are reported, never half-applied. */
  pull(
    repoId: string,
    options?: PullOptions,
    onProgress?: (p: PullProgress) => void,
    signal?: AbortSignal,
  ): Promise<PullResult> {
    return withRepoLock(
      repoId,
      'pull',
      () => withAuthRequired(repoId, () => pull(repoId, options, { onProgress, signal })),
      { signal },
    );
  },

  /**
   * A token for a stored private repo, given again (after a reload, or when the old one was refused): for
   * this session, and kept in this browser's storage only when `remember` is true.
   */
  setCredentials(
    repoId: string,
    /** `proxy`: the CORS proxy the person agreed to send it through (required for a proxied repo). */
    auth: { username: string; password: string; proxy?: string },
    remember = false,
  ): Promise<void> {
    return setCredentials(repoId, auth, remember);
  },

  /**
   * The repos the app browses; the widget's minimal repos hold too few trees for its views. Whether a token
   * is kept, never the token: the page needs no token, and anything it holds a script injected there reads.
   */
  async listRepos(): Promise<RepoSummary[]> {
    return (await listRepoRecords()).filter((r) => !r.minimal).map(repoSummary);
  },

  async deleteRepo(repoId: string, onWait?: (w: LockWait) => void, signal?: AbortSignal): Promise<void> {
    // A blob fetch finishing after the delete would write into a recreated database; a pack merge holds
    // the lock, so the delete waits for it.
    await cancelBlobFetches(repoId);
    // A fill step stored after the delete would recreate the database.
    cancelHistoryFill(repoId);
    await withRepoLock(
      repoId,
      'deleting the repository',
      async () => {
        forgetRepo(repoId);
        forgetCredentials(repoId);
        forgetHistoryWalks(repoId);
        forgetPackSet(repoId);
        await deleteRepoFs(repoId);
        await removeRepo(repoId);
      },
      { signal, onWait },
    );
  },

  /**
   * Startup repair (repair.ts), run once per worker: the first call starts it, every call gets its report.
   * The UI calls it when it starts and shows what it removed or reported.
   */
  startupRepair(): Promise<RepairReport> {
    repairing ??= repairStores();
    return repairing;
  },

  /**
   * The BroadcastChannel on which workers say what they do to repos (store/repoEvents.ts), and this
   * worker's id in those events: a page ignores its own worker's.
   */
  repoEvents(): { channel: string; origin: string } {
    return { channel: REPO_EVENTS_CHANNEL, origin: WORKER_ORIGIN };
  },

  listRefs(repoId: string): Promise<RefList> {
    return listRefs(repoId);
  },

  log(repoId: string, ref: string, page?: { limit?: number; skip?: number }): Promise<LogPage> {
    return log(repoId, ref, page);
  },

  readCommit(repoId: string, ref: string): Promise<CommitSummary> {
    return readCommit(repoId, ref);
  },

  readTree(repoId: string, commit: string, path?: string): Promise<TreeListing> {
    return readTree(repoId, commit, path);
  },

  /** The last commit that changed each entry of a folder, from commits and trees; asked for after the listing. */
  lastCommits(repoId: string, ref: string, path: string, signal?: AbortSignal): Promise<LastCommits> {
    return lastCommits(repoId, ref, path, { signal });
  },

  /** Every file path of a commit, newline-separated, from trees alone: what go-to-file searches. */
  listPaths(repoId: string, ref: string): Promise<{ commit: string; paths: string }> {
    return listPaths(repoId, ref);
  },

  /** One page of the commits that changed `path`, following renames (`git log --follow`), from trees alone. */
  fileHistory(
    repoId: string,
    ref: string,
    path: string,
    page?: { limit?: number; skip?: number },
    signal?: AbortSignal,
  ): Promise<FileHistoryPage> {
    return withAuthRequired(repoId, () => fileHistory(repoId, ref, path, page, { signal }));
  },

  /** `git blame`: the old versions' blobs are fetched in a few growing batches, not one by one. */
  blame(
    repoId: string,
    ref: string,
    path: string,
    onProgress?: (p: BlameProgress) => void,
    signal?: AbortSignal,
  ): Promise<BlameResult> {
    return withAuthRequired(repoId, () => blame(repoId, ref, path, { onProgress, signal }));
  },

  /** The commit-graph's size once the writes scheduled so far are done (the benchmark's history cells). */
  commitGraphStatus(repoId: string): Promise<CommitGraphStatus> {
    return commitGraphStatus(repoId);
  },

  /** `git log base..head` and `git diff --name-status base...head`, from commits and trees alone. */
  compare(repoId: string, base: string, head: string, signal?: AbortSignal): Promise<Comparison> {
    return compareRefs(repoId, base, head, {}, { signal });
  },

  /** Updates the working tree to `ref`, fetching the blobs it lacks in overlapping batches. */
  checkout(
    repoId: string,
    ref: string,
    options?: CheckoutOptions,
    onProgress?: (p: CheckoutProgress) => void,
    signal?: AbortSignal,
  ): Promise<CheckoutResult> {
    return withRepoLock(
      repoId,
      `checkout of ${ref}`,
      () => withAuthRequired(repoId, () => checkout(repoId, ref, options, { onProgress, signal })),
      {
        signal,
        onWait: (w) => onProgress?.({ phase: 'waiting-for-lock', what: w.what }),
      },
    );
  },

  /** One file of a commit, without a checkout; fetches just its blob when it is missing. */
  readFile(
    repoId: string,
    ref: string,
    path: string,
    onProgress?: (p: BlobFetchProgress) => void,
    signal?: AbortSignal,
  ): Promise<FileContent> {
    return withAuthRequired(repoId, () => readFile(repoId, ref, path, { onProgress, signal }));
  },

  /**
   * One file or folder of a remote repository without a clone: the ref, the commit at depth 1, the trees
   * along the path and the one blob, each kept for the next read of the same URL. No token: public only.
   */
  readFileMinimal(
    url: string,
    ref: string,
    path: string,
    options?: ReadMinimalOptions,
    onProgress?: (p: MinimalProgress) => void,
    signal?: AbortSignal,
  ): Promise<MinimalRead> {
    return readFileMinimal(url, ref, path, options, { onProgress, signal });
  },

  /** How many of a commit's blobs are stored, against how many its tree names. */
  presence(repoId: string, ref: string): Promise<Presence> {
    return presence(repoId, ref);
  },

  /** The files that changed between two commits, from trees alone (`from` null: the first parent). */
  diffCommits(repoId: string, from: string | null, to: string): Promise<CommitDiff> {
    return diffCommits(repoId, from, to);
  },

  /** The hunks of one changed file; its two blobs are fetched only now. */
  diffFile(
    repoId: string,
    oldOid: string | null,
    newOid: string | null,
    signal?: AbortSignal,
  ): Promise<FileDiff> {
    return withAuthRequired(repoId, () => diffFile(repoId, oldOid, newOid, { signal }));
  },

  // Writing: the working tree, staging, commits, branches and push. Each checks out HEAD first when the
  // repo has no working tree yet.

  /** Changed paths: the index against HEAD and the working files against the index. */
  status(repoId: string): Promise<WorktreeStatus> {
    // It checks out HEAD first when there is no working tree yet: a write.
    return withRepoLock(repoId, 'reading the working tree', () => status(repoId));
  },

  stage(repoId: string, paths: string[]): Promise<void> {
    return withRepoLock(repoId, 'staging', () => stage(repoId, paths));
  },

  unstage(repoId: string, paths: string[]): Promise<void> {
    return withRepoLock(repoId, 'unstaging', () => unstage(repoId, paths));
  },

  /** The staged change of one file (HEAD against the index). */
  stagedDiff(repoId: string, path: string, signal?: AbortSignal): Promise<FileDiff> {
    return withRepoLock(repoId, 'reading the working tree', () => stagedDiff(repoId, path, { signal }), {
      signal,
    });
  },

  readWorktreeFile(repoId: string, path: string): Promise<Uint8Array> {
    return withRepoLock(repoId, 'reading the working tree', () => readWorktreeFile(repoId, path));
  },

  writeWorktreeFile(repoId: string, path: string, content: string | Uint8Array): Promise<void> {
    return withRepoLock(repoId, `saving ${path}`, () => writeWorktreeFile(repoId, path, content));
  },

  renameWorktreeFile(repoId: string, from: string, to: string): Promise<void> {
    return withRepoLock(repoId, `renaming ${from}`, () => renameWorktreeFile(repoId, from, to));
  },

  deleteWorktreeFile(repoId: string, path: string): Promise<void> {
    return withRepoLock(repoId, `deleting ${path}`, () => deleteWorktreeFile(repoId, path));
  },

  commit(repoId: string, options: CommitOptions): Promise<CommitResult> {
    return withRepoLock(repoId, 'commit', () => commit(repoId, options));
  },

  /** `git merge --abort` for a merge a conflicting pull left in progress. */
  abortMerge(repoId: string): Promise<void> {
    return withRepoLock(repoId, 'aborting the merge', () => abortMerge(repoId));
  },

  createBranch(repoId: string, name: string, start?: string): Promise<string> {
    return withRepoLock(repoId, `creating branch ${name}`, () => createBranch(repoId, name, start));
  },

  deleteBranch(repoId: string, name: string): Promise<void> {
    return withRepoLock(repoId, `deleting branch ${name}`, () => deleteBranch(repoId, name));
  },

  /** Sends the branch's new commits through receive-pack; never fetches a blob. */
  push(
    repoId: string,
    options?: PushOptions,
    onProgress?: (p: PushProgress) => void,
    signal?: AbortSignal,
  ): Promise<PushResult> {
    // A 401 is AUTH_REQUIRED, as for a fetch: the UI asks for a token and pushes again (the server took
    // nothing, having refused the request).
    return withRepoLock(
      repoId,
      'push',
      () => withAuthRequired(repoId, () => push(repoId, options, { onProgress, signal })),
      { signal },
    );
  },
};

export type GitApi = typeof api;
