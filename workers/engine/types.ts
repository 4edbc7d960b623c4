// The engine's public shape: what createEngine returns, what wrapEngine gives the page (the same
// interfaces: every operation is `op(args, { onProgress, signal })` and returns a promise, so nothing in
// them needs to change to cross a worker boundary), and every option, progress and result type.

import type { EngineLimits } from '../ops/common/engineContext.ts';
import type { CommitGraphStatus } from '../ops/maintenance/commitGraphUpdate.ts';
import type { BlameProgress, BlameResult } from '../ops/read/blame.ts';
import type { Comparison } from '../ops/read/compare.ts';
import type { CommitDiff, FileDiff } from '../ops/read/diff.ts';
import type { FileHistoryPage } from '../ops/read/fileHistory.ts';
import type { CommitSummary, LogPage } from '../ops/read/history.ts';
import type { LastCommits } from '../ops/read/lastCommits.ts';
import type { Presence } from '../ops/read/presence.ts';
import type { FileContent } from '../ops/read/readFile.ts';
import type { MinimalProgress, MinimalRead, MinimalStrategy } from '../ops/read/readFileMinimal.ts';
import type { RefList } from '../ops/read/refs.ts';
import type { TreeListing } from '../ops/read/tree.ts';
import type { CloneOptions, CloneProgress, CloneResult } from '../ops/sync/cloneTypes.ts';
import type { FetchOptions, FetchProgress, FetchResult } from '../ops/sync/fetch.ts';
import type { FillProgress, FillResult } from '../ops/sync/historyFill.ts';
import type { BlobFetchProgress } from '../ops/sync/lazyBlobs.ts';
import type { PushOptions, PushProgress, PushResult } from '../ops/sync/push.ts';
import type { CheckoutOptions, CheckoutProgress, CheckoutResult } from '../ops/worktree/checkout.ts';
import type { CommitOptions, CommitResult } from '../ops/worktree/commit.ts';
import type { PullOptions, PullProgress, PullResult } from '../ops/worktree/pull.ts';
import type { WorktreeStatus } from '../ops/worktree/workingTree.ts';
import type { RepoSummary } from '../store/credentials.ts';
import type { RepairReport } from '../store/repair.ts';
import type { Storage } from '../store/storage.ts';
import type { HttpAuth } from '../transport/gitHttp.ts';
import type { RetryPolicy } from '../transport/retryPolicy.ts';

