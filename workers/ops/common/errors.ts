import { show } from '../../pack/showName.ts';
import type { TreeCheck } from '../../pack/treeCheck.ts';
import { StoreError } from '../../store/errors.ts';

/** Every code an OperationError carries; the type below is made from it, so the two cannot drift apart. */
export const OPERATION_ERROR_CODES = Object.freeze([
  'EMPTY_REPOSITORY',
  'REF_NOT_FOUND',
  'NOT_GIT',
  'ABORTED',
  'REPO_NOT_FOUND',
  'PATH_NOT_FOUND',
  // The path names a submodule (a gitlink, mode 160000): its content is another repository, not a blob.
  'IS_SUBMODULE',
  // A caller passed something that cannot be an object id.
  'INVALID_OBJECT_ID',
  // A checkout would overwrite or delete local changes; WorktreeDirtyError names the files.
  'WORKTREE_DIRTY',
  // The server's repository uses object ids Blobless cannot hash (SHA-256).
  'UNSUPPORTED_OBJECT_FORMAT',
  // A tree git would refuse (a ".git" entry, a link out of the working tree…); HostileTreeError says which.
  'HOSTILE_TREE',
  // The server named HEAD's branch with a name git refuses (`refs/heads/../../config`): nothing is cloned.
  'HOSTILE_REF_NAME',
  // The server speaks only protocol v0/v1, and the operation needs v2 (the minimal fetch, a fetch).
  'UNSUPPORTED_PROTOCOL',
  // A path given for the working tree leaves it, names `.git`, or is empty.
  'INVALID_PATH',
  // A commit message, author, branch name or other argument that git would refuse.
  'INVALID_INPUT',
  // Nothing is staged: the commit would record the same tree as HEAD.
  'NOTHING_TO_COMMIT',
  // A merge's commit asked for while files still have conflicts (unmerged stages in the index).
  'UNRESOLVED_CONFLICTS',
  // A merge abort asked for when no merge is in progress (no MERGE_HEAD).
  'NO_MERGE',
  'BRANCH_EXISTS',
  // An operation that needs a branch (commit's target, push's source, pull) found HEAD detached, or the reverse.
  'DETACHED_HEAD',
  // The remote has commits the local branch lacks: fetch and merge (pull) first. PushRejectedError.
  'PUSH_NON_FAST_FORWARD',
  // The server refused the update for another reason (a hook, a protected branch). PushRejectedError.
  'PUSH_REJECTED',
  // The server does not accept pushes from us (403 on receive-pack).
  'PUSH_FORBIDDEN',
  // The server's answer to a push broke off (or came garbled) after the server received it: it may have
  // applied it. The remote-tracking ref is left as it was; a fetch, or pushing again, tells.
  'PUSH_OUTCOME_UNKNOWN',
  // The server asked for credentials (401): AuthRequiredError says for which repo and host.
  'AUTH_REQUIRED',
  // A fetch that received without the lock found `shallow` changed by another writer: nothing stored.
  'FETCH_STALE',
  // A shallow repo's boundary commit: its parent (needed for its diff) has not been fetched yet.
  'NOT_FETCHED_YET',
  // A pull found no common history between the branch and its upstream.
  'UNRELATED_HISTORIES',
  // A pull whose branch and upstream have more than one merge base (a criss-cross history): git merges
  // the bases first (its recursive/ort strategy); isomorphic-git's merge takes one base only.
  'MULTIPLE_MERGE_BASES',
  // A pull whose sides changed a path in a way isomorphic-git's merge cannot merge (a file against a folder,
  // a submodule both moved) or would merge wrongly (a link, binary content, text not UTF-8 or with lines
  // ended by a CR alone, U+2028 or U+2029), where git merges or reports a conflict: the message names the
  // paths and why.
  'MERGE_NOT_SUPPORTED',
  // Not the input's fault: a bug, or a failure of a library below (its message says which).
  'INTERNAL',
] as const);

export type OperationErrorCode = (typeof OPERATION_ERROR_CODES)[number];

