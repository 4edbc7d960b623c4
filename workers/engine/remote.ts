// What crosses between exposeEngine (worker.ts, in the worker) and wrapEngine (client.ts, on the page): one
// comlink surface per endpoint, nothing registered globally. A call names its target (the engine, or a
// repo by id), its method and its arguments; progress crosses as a comlink proxy of the page's callback,
// cancellation as a MessagePort of its own, and the outcome comes back as a value or a serialized error
// (errors.ts), never as comlink's own thrown value, so each error keeps its class and code.

import type { SerializedError } from './errors.ts';
import type { Engine, Repo } from './types.ts';

/** The engine's methods that cross (repo() and close() are the adapter's own). */
export const ENGINE_METHODS = Object.freeze([
  'clone',
  'readFileMinimal',
  'listRepos',
  'startupRepair',
  'repoEvents',
  'warmUp',
] as const satisfies readonly (keyof Engine)[]);

/** A repo's methods that cross (dispose() is the adapter's own). */
export const REPO_METHODS = Object.freeze([
  'fetch',
  'fillHistory',
  'pull',
  'push',
  'setCredentials',
  'delete',
  'listRefs',
  'log',
  'readCommit',
  'readTree',
  'lastCommits',
  'listPaths',
  'fileHistory',
  'blame',
  'commitGraphStatus',
  'compare',
  'checkout',
  'readFile',
  'presence',
  'diffCommits',
  'diffFile',
  'status',
  'stage',
  'unstage',
  'stagedDiff',
  'readWorktreeFile',
  'writeWorktreeFile',
  'renameWorktreeFile',
  'deleteWorktreeFile',
  'commit',
  'abortMerge',
  'createBranch',
  'deleteBranch',
] as const satisfies readonly (keyof Repo)[]);

export type EngineMethod = (typeof ENGINE_METHODS)[number];
export type RepoMethod = (typeof REPO_METHODS)[number];

// Every method of Engine and Repo crosses, but for the adapter's own: a method added to either interface
// and not to the lists above fails to compile here.
type Covered<T, Listed, Own> =
  Exclude<keyof T, Listed | Own> extends never ? true : Exclude<keyof T, Listed | Own>;
export const ENGINE_COVERED: Covered<Engine, EngineMethod, 'repo' | 'close'> = true;
export const REPO_COVERED: Covered<Repo, RepoMethod, 'id' | 'dispose'> = true;

export type Outcome = { ok: true; value: unknown } | { ok: false; error: SerializedError };

/** The surface exposeEngine puts on the endpoint. */
export interface EngineEndpoint {
  call(
    /** null for the engine, else the repo's id. */
    repoId: string | null,
    method: string,
    args: unknown,
    /** A comlink proxy of the page's onProgress. */
    progress: ((p: unknown) => unknown) | undefined,
    /** The port on which the page says `abort`; the worker says `settled` on it when the call is over. */
    signal: MessagePort | undefined,
  ): Promise<Outcome>;
  dispose(repoId: string): Promise<void>;
  /** Closes the engine in the worker (Engine.close). */
  close(): Promise<void>;
}

/** Sent by the page on a call's signal port when its AbortSignal fires. */
export const ABORT = 'abort';
/** Sent by the worker on that port once the call settled: both sides then close their port. */
export const SETTLED = 'settled';

/**
 * The operation a message posted to the engine's worker calls (`listRepos`, or `repo.readFile` for a repo's),
 * or null for any other message: comlink posts each `call` as an APPLY message with its arguments as raw
 * values. For pages that record what crosses the boundary: the bench page imports it, e2e/startup.spec.ts
 * puts its source (`toString()`) in an init script, so it refers to nothing outside itself.
 */
export function engineCallName(message: unknown): string | null {
  const m = message as { type?: string; path?: unknown; argumentList?: { value?: unknown }[] } | null;
  if (m?.type !== 'APPLY' || !Array.isArray(m.path) || m.path.join('.') !== 'call') return null;
  const [repoId, method] = (m.argumentList ?? []).map((a) => a?.value);
  if (typeof method !== 'string') return null;
  return repoId ? `repo.${method}` : method;
}