export type { EngineLimits } from '../ops/common/engineContext.ts';
export type { CommitGraphStatus } from '../ops/maintenance/commitGraphUpdate.ts';
export type { BlameLine, BlameProgress, BlameResult } from '../ops/read/blame.ts';
export type { Comparison } from '../ops/read/compare.ts';
export type { ChangeStatus, CommitDiff, DiffHunk, DiffLine, FileChange, FileDiff } from '../ops/read/diff.ts';
export type { FileHistoryEntry, FileHistoryPage } from '../ops/read/fileHistory.ts';
export type { CommitSummary, LogPage, Signature } from '../ops/read/history.ts';
export type { EntryCommit, LastCommits } from '../ops/read/lastCommits.ts';
export type { Presence } from '../ops/read/presence.ts';
export type { FileContent } from '../ops/read/readFile.ts';
export type {
  MinimalEntry,
  MinimalProgress,
  MinimalRead,
  MinimalStrategy,
} from '../ops/read/readFileMinimal.ts';
export type { RefList } from '../ops/read/refs.ts';
export type { EntryKind, TreeEntry, TreeListing } from '../ops/read/tree.ts';
export type {
  ClonedRef,
  CloneFilter,
  CloneOptions,
  CloneProgress,
  CloneResult,
} from '../ops/sync/cloneTypes.ts';
export type { FetchOptions, FetchProgress, FetchResult, FetchTags, RefUpdate } from '../ops/sync/fetch.ts';
export type { FillProgress, FillResult } from '../ops/sync/historyFill.ts';
export type { BlobFetchProgress } from '../ops/sync/lazyBlobs.ts';
export type { PushOptions, PushProgress, PushResult } from '../ops/sync/push.ts';
export type { CheckoutOptions, CheckoutProgress, CheckoutResult } from '../ops/worktree/checkout.ts';
export type { Author, CommitOptions, CommitResult } from '../ops/worktree/commit.ts';
export type { MergeState } from '../ops/worktree/mergeState.ts';
export type { PullOptions, PullProgress, PullResult } from '../ops/worktree/pull.ts';
export type { StatusEntry, WorktreeStatus } from '../ops/worktree/workingTree.ts';
// Named by the types above, so exported for callers that spell them out.
export type { GitObjectType } from '../pack/objectHash.ts';
export type { PackLimits, TreeLimits } from '../pack/packLimits.ts';
export type { TreeCheck } from '../pack/treeCheck.ts';
export type { RepoSummary } from '../store/credentials.ts';
export type { HistoryFillState, RepoRecord } from '../store/registry.ts';
export type { RepairReport } from '../store/repair.ts';
export type { RepoEvent } from '../store/repoEvents.ts';
export type {
  FileRecords,
  FsMutex,
  KeyValueStore,
  LockManagerLike,
  LockRequestOptions,
  RecordKey,
  Storage,
} from '../store/storage.ts';
export type { TransportErrorDetail } from '../transport/errors.ts';
export type { HttpAuth } from '../transport/gitHttp.ts';
export type { RetryPolicy } from '../transport/retryPolicy.ts';
export type { WireLimits } from '../wire/wireLimits.ts';

/** How createEngine sets the engine up; every field has a default. */
export interface EngineOptions {
  /** Where repositories are kept: IndexedDB (storage/indexedDb.ts) unless given, or memory (storage/memory.ts). */
  storage?: Storage;
  /**
   * Prefixes every database, lock and channel name (`<namespace>-repo-<id>`, `<namespace>-registry`,
   * `<namespace>-repos`) and the User Timing measures: two engines with different namespaces share nothing.
   * Default `blobless`.
   */
  namespace?: string;
  /** Caps on what a server may make an operation cost; the defaults where absent (docs/ARCHITECTURE.md). */
  limits?: Partial<EngineLimits>;
  /** The fetch every request goes through (a proxying or instrumented one); the global fetch by default. */
  fetch?: typeof fetch;
  /**
   * A CORS proxy for clone and readFileMinimal when their own arguments name none (`https://proxy.example/`;
   * the repository URL without its scheme is appended). A stored repo keeps the proxy it was cloned through.
   */
  corsProxy?: string;
  /** Changes to when requests are sent again (attempts, delays, the stall timeout). */
  retry?: Partial<RetryPolicy>;
  /** Names the engine in what it writes: `.git/description` ("Cloned by Blobless"). Default `Blobless`. */
  productName?: string;
  /** Author and committer of a merge made by pull when the call names none. Default `Blobless <blobless@localhost>`. */
  mergeAuthor?: {
    /** The name in the merge commit's author and committer lines. */
    name: string;
    /** The email in those lines. */
    email: string;
  };
  /** Bytes each pack's cache of read objects may hold before it is emptied (PACK_OBJECT_CACHE_BYTES). */
  packObjectCacheBytes?: number;
}

/** What every operation takes besides its arguments. */
export interface OperationHooks<P = never> {
  /** Told of progress as it happens; through wrapEngine, pass a plain function. */
  onProgress?: (progress: P) => void;
  /** Cancels: the operation ends in an error of code ABORTED, and keeps nothing half-written. */
  signal?: AbortSignal;
}

/** A write waits for another tab's (or this engine's) operation on the same repo; `what` it runs, once said. */
export type LockWaitProgress = {
  /** Sent once, when the wait starts; the operation's own progress follows once it runs. */
  phase: 'waiting-for-lock';
  /** What the operation holding the repo does (`fetching`), when it said; undefined otherwise. */
  what: string | undefined;
};