/** The codes of MissingObjectError. */
export const MISSING_OBJECT_ERROR_CODES = Object.freeze(['MISSING_OBJECT', 'OFFLINE'] as const);

/**
 * An operation refused its input or the repository's state, or was cancelled (ABORTED): the message says
 * what to do. Nothing stored was changed. Subclasses carry more for some codes (WorktreeDirtyError,
 * HostileTreeError, PushRejectedError, AuthRequiredError).
 */
export class OperationError extends Error {
  /** The class's name, kept across the worker boundary: `OperationError` or the subclass's. */
  override readonly name: string = 'OperationError';
  constructor(
    /** What went wrong, for programs to branch on (OPERATION_ERROR_CODES); the message is for people. */
    readonly code: OperationErrorCode,
    message: string,
  ) {
    super(message);
  }
}

/**
 * The repo was deleted under a background task (maintenance waits for the lock, and a delete may come first):
 * the task has nothing left to do, which is not a failure to report.
 */
export function isRepoGone(err: unknown): boolean {
  return (err instanceof OperationError || err instanceof StoreError) && err.code === 'REPO_NOT_FOUND';
}

/** A checkout stopped before writing anything because it would lose changes made in the working tree. */
export class WorktreeDirtyError extends OperationError {
  /** Always `WorktreeDirtyError`; its code is always WORKTREE_DIRTY. */
  override readonly name = 'WorktreeDirtyError';
  constructor(
    /** Every working-tree path whose changes the checkout would have lost, from the repository's root. */
    readonly paths: string[],
  ) {
    const shown = paths.slice(0, 10).join(', ');
    const more = paths.length > 10 ? ` and ${paths.length - 10} more` : '';
    super(
      'WORKTREE_DIRTY',
      `Your changes to ${shown}${more} would be overwritten by this checkout. Commit or discard them, or check out with force to throw them away.`,
    );
  }
}

/**
 * A tree of the repository fails one of git's checks (pack/treeCheck.ts): reading or writing it could put
 * files where they must never go. `path` is the entry (or, for a tree that does not parse, the folder),
 * `check` git's name for the check. Nothing was written.
 */
export class HostileTreeError extends OperationError {
  /** Always `HostileTreeError`; its code is always HOSTILE_TREE. */
  override readonly name = 'HostileTreeError';
  constructor(
    /** The refused entry's path from the repository's root (the folder's, for a tree that does not parse). */
    readonly path: string,
    /** The check that failed, named after git fsck's message ids (`HAS_DOTGIT`, `FULL_PATHNAME`, …). */
    readonly check: TreeCheck,
    detail: string,
  ) {
    super(
      'HOSTILE_TREE',
      `The repository holds a tree git refuses, at ${show(shortened(path))}: ${detail.replace(/\.\s*$/, '')} (${check}). Blobless does not read or check out such a tree; nothing was changed.`,
    );
  }
}

/** A path of a hostile tree can be thousands of folders long: its message shows both ends. */
function shortened(path: string): string {
  return path.length <= 160 ? path : `${path.slice(0, 80)}…${path.slice(-60)}`;
}

/**
 * A push the remote (or, for a non-fast-forward seen before sending, we) refused. Nothing local changed:
 * the branch, its commits and the working tree are as they were. `remoteMessage` is the server's reason.
 */
export class PushRejectedError extends OperationError {
  /** Always `PushRejectedError`; its code is PUSH_NON_FAST_FORWARD or PUSH_REJECTED. */
  override readonly name = 'PushRejectedError';
  constructor(
    code: 'PUSH_NON_FAST_FORWARD' | 'PUSH_REJECTED',
    /** The remote ref the push was to update (`refs/heads/main`). */
    readonly ref: string,
    message: string,
    /** The server's reason, verbatim (a hook's output, `protected branch`); absent when we refused first. */
    readonly remoteMessage?: string,
  ) {
    super(code, message);
  }
}

export function abortedError(): OperationError {
  return new OperationError('ABORTED', 'The operation was cancelled; nothing of it was kept.');
}

