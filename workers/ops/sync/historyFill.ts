// Open first, fill in behind: after a first-view clone (one ref, depth 1, no blobs), the rest of what a
// normal blob:none clone holds (the whole history, every branch and tag) arrives in steps of growing
// depth, then one unshallow fetch. Each step is an ordinary fetch (fetch.ts): its negotiation sends what
// is stored as `have` and `shallow` lines, so the server sends only what is new, and each step is stored
// whole, under the write lock taken only to store it. A step cancelled or failed stores nothing; the
// steps before it stay, a valid shallow repository, and the record's `historyFill` says where to resume.

import type { HistoryFillState } from '../../store/registry.ts';
import { OperationError, throwIfAborted } from '../common/errors.ts';
import type { OperationHooks } from '../common/operationHooks.ts';
import { type FetchProgress, fetchRepo } from './fetch.ts';
import type { BlobContext } from './lazyBlobs.ts';

/**
 * The depths of the steps before the unshallow one (`npx tsx test/measure/fillDepths.ts large …`, one run
 * each, 2 busy cores; plain blob:none clone 4.92 s; why these: docs/decisions/fill-depths.md):
 *
 *   depths, then unshallow   large.git (50,000 commits): seconds per step   total     bytes vs plain clone
 *   (unshallow at once)      7.23                                            7.56 s    -1.27 %
 *   1000                     1.27 + 7.20                                     8.63 s    -1.32 %
 *   100, 1000                0.38 + 0.84 + 9.21                              10.62 s   -1.30 %
 *   100, 1000, 10000         0.66 + 1.07 + 2.98 + 9.97                       15.32 s   -1.88 %
 *   1000, 10000              0.94 + 2.46 + 7.48                              11.04 s   -1.90 %
 *   500, 5000                0.88 + 1.86 + 7.96                              10.97 s   -1.58 %
 */
export const FILL_DEPTHS: readonly number[] = [100, 1_000];

/** A step that found the repo changed under it is asked again, this many times at most. */
const STALE_RETRIES = 3;

/** What fillHistory tells onProgress: each step's start and end, then the end of the fill. */
export type FillProgress =
  /** A step is under way: `depth` is its target (null: the rest of the history). */
  | {
      /** A step's fetch is running. */
      phase: 'filling';
      /** The step's number in this call, from 1. */
      step: number;
      /** The history's depth the step fetches to, in commits from the tips; null for the rest of it. */
      depth: number | null;
      /** Commits stored so far. */
      commits: number;
      /** Bytes of the fill so far, including the step's response as it arrives. */
      bytes: number;
      /** The step's fetch's own progress, when it said something. */
      fetch?: FetchProgress;
    }
  /** A step was stored: the history list has more to show. */
  | {
      /** A step's commits are stored. */
      phase: 'stored';
      /** The step's number in this call, from 1. */
      step: number;
      /** The depth reached, in commits from the tips; null when the history is whole. */
      depth: number | null;
      /** Commits the fill has stored, over all its steps. */
      commits: number;
      /** Response bytes of the fill, over all its steps. */
      bytes: number;
    }
  | {
      /** The repo now holds the whole history, branches and tags. */
      phase: 'complete';
      /** Commits the fill stored in all. */
      commits: number;
      /** Response bytes of the whole fill. */
      bytes: number;
    };

/** Where fillHistory left the repo. */
export interface FillResult {
  /** The repo now holds what a normal clone holds; its record has no `historyFill`. */
  complete: boolean;
  /** Another tab or worker is filling this repo: nothing was done here. */
  busyElsewhere: boolean;
  /** Steps this call ran and stored. */
  steps: number;
  /** Commits the fill has stored, over every call. */
  commits: number;
  /** Response bytes of the steps run by this call. */
  bytesReceived: number;
}

export interface FillOptions {
  /** The depths of the steps before the unshallow one; FILL_DEPTHS when absent (tests use small ones). */
  depths?: readonly number[];
  /** Stop after this many steps (tests: a fill interrupted between steps). */
  maxSteps?: number;
  /**
   * Called once each step is stored, before its `stored` progress: the history walks kept for the list
   * stopped at the old shallow boundary, and the caller that keeps them forgets them here (api.ts).
   */
  onStepStored?: () => void;
}

