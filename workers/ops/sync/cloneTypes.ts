// What a clone takes and gives, apart from clone.ts so that cloneV1.ts (which clone.ts calls) can share
// the types without an import cycle.

import type { HttpAuth } from '../../transport/gitHttp.ts';
import type { CloneLimits } from './cloneLimits.ts';

/**
 * The partial-clone filter (partial-clone: `filter` spec): `blob:none` leaves file contents on the server,
 * fetched when read; `tree:0` leaves the trees too.
 */
export type CloneFilter = 'blob:none' | 'tree:0';

/** What to clone and how. */
export interface CloneOptions {
  /** The repository's smart-HTTP URL (`https://host/owner/repo.git`); INVALID_URL when it is not one. */
  url: string;
  /** Branch, tag or commit id to check out; the remote's HEAD when absent. */
  ref?: string;
  /** `blob:none` unless told otherwise; null clones everything. */
  filter?: CloneFilter | null;
  /**
   * Commits of history to fetch from each ref (`git clone --depth`), 1 or more; all when absent. 0, a
   * negative or a fraction is INVALID_INPUT, before any request, as git clone refuses them.
   */
  depth?: number;
  /**
   * Only the branch `ref` names (or the remote's HEAD branch), as `git clone --single-branch`: of the tags,
   * those on what it fetches come along (include-tag), as git keeps them. Default: true with `depth`, as
   * `git clone --depth` implies `--single-branch`; false otherwise.
   */
  singleBranch?: boolean;
  /** Also fetch the tags (refs/tags/*; with `singleBranch`, those on the branch's history). Default true. */
  tags?: boolean;
  /** A CORS proxy to reach the host through (the URL without its scheme is appended); EngineOptions' by default. */
  corsProxy?: string;
  /**
   * Used when a direct request fails the way a CORS refusal does (the browser hides the reason): the clone
   * is retried through this proxy and the result says so in a warning.
   */
  fallbackCorsProxy?: string;
  /** Credentials for a private repository; refused over plain http but to this machine (INSECURE_TRANSPORT). */
  auth?: HttpAuth;
  /** Keep `auth` in this browser's storage for later fetches; otherwise it is kept for this session only. */
  rememberCredentials?: boolean;
  /** Caps on what the server may make the clone cost (response and object sizes); defaults where absent. */
  limits?: Partial<CloneLimits>;
  /**
   * Open first, fill in behind: fetch only the commit `ref` (or HEAD) names, at depth 1, without blobs,
   * and leave the rest of the history, branches and tags to `fillHistory`. The config and the record are a
   * normal clone's, with `historyFill` pending. Ignored (a normal clone) with `depth`, `singleBranch`, a
   * filter other than blob:none, or a server without `shallow` or `filter`.
   */
  firstView?: boolean;
}

/** What a clone tells onProgress, in the order of its phases (`retrying` may come at any point). */
export type CloneProgress =
  | {
      /** Asking the server what it has (info/refs, ls-refs). */
      phase: 'connecting';
    }
  | {
      /** The server's own progress lines (sideband 2), while it counts and compresses objects. */
      phase: 'remote';
      /** One line of the server's text (`Counting objects:  50% (5/10)`), without its line end. */
      text: string;
      /** The count the line reports done, when it has one. */
      loaded?: number;
      /** The count the line reports in all, when it has one. */
      total?: number;
    }
  | {
      /** The pack arriving. */
      phase: 'receiving';
      /** Bytes of the response received so far. */
      bytes: number;
      /** Objects of the pack parsed so far. */
      objects: number;
      /** Objects the pack's header announces. */
      totalObjects: number;
    }
  | {
      /** Deltas whose base came after them being resolved, after the pack arrived. */
      phase: 'resolving';
      /** Deltas resolved so far. */
      resolved: number;
      /** Deltas left to resolve when this phase began. */
      total: number;
    }
  | {
      /** The git directory being stored. */
      phase: 'writing';
    }
  | {
      /** A request failed in a way worth repeating (retryPolicy.ts) and will be sent again. */
      phase: 'retrying';
      /** Says when, for people: "retrying in 2 s…". */
      text: string;
      /** The attempt about to be made, from 2. */
      attempt: number;
      /** How many attempts are allowed in all (RetryPolicy.attempts). */
      attempts: number;
      /** Milliseconds until it is sent again. */
      delayMs: number;
    };

/** A remote ref that was cloned. */
export interface ClonedRef {
  /** Its full name (`HEAD`, `refs/heads/main`, `refs/tags/v1`). */
  name: string;
  /** The object it points at: a commit, or a tag object for an annotated tag. */
  oid: string;
  /** For an annotated tag, the commit it points at (ls-refs `peel`). */
  peeled?: string;
}

/** What a clone stored and what it cost. */
export interface CloneResult {
  /** The new repo's id: `engine.repo(repoId)` opens it. */
  repoId: string;
  /** What HEAD was set to. */
  head: {
    /** The branch checked out (`main`), or null for a detached HEAD (a tag or commit was asked for). */
    branch: string | null;
    /** The commit HEAD points at. */
    oid: string;
  };
  /** The remote refs that were cloned, as `git ls-remote` names them (HEAD, refs/heads/*, refs/tags/*). */
  refs: ClonedRef[];
  /** How many objects of each type the pack held (with a filter, `blob` is 0). */
  objects: {
    /** Commits received. */
    commit: number;
    /** Trees received. */
    tree: number;
    /** Blobs received. */
    blob: number;
    /** Annotated tag objects received. */
    tag: number;
  };
  /** Bytes the server sent, over every request (after HTTP decompression). */
  bytesReceived: number;
  /** HTTP requests made, retries included. */
  requests: number;
  /** The git protocol version spoken: 2, or 1 for a server without v2 (no filter then). */
  protocol: 1 | 2;
  /** The filter the clone was made with (`blob:none`), or null when it holds every object. */
  filter: string | null;
  /** True when only the first view was fetched: the history is still to come (`fillHistory`). */
  historyFillPending: boolean;
  /** What the clone did differently than asked, for people (a filter the server refused, a proxy used). */
  warnings: string[];
}
