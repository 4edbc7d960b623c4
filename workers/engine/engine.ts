// createEngine: one instance that owns everything an engine keeps (caches, in-flight fetches, locks held,
// credentials, the warm-up, repair's report), and the one calling convention, `op(args, { onProgress,
// signal })`, over the operations of ops/. The operations take the engine's context first (its parts are
// declared by the folders that keep them: MaintenanceContext, BlobContext, FillContext, HistoryContext,
// FileHistoryContext); this file is the only one that builds it.

import { withAuthRequired } from '../ops/common/authRequired.ts';
import type { EngineSettings } from '../ops/common/engineContext.ts';
import { throwIfAborted } from '../ops/common/errors.ts';
import { PACK_OBJECT_CACHE_BYTES } from '../ops/common/packObjectCache.ts';
import { RepoCaches } from '../ops/common/repoCaches.ts';
import { commitGraphStatus } from '../ops/maintenance/commitGraphUpdate.ts';
import { IngesterWarmUp } from '../ops/maintenance/ingesterWarmUp.ts';
import { MaintenanceState } from '../ops/maintenance/packMaintenance.ts';
import { blame } from '../ops/read/blame.ts';
import { compareRefs } from '../ops/read/compare.ts';
import { diffCommits, diffFile } from '../ops/read/diff.ts';
import { type FileHistoryContext, FileHistoryWalks, fileHistory } from '../ops/read/fileHistory.ts';
import { type HistoryContext, LogWalks, log, readCommit } from '../ops/read/history.ts';
import { lastCommits } from '../ops/read/lastCommits.ts';
import { presence } from '../ops/read/presence.ts';
import { readFile } from '../ops/read/readFile.ts';
import { readFileMinimal } from '../ops/read/readFileMinimal.ts';
import { listRefs } from '../ops/read/refs.ts';
import { readTree } from '../ops/read/tree.ts';
import { listPaths } from '../ops/read/treePaths.ts';
import { clone } from '../ops/sync/clone.ts';
import { fetchRepo } from '../ops/sync/fetch.ts';
import { cancelHistoryFill, type FillContext, fillHistory } from '../ops/sync/historyFill.ts';
import { BlobFetchState, cancelBlobFetches } from '../ops/sync/lazyBlobs.ts';
import { push } from '../ops/sync/push.ts';
import { warmUpRefs } from '../ops/sync/refsWarmUp.ts';
import { createBranch, deleteBranch } from '../ops/worktree/branches.ts';
import { checkout } from '../ops/worktree/checkout.ts';
import { commit } from '../ops/worktree/commit.ts';
import { pull } from '../ops/worktree/pull.ts';
import {
  abortMerge,
  deleteWorktreeFile,
  readWorktreeFile,
  renameWorktreeFile,
  stage,
  stagedDiff,
  status,
  unstage,
  writeWorktreeFile,
} from '../ops/worktree/workingTree.ts';
import { DEFAULT_PACK_LIMITS } from '../pack/packLimits.ts';
import { indexedDbStorage } from '../storage/indexedDb.ts';
import { repoSummary } from '../store/credentials.ts';
import { type RepairReport, repairStores } from '../store/repair.ts';
import type { LockWait } from '../store/repoLock.ts';
import { Store } from '../store/store.ts';
import { DEFAULT_WIRE_LIMITS } from '../wire/wireLimits.ts';
import type { Engine, EngineOptions, LockWaitProgress, OperationHooks, Repo } from './types.ts';

/** Everything the operations are given: the engine's storage, settings, and what each folder of ops keeps. */
export interface EngineContext extends FillContext, HistoryContext, FileHistoryContext {}

const DEFAULT_NAMESPACE = 'blobless';
const DEFAULT_PRODUCT_NAME = 'Blobless';

/** Repo methods that do not hold background work back: background themselves, or waiting for it. */
const BACKGROUND_REPO_OPS: ReadonlySet<string> = new Set(['fillHistory', 'commitGraphStatus', 'dispose']);

/** Where the engine keeps its context, for tests and benchmarks that look inside (engineContext below). */
const CONTEXT = Symbol('blobless engine context');