/** For operations that take no arguments. */
export type NoArgs = Record<string, never>;

/** What to clone and how: the URL, and the options of CloneOptions. */
export interface CloneArgs extends CloneOptions {}

/** What readFileMinimal reads: a remote repository's URL, a ref and a path. */
export interface ReadMinimalArgs {
  /** The repository's smart-HTTP URL (`https://host/owner/repo.git`; `.git` may be left out). */
  url: string;
  /** A branch, tag or full commit id; the remote's HEAD when empty or absent. */
  ref?: string;
  /** A file or folder; the root folder when empty or absent. */
  path?: string;
  /** A CORS proxy to reach the host through (the URL without its scheme is appended); EngineOptions' by default. */
  corsProxy?: string;
  /** How trees are asked for (readFileMinimal.ts MINIMAL_STRATEGY); for benchmarks. */
  strategy?: MinimalStrategy;
}

/** Which repos listRepos includes. */
export interface ListReposArgs {
  /** Also the repos made by readFileMinimal (few trees: the app's views do not open them). Default false. */
  includeMinimal?: boolean;
}

/** The BroadcastChannel on which the engines of this namespace say what they do to repos. */
export interface RepoEventsChannel {
  /** The BroadcastChannel's name: `new BroadcastChannel(channel)` receives the RepoEvent messages. */
  channel: string;
  /** This engine's id in those events: a page ignores its own engine's. */
  origin: string;
}

/**
 * What createEngine returns (and wrapEngine, through a worker): the operations that make or list repos, and
 * `repo(id)` for the rest. Errors are the classes of ERROR_CLASSES, each with an ErrorCode.
 */
export interface Engine {
  /** Clones into a new repo; on any failure nothing of it remains. */
  clone(args: CloneArgs, hooks?: OperationHooks<CloneProgress>): Promise<CloneResult>;
  /**
   * One file or folder of a remote repository without a clone: the ref, the commit at depth 1, the trees
   * along the path and the one blob, each kept for the next read of the same URL. No token: public only.
   */
  readFileMinimal(args: ReadMinimalArgs, hooks?: OperationHooks<MinimalProgress>): Promise<MinimalRead>;
  /** The stored repos, the one fetched last first. */
  /** Whether a token is kept, never the token: the page needs none, and a script injected there reads all it holds. */
  listRepos(args?: ListReposArgs, hooks?: OperationHooks): Promise<RepoSummary[]>;
  /**
   * What interrupted writes (a closed tab, a crash) left, put right: run once per engine; every call gets
   * the one report.
   */
  startupRepair(args?: NoArgs, hooks?: OperationHooks): Promise<RepairReport>;
  /** Where the engines of this namespace announce what they do to repos (store/repoEvents.ts). */
  repoEvents(): Promise<RepoEventsChannel>;
  /**
   * Warms the pack ingester and a clone's handling of refs up when a clone is likely, so the first clone
   * does not run them cold, after one HEAD request of the worker's own script (never a git host) that sets
   * its network path up; any operation that starts stops it. Resolves when done or stopped. `rounds` is the
   * bench's knob (docs/decisions/warm-up.md; 0 warms nothing); the app leaves it to the engine.
   */
  warmUp(args?: { rounds?: number }): Promise<'done' | 'stopped'>;
  /** A stored repo, by id: its operations. Cheap; the same object per id until disposed. */
  repo(id: string): Repo;
  /** Stores what is pending and frees everything this engine keeps: caches, file systems, credentials. */
  close(): Promise<void>;
}

/**
 * The operations of one stored repo, from `engine.repo(id)`. Each throws StoreError REPO_NOT_FOUND when the
 * repo is not stored, and OperationError ABORTED when its signal aborts; writes wait for the repo's lock.
 */