export interface FillContext extends BlobContext {
  /** The fills running in this engine, so that deleting the repo can stop its fill first. */
  readonly fills: Map<string, AbortController>;
}

/** Brings a first-view clone's history, branches and tags; a no-op for any other repo. */
export async function fillHistory(
  ctx: FillContext,
  repoId: string,
  opts: FillOptions = {},
  hooks: OperationHooks<FillProgress> = {},
): Promise<FillResult> {
  const stop = new AbortController();
  const signal = hooks.signal ? AbortSignal.any([hooks.signal, stop.signal]) : stop.signal;
  const ran = await ctx.store.locks.tryFillLock(repoId, async () => {
    ctx.fills.set(repoId, stop);
    try {
      return await fillSteps(ctx, repoId, opts, { ...hooks, signal });
    } finally {
      ctx.fills.delete(repoId);
    }
  });
  if (ran === 'busy') return { complete: false, busyElsewhere: true, steps: 0, commits: 0, bytesReceived: 0 };
  return ran.value;
}

/** Stops this engine's fill of the repo (it is being deleted): the step under way stores nothing. */
export function cancelHistoryFill(ctx: FillContext, repoId: string): void {
  ctx.fills.get(repoId)?.abort();
}

async function fillSteps(
  ctx: FillContext,
  repoId: string,
  opts: FillOptions,
  hooks: OperationHooks<FillProgress>,
): Promise<FillResult> {
  const { signal, onProgress } = hooks;
  const depths = opts.depths ?? FILL_DEPTHS;
  const result: FillResult = {
    complete: false,
    busyElsewhere: false,
    steps: 0,
    commits: 0,
    bytesReceived: 0,
  };
  let stale = 0;
  for (;;) {
    throwIfAborted(signal);
    const record = await ctx.store.registry.get(repoId);
    if (!record) {
      throw new OperationError(
        'REPO_NOT_FOUND',
        `No stored repository "${repoId}". It may have been deleted.`,
      );
    }
    const state = record.historyFill;
    if (!state) {
      result.complete = true;
      return result;
    }
    result.commits = state.commits;
    if (opts.maxSteps !== undefined && result.steps >= opts.maxSteps) return result;
    // The first depth past the one reached; none left: the rest of the history.
    const depth = record.shallow ? (depths.find((d) => d > state.depth) ?? null) : null;
    const step = result.steps + 1;
    onProgress?.({ phase: 'filling', step, depth, commits: state.commits, bytes: state.bytes });
    let fetched: Awaited<ReturnType<typeof fetchRepo>>;
    try {
      fetched = await fetchRepo(
        ctx,
        repoId,
        // Tags wait for the last step: a depth counted from every tag would take most of the history at
        // once (medium.git's 10 tags, 1,000 commits apart, made a depth-1,000 step fetch all of it).
        depth === null ? { unshallow: true, tags: 'all' } : { depth, tags: 'none' },
        {
          signal,
          onProgress: (p) => {
            const inFlight = p.phase === 'receiving' ? p.bytes : 0;
            onProgress?.({
              phase: 'filling',
              step,
              depth,
              commits: state.commits,
              bytes: state.bytes + inFlight,
              fetch: p,
            });
          },
        },
        { lockToStore: { what: 'fetching the history' } },
      );
    } catch (err) {
      if ((err as { code?: string }).code === 'FETCH_STALE' && stale++ < STALE_RETRIES) continue;
      throw err;
    }
    result.steps++;
    result.bytesReceived += fetched.bytesReceived;
    const next: HistoryFillState = {
      depth: depth ?? Number.MAX_SAFE_INTEGER,
      commits: state.commits + fetched.newCommits,
      bytes: state.bytes + fetched.bytesReceived,
    };
    // The last step ran the refspec's whole fetch (every branch and tag, no depth): what a clone holds.
    const done = depth === null;
    await ctx.store.registry.update(repoId, (r) => ({ ...r, historyFill: done ? undefined : next }));
    // The history walks stopped at the old shallow boundary: the next page starts a new walk.
    opts.onStepStored?.();
    result.commits = next.commits;
    onProgress?.({ phase: 'stored', step, depth, commits: next.commits, bytes: next.bytes });
    if (done) {
      result.complete = true;
      onProgress?.({ phase: 'complete', commits: next.commits, bytes: next.bytes });
      return result;
    }
  }
}