/** The settings the operations read, every default filled in. */
function settingsOf(options: EngineOptions, namespace: string): EngineSettings {
  const productName = options.productName ?? DEFAULT_PRODUCT_NAME;
  return Object.freeze({
    productName,
    mergeAuthor: Object.freeze(options.mergeAuthor ?? { name: productName, email: 'blobless@localhost' }),
    limits: Object.freeze({ ...DEFAULT_WIRE_LIMITS, ...DEFAULT_PACK_LIMITS, ...options.limits }),
    retry: Object.freeze({ ...options.retry }),
    fetch: options.fetch,
    packObjectCacheBytes: options.packObjectCacheBytes ?? PACK_OBJECT_CACHE_BYTES,
    timelinePrefix: `${namespace}:`,
  });
}

/** An engine: repositories stored in `options.storage` (IndexedDB by default), under `options.namespace`. */
export function createEngine(options: EngineOptions = {}): Engine {
  const namespace = options.namespace ?? DEFAULT_NAMESPACE;
  const store = new Store(options.storage ?? indexedDbStorage(), namespace);
  const ctx: EngineContext = {
    store,
    settings: settingsOf(options, namespace),
    repos: new RepoCaches(store.repoFs),
    maintenance: new MaintenanceState(),
    blobs: new BlobFetchState(),
    fills: new Map(),
    logWalks: new LogWalks(),
    fileWalks: new FileHistoryWalks(),
  };
  // Same origin, nothing sent to a git host: only the worker's network path is set up (ingesterWarmUp.ts).
  const ownScript: string | undefined = (globalThis as { location?: { href: string } }).location?.href;
  const warmUp = new IngesterWarmUp(
    ownScript === undefined
      ? undefined
      : (signal) => (ctx.settings.fetch ?? fetch)(ownScript, { method: 'HEAD', signal }),
    (signal) => warmUpRefs(signal),
  );
  let repairing: Promise<RepairReport> | undefined;
  const handles = new Map<string, Repo>();

  const { foreground } = ctx.maintenance;
  /**
   * Operations counted as what the person asked for while they run (foregroundActivity.ts), so that
   * background work (the commit-graph's steps) gives way to them: every function of `ops` but those named
   * in `background` (a repo's history fill, itself background, and commitGraphStatus, which waits for it).
   */
  const foregrounded = <T extends object>(ops: T, background: ReadonlySet<string> = new Set()): T => {
    const wrapped: Record<string, unknown> = {};
    for (const [name, value] of Object.entries(ops)) {
      wrapped[name] =
        typeof value === 'function' && !background.has(name)
          ? (...args: unknown[]) => foreground.track(() => (value as (...a: unknown[]) => unknown)(...args))
          : value;
    }
    return wrapped as T;
  };

  /** An operation begins: the page-load warm-up stops, so that it takes no time from it. */
  const begin = (signal?: AbortSignal) => {
    warmUp.stop();
    throwIfAborted(signal);
  };

  /** What a repo keeps between operations, forgotten (the history walks stopped at an old boundary, say). */
  const forgetWalks = (repoId: string) => {
    ctx.logWalks.forget(repoId);
    ctx.fileWalks.forget(repoId);
  };
  const forgetCaches = (repoId: string) => {
    forgetWalks(repoId);
    ctx.repos.forget(repoId);
    ctx.store.forgetRepo(repoId);
    ctx.blobs.bytesByRepo.delete(repoId);
  };

  /** Runs `fn` under the repo's write lock; a wait for another holder is reported as progress. */
  const locked = <T>(
    repoId: string,
    what: string,
    hooks: OperationHooks<LockWaitProgress>,
    fn: () => Promise<T>,
  ): Promise<T> => {
    const { onProgress, signal } = hooks;
    const onWait = onProgress
      ? (w: LockWait) => onProgress({ phase: 'waiting-for-lock', what: w.what })
      : undefined;
    return store.locks.withRepoLock(repoId, what, fn, { signal, onWait });
  };

  /** A 401 anywhere in `fn` becomes AuthRequiredError (the page asks for a token and runs it again). */
  const authed = <T>(repoId: string, fn: () => Promise<T>) => withAuthRequired(ctx, repoId, fn);

  const makeRepo = (id: string): Repo => ({
    id,
    async fetch(args = {}, hooks = {}) {
      begin(hooks.signal);
      return locked(id, 'fetch', hooks, () => authed(id, () => fetchRepo(ctx, id, args, hooks)));
    },
    async fillHistory(args = {}, hooks = {}) {
      begin(hooks.signal);
      return authed(id, () => fillHistory(ctx, id, { ...args, onStepStored: () => forgetWalks(id) }, hooks));
    },
    async pull(args = {}, hooks = {}) {
      begin(hooks.signal);
      return locked(id, 'pull', hooks, () => authed(id, () => pull(ctx, id, args, hooks)));
    },
    async push(args = {}, hooks = {}) {
      begin(hooks.signal);
      // A 401 is AUTH_REQUIRED, as for a fetch: the page asks for a token and pushes again (the server
      // took nothing, having refused the request).
      return locked(id, 'push', hooks, () => authed(id, () => push(ctx, id, args, hooks)));
    },
    async setCredentials({ auth, remember = false }, hooks = {}) {
      begin(hooks.signal);
      await store.credentials.set(id, auth, remember);
    },
    async delete(_args = {}, hooks = {}) {
      begin(hooks.signal);
      // A blob fetch finishing after the delete would write into a recreated database; a pack merge holds
      // the lock, so the delete waits for it.
      await cancelBlobFetches(ctx, id);
      // A fill step stored after the delete would recreate the database.
      cancelHistoryFill(ctx, id);
      await locked(id, 'deleting the repository', hooks, async () => {
        forgetCaches(id);
        store.credentials.forget(id);
        await store.repoFs.delete(id);
        await store.registry.remove(id);
      });
      handles.delete(id);
    },
    async listRefs(_args = {}, hooks = {}) {
      begin(hooks.signal);
      return listRefs(ctx, id);
    },
    async log({ ref, limit, skip }, hooks = {}) {
      begin(hooks.signal);
      return log(ctx, id, ref, { limit, skip });
    },
    async readCommit({ ref }, hooks = {}) {
      begin(hooks.signal);
      return readCommit(ctx, id, ref);
    },
    async readTree({ ref, path }, hooks = {}) {
      begin(hooks.signal);
      return readTree(ctx, id, ref, path);
    },
    async lastCommits({ ref, path }, hooks = {}) {
      begin(hooks.signal);
      return lastCommits(ctx, id, ref, path, { signal: hooks.signal });
    },
    async listPaths({ ref }, hooks = {}) {
      begin(hooks.signal);
      return listPaths(ctx, id, ref);
    },
    async fileHistory({ ref, path, limit, skip }, hooks = {}) {
      begin(hooks.signal);
      return authed(id, () => fileHistory(ctx, id, ref, path, { limit, skip }, { signal: hooks.signal }));
    },
    async blame({ ref, path }, hooks = {}) {
      begin(hooks.signal);
      return authed(id, () => blame(ctx, id, ref, path, hooks));
    },
    async commitGraphStatus(_args = {}, hooks = {}) {
      begin(hooks.signal);
      return commitGraphStatus(ctx, id);
    },
    async compare({ base, head }, hooks = {}) {
      begin(hooks.signal);
      return compareRefs(ctx, id, base, head, {}, { signal: hooks.signal });
    },
    async checkout({ ref, ...opts }, hooks = {}) {
      begin(hooks.signal);
      return locked(id, `checkout of ${ref}`, hooks, () =>
        authed(id, () => checkout(ctx, id, ref, opts, hooks)),
      );
    },
    async readFile({ ref, path }, hooks = {}) {
      begin(hooks.signal);
      return authed(id, () => readFile(ctx, id, ref, path, hooks));
    },
    async presence({ ref }, hooks = {}) {
      begin(hooks.signal);
      return presence(ctx, id, ref);
    },
    async diffCommits({ from = null, to }, hooks = {}) {
      begin(hooks.signal);
      return diffCommits(ctx, id, from, to);
    },
    async diffFile({ oldOid, newOid }, hooks = {}) {
      begin(hooks.signal);
      return authed(id, () => diffFile(ctx, id, oldOid, newOid, hooks));
    },
    // Writing: each checks out HEAD first when the repo has no working tree yet, so each takes the lock.
    async status(_args = {}, hooks = {}) {
      begin(hooks.signal);
      return locked(id, 'reading the working tree', hooks, () => authed(id, () => status(ctx, id, hooks)));
    },
    async stage({ paths }, hooks = {}) {
      begin(hooks.signal);
      return locked(id, 'staging', hooks, () => authed(id, () => stage(ctx, id, paths, hooks)));
    },
    async unstage({ paths }, hooks = {}) {
      begin(hooks.signal);
      return locked(id, 'unstaging', hooks, () => authed(id, () => unstage(ctx, id, paths, hooks)));
    },
    async stagedDiff({ path }, hooks = {}) {
      begin(hooks.signal);
      return locked(id, 'reading the working tree', hooks, () =>
        authed(id, () => stagedDiff(ctx, id, path, hooks)),
      );
    },
    async readWorktreeFile({ path }, hooks = {}) {
      begin(hooks.signal);
      return locked(id, 'reading the working tree', hooks, () =>
        authed(id, () => readWorktreeFile(ctx, id, path, hooks)),
      );
    },
    async writeWorktreeFile({ path, content }, hooks = {}) {
      begin(hooks.signal);
      return locked(id, `saving ${path}`, hooks, () =>
        authed(id, () => writeWorktreeFile(ctx, id, path, content, hooks)),
      );
    },
    async renameWorktreeFile({ from, to }, hooks = {}) {
      begin(hooks.signal);
      return locked(id, `renaming ${from}`, hooks, () =>
        authed(id, () => renameWorktreeFile(ctx, id, from, to, hooks)),
      );
    },
    async deleteWorktreeFile({ path }, hooks = {}) {
      begin(hooks.signal);
      return locked(id, `deleting ${path}`, hooks, () =>
        authed(id, () => deleteWorktreeFile(ctx, id, path, hooks)),
      );
    },
    async commit(args, hooks = {}) {
      begin(hooks.signal);
      return locked(id, 'commit', hooks, () => authed(id, () => commit(ctx, id, args, hooks)));
    },
    async abortMerge(_args = {}, hooks = {}) {
      begin(hooks.signal);
      return locked(id, 'aborting the merge', hooks, () => abortMerge(ctx, id));
    },
    async createBranch({ name, start }, hooks = {}) {
      begin(hooks.signal);
      return locked(id, `creating branch ${name}`, hooks, () => createBranch(ctx, id, name, start));
    },
    async deleteBranch({ name }, hooks = {}) {
      begin(hooks.signal);
      return locked(id, `deleting branch ${name}`, hooks, () => deleteBranch(ctx, id, name));
    },
    dispose() {
      forgetCaches(id);
      handles.delete(id);
    },
  });

  const engine: Engine = {
    ...foregrounded<Pick<Engine, 'clone' | 'readFileMinimal'>>({
      async clone(args, hooks = {}) {
        begin(hooks.signal);
        return clone(ctx, { ...args, corsProxy: args.corsProxy ?? options.corsProxy }, hooks);
      },
      async readFileMinimal({ url, ref = '', path = '', corsProxy, strategy }, hooks = {}) {
        begin(hooks.signal);
        const opts = { corsProxy: corsProxy ?? options.corsProxy, strategy };
        return readFileMinimal(ctx, url, ref, path, opts, hooks);
      },
    }),
    async listRepos({ includeMinimal = false } = {}, hooks = {}) {
      // Not `begin`: the page lists its repos while the warm-up runs, which should go on.
      throwIfAborted(hooks.signal);
      const all = await store.registry.list();
      return (includeMinimal ? all : all.filter((r) => !r.minimal)).map(repoSummary);
    },
    async startupRepair(_args = {}, hooks = {}) {
      begin(hooks.signal);
      repairing ??= repairStores(store);
      return repairing;
    },
    async repoEvents() {
      return { channel: store.names.eventsChannel, origin: store.locks.origin };
    },
    warmUp(args = {}) {
      return warmUp.once(args.rounds);
    },
    repo(id) {
      let handle = handles.get(id);
      if (!handle) {
        handle = foregrounded(makeRepo(id), BACKGROUND_REPO_OPS);
        handles.set(id, handle);
      }
      return handle;
    },
    async close() {
      warmUp.stop();
      for (const id of [...handles.keys()]) handles.get(id)?.dispose();
      for (const controller of ctx.fills.values()) controller.abort();
      await Promise.all([...ctx.blobs.inFlightByRepo.keys()].map((id) => cancelBlobFetches(ctx, id)));
      ctx.repos.clear();
      await store.close();
    },
  };
  Object.defineProperty(engine, CONTEXT, { value: ctx, enumerable: false });
  return engine;
}

/**
 * The context of an engine made by createEngine: for tests and benchmarks that look at what it stores or
 * keeps (its file systems, pack sets, crash points). Not part of the public entry.
 */
export function engineContext(engine: Engine): EngineContext {
  const ctx = (engine as Engine & { [CONTEXT]?: EngineContext })[CONTEXT];
  if (!ctx) throw new TypeError('Not an engine made by createEngine (a wrapped one has no context here).');
  return ctx;
}