export interface Repo {
  /** The repo's id, as clone returned it in `repoId`. */
  readonly id: string;
  /** Brings new commits, branches and tags from the remote (a no-op costs two small requests). */
  fetch(args?: FetchOptions, hooks?: OperationHooks<FetchProgress | LockWaitProgress>): Promise<FetchResult>;
  /**
   * Brings the history, branches and tags of a first-view clone (its record has `historyFill`), in steps
   * each stored whole; a no-op for other repos, and when another tab is filling it (`busyElsewhere`).
   */
  fillHistory(
    args?: { depths?: readonly number[]; maxSteps?: number },
    hooks?: OperationHooks<FillProgress>,
  ): Promise<FillResult>;
  /** Fetches, then fast-forwards or merges the current branch; conflicts are reported, never half-applied. */
  pull(args?: PullOptions, hooks?: OperationHooks<PullProgress | LockWaitProgress>): Promise<PullResult>;
  /** Sends the branch's new commits through receive-pack; never fetches a blob. */
  push(args?: PushOptions, hooks?: OperationHooks<PushProgress | LockWaitProgress>): Promise<PushResult>;
  /**
   * A token for the repo, given again (after a reload, or when the old one was refused): for this engine's
   * life, and kept in storage only with `remember`. `auth.proxy` names the CORS proxy agreed to.
   */
  setCredentials(args: { auth: HttpAuth; remember?: boolean }, hooks?: OperationHooks): Promise<void>;
  /** Deletes the repo: its database and its record. */
  delete(args?: NoArgs, hooks?: OperationHooks<LockWaitProgress>): Promise<void>;
  /** Branches, remote branches and tags. */
  listRefs(args?: NoArgs, hooks?: OperationHooks): Promise<RefList>;
  /** One page of history from `ref`, newest first (`git rev-list`); the walk is kept for the next page. */
  log(args: { ref: string; limit?: number; skip?: number }, hooks?: OperationHooks): Promise<LogPage>;
  /** One commit by branch, tag or id, from the commit alone. Throws REF_NOT_FOUND for a ref not stored. */
  readCommit(args: { ref: string }, hooks?: OperationHooks): Promise<CommitSummary>;
  /** A folder of a commit (the root when `path` is empty), from trees alone. */
  readTree(args: { ref: string; path?: string }, hooks?: OperationHooks): Promise<TreeListing>;
  /** The last commit that changed each entry of a folder, from commits and trees. */
  lastCommits(args: { ref: string; path: string }, hooks?: OperationHooks): Promise<LastCommits>;
  /** Every file path of a commit, newline-separated, from trees alone. */
  listPaths(
    args: { ref: string },
    hooks?: OperationHooks,
  ): Promise<{
    /** The commit `ref` resolved to. */
    commit: string;
    /** Every file's path from the root, one per line, in git's tree order (one string: cheap to transfer). */
    paths: string;
  }>;
  /** One page of the commits that changed `path`, following renames (`git log --follow`). */
  fileHistory(
    args: { ref: string; path: string; limit?: number; skip?: number },
    hooks?: OperationHooks,
  ): Promise<FileHistoryPage>;
  /** `git blame`: the old versions' blobs are fetched in a few growing batches, not one by one. */
  blame(args: { ref: string; path: string }, hooks?: OperationHooks<BlameProgress>): Promise<BlameResult>;
  /** The commit-graph's size once the writes scheduled so far are done (the benchmark's history cells). */
  commitGraphStatus(args?: NoArgs, hooks?: OperationHooks): Promise<CommitGraphStatus>;
  /** `git log base..head` and `git diff --name-status base...head`, from commits and trees alone. */
  compare(args: { base: string; head: string }, hooks?: OperationHooks): Promise<Comparison>;
  /** Updates the working tree to `ref`, fetching the blobs it lacks in overlapping batches. */
  checkout(
    args: { ref: string } & CheckoutOptions,
    hooks?: OperationHooks<CheckoutProgress>,
  ): Promise<CheckoutResult>;
  /** One file of a commit, without a checkout; fetches just its blob when it is missing. */
  readFile(
    args: { ref: string; path: string },
    hooks?: OperationHooks<BlobFetchProgress>,
  ): Promise<FileContent>;
  /** How many of a commit's blobs are stored, against how many its tree names. */
  presence(args: { ref: string }, hooks?: OperationHooks): Promise<Presence>;
  /** The files that changed between two commits, from trees alone (`from` absent or null: the first parent). */
  diffCommits(args: { from?: string | null; to: string }, hooks?: OperationHooks): Promise<CommitDiff>;
  /** The hunks of one changed file (null: the side where it does not exist); its blobs are fetched now. */
  diffFile(
    args: { oldOid: string | null; newOid: string | null },
    hooks?: OperationHooks<BlobFetchProgress>,
  ): Promise<FileDiff>;
  /** Changed paths: the index against HEAD and the working files against the index. */
  status(args?: NoArgs, hooks?: OperationHooks<CheckoutProgress>): Promise<WorktreeStatus>;
  /** `git add` of each path (a deleted file's removal too); INVALID_PATH for a path outside the tree. */
  stage(args: { paths: string[] }, hooks?: OperationHooks<CheckoutProgress>): Promise<void>;
  /** `git restore --staged`: each path's index entry back to HEAD's; the working file is left alone. */
  unstage(args: { paths: string[] }, hooks?: OperationHooks<CheckoutProgress>): Promise<void>;
  /** The staged change of one file (HEAD against the index). */
  stagedDiff(args: { path: string }, hooks?: OperationHooks<CheckoutProgress>): Promise<FileDiff>;
  /** A working-tree file's bytes, as edited; PATH_NOT_FOUND when there is none. */
  readWorktreeFile(args: { path: string }, hooks?: OperationHooks<CheckoutProgress>): Promise<Uint8Array>;
  /** Writes a working-tree file (a string as UTF-8), making its folders; staged only by `stage`. */
  writeWorktreeFile(
    args: { path: string; content: string | Uint8Array },
    hooks?: OperationHooks<CheckoutProgress>,
  ): Promise<void>;
  /** Moves a working-tree file; PATH_NOT_FOUND when `from` is missing, INVALID_PATH when `to` exists. */
  renameWorktreeFile(
    args: { from: string; to: string },
    hooks?: OperationHooks<CheckoutProgress>,
  ): Promise<void>;
  /** Deletes a working-tree file (and the folders it leaves empty); PATH_NOT_FOUND when there is none. */
  deleteWorktreeFile(args: { path: string }, hooks?: OperationHooks<CheckoutProgress>): Promise<void>;
  /**
   * Commits what is staged, on the current branch (or a detached HEAD); during a merge, the merge commit.
   * Throws NOTHING_TO_COMMIT, UNRESOLVED_CONFLICTS while a merge has conflicts left, or INVALID_INPUT for an
   * empty message or an author git refuses.
   */
  commit(args: CommitOptions, hooks?: OperationHooks<CheckoutProgress>): Promise<CommitResult>;
  /** `git merge --abort` for a merge a conflicting pull left in progress. */
  abortMerge(args?: NoArgs, hooks?: OperationHooks<LockWaitProgress>): Promise<void>;
  /** Creates `refs/heads/<name>` at `start` (HEAD when absent); returns the commit id. */
  createBranch(
    args: { name: string; start?: string },
    hooks?: OperationHooks<LockWaitProgress>,
  ): Promise<string>;
  /** Deletes `refs/heads/<name>`; refuses the current branch (INVALID_INPUT) and a missing one (REF_NOT_FOUND). */
  deleteBranch(args: { name: string }, hooks?: OperationHooks<LockWaitProgress>): Promise<void>;
  /** Frees what the engine keeps of this repo between operations (caches, walks); they are rebuilt on use. */
  dispose(): void;
}