export function throwIfAborted(signal?: AbortSignal): void {
  if (signal?.aborted) throw abortedError();
}

/**
 * A blob a partial clone left on the server could not be fetched: the network or the server failed, or the
 * server does not have it. `reason` is the underlying failure's message (a TransportError's, say), `cause`
 * the error itself; `path` names the file it was needed for, when the caller knows it.
 */
export class MissingObjectError extends Error {
  /** Always `MissingObjectError`. */
  override readonly name = 'MissingObjectError';
  /**
   * OFFLINE when the device had no network, so nothing was asked of the server: the UI says "offline"
   * rather than "missing", and the person knows reconnecting is all it takes.
   */
  readonly code: (typeof MISSING_OBJECT_ERROR_CODES)[number];
  /** The id of the blob that could not be fetched. */
  readonly oid: string;
  /** The file it was needed for, from the repository's root, when the caller knew it. */
  readonly path?: string;
  /** The underlying failure's message (a TransportError's, say), without advice. */
  readonly reason: string;
  /** The server answered, but without the object: retrying will not help. */
  readonly notOnServer: boolean;
  /** How many other wanted objects failed along with this one. */
  readonly others: number;
  /** What to do about it, when the operation knew better than the default advice of the message. */
  readonly advice?: string;

  constructor(
    oid: string,
    reason: string,
    options: {
      path?: string;
      notOnServer?: boolean;
      /** The device was offline: no request was sent. */
      offline?: boolean;
      others?: number;
      /** What to do about it, when not the default (retry online, or nothing for an object not on the server). */
      advice?: string;
      cause?: unknown;
    } = {},
  ) {
    const short = `${oid.slice(0, 10)}…`;
    const what = options.path ? `${options.path} (blob ${short})` : `Blob ${short}`;
    const more = options.others ? ` (and ${options.others} more)` : '';
    const advice =
      options.advice ??
      (options.notOnServer
        ? 'It may have been removed from the remote repository.'
        : 'Connect to the network and try again.');
    super(
      `${what}${more} is not stored in this browser and could not be fetched: ${reason.replace(/\.\s*$/, '')}.${advice ? ` ${advice}` : ''}`,
      options.cause === undefined ? undefined : { cause: options.cause },
    );
    this.code = options.offline ? 'OFFLINE' : 'MISSING_OBJECT';
    this.oid = oid;
    this.path = options.path;
    this.reason = reason;
    this.notOnServer = options.notOnServer ?? false;
    this.others = options.others ?? 0;
    this.advice = options.advice;
  }

  /** The same failure, naming the file the blob was needed for. */
  withPath(path: string): MissingObjectError {
    return new MissingObjectError(this.oid, this.reason, {
      path,
      notOnServer: this.notOnServer,
      offline: this.code === 'OFFLINE',
      others: this.others,
      advice: this.advice,
      cause: this.cause,
    });
  }
}

/**
 * The server answered 401: the repo needs a token (none is at hand, say after a reload forgot a session's)
 * or refused the one given. The UI asks for one, hands it to `setCredentials`, and runs the operation again.
 */
export class AuthRequiredError extends OperationError {
  /** Always `AuthRequiredError`; its code is always AUTH_REQUIRED. */
  override readonly name = 'AuthRequiredError';
  constructor(
    /** The repo whose remote asked; give the token to `engine.repo(repoId).setCredentials`. */
    readonly repoId: string,
    /** The remote's host name, to show when asking for the token. */
    readonly host: string,
    /** Credentials were sent and refused, rather than missing. */
    readonly rejected: boolean,
    /** The CORS proxy the repository is reached through: a token goes through it only with consent. */
    readonly proxy?: string,
  ) {
    super(
      'AUTH_REQUIRED',
      rejected
        ? `${host} refused the token for this repository. Give another one to continue.`
        : `${host} needs a token for this repository (it is not kept after a reload unless you ask). Give it to continue.`,
    );
  }
}
