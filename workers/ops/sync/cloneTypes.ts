// What a clone takes and gives, apart from clone.ts so that cloneV1.ts (which clone.ts calls) can share
// the types without an import cycle.

import type { HttpAuth } from '../../transport/gitHttp.ts';
import type { CloneLimits } from './cloneLimits.ts';

export type CloneFilter = 'blob:none' | 'tree:0';

export interface CloneOptions {
  url: string;
  /** Branch, tag or commit id to check out; the remote's HEAD when absent. */
  ref?: string;
  /** `blob:none` unless told otherwise; null clones everything. */
  filter?: CloneFilter | null;
  depth?: number;
  singleBranch?: boolean;
  tags?: boolean;
  corsProxy?: string;
  /**
   * Used when a direct request fails the way a CORS refusal does (the browser hides the reason): the clone
   * is retried through this proxy and the result says so in a warning.
   */
  fallbackCorsProxy?: string;
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

export type CloneProgress =
  | { phase: 'connecting' }
  | { phase: 'remote'; text: string; loaded?: number; total?: number }
  | { phase: 'receiving'; bytes: number; objects: number; totalObjects: number }
  | { phase: 'resolving'; resolved: number; total: number }
  | { phase: 'writing' }
  /** A request failed in a way worth repeating (retryPolicy.ts); `text` says when: "retrying in 2 s…". */
  | { phase: 'retrying'; text: string; attempt: number; attempts: number; delayMs: number };

export interface ClonedRef {
  name: string;
  oid: string;
  peeled?: string;
}

export interface CloneResult {
  repoId: string;
  head: { branch: string | null; oid: string };
  /** The remote refs that were cloned, as `git ls-remote` names them (HEAD, refs/heads/*, refs/tags/*). */
  refs: ClonedRef[];
  objects: { commit: number; tree: number; blob: number; tag: number };
  bytesReceived: number;
  requests: number;
  protocol: 1 | 2;
  filter: string | null;
  /** True when only the first view was fetched: the history is still to come (`fillHistory`). */
  historyFillPending: boolean;
  warnings: string[];
}
