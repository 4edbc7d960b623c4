import { useEffect, useState } from 'preact/hooks';
import type { FillProgress, RepoSummary } from '../workers/engine/index.ts';
import { withToken } from './auth/withToken.ts';
import { type BloblessError, gitClient } from './gitClient.ts';

/**
 * The background history fill of first-view clones (the worker's fillHistory), one per repo per page:
 * started when a repo whose record says the fill is pending is shown (after its clone, or when opened
 * again, also after a reload), stopped by Stop, resumed by Resume or the next open. Views subscribe to
 * follow it: the status line shows it, the history list reads more when a step is stored.
 */
export interface FillState {
  /** `pending`: the repo needs a fill that has not started yet (the moment before the view starts it). */
  status: 'pending' | 'filling' | 'complete' | 'stopped' | 'failed' | 'elsewhere';
  commits: number;
  bytes: number;
  /** Bytes of the step under way that arrived so far (not yet in the record's `bytesFetched`). */
  inFlight: number;
  /** Goes up each time a step is stored: the history has grown. */
  stored: number;
  error?: string;
}

interface Running {
  state: FillState;
  controller: AbortController | null;
  /** The person pressed Stop in this page: not started again on its own until they press Resume. */
  stoppedByPerson: boolean;
  listeners: Set<() => void>;
}

const fills = new Map<string, Running>();

function entry(repoId: string): Running {
  let r = fills.get(repoId);
  if (!r) {
    r = {
      state: { status: 'pending', commits: 0, bytes: 0, inFlight: 0, stored: 0 },
      controller: null,
      stoppedByPerson: false,
      listeners: new Set(),
    };
    fills.set(repoId, r);
  }
  return r;
}

function set(r: Running, change: Partial<FillState>): void {
  r.state = { ...r.state, ...change };
  for (const l of r.listeners) l();
}

/** Starts (or resumes) the fill of a repo unless it runs already in this page. */
export function startHistoryFill(repo: RepoSummary): void {
  const r = entry(repo.id);
  r.stoppedByPerson = false;
  if (r.controller) return;
  const controller = new AbortController();
  r.controller = controller;
  set(r, {
    status: 'filling',
    commits: repo.historyFill?.commits ?? r.state.commits,
    bytes: repo.historyFill?.bytes ?? r.state.bytes,
    inFlight: 0,
    error: undefined,
  });
  const onProgress = (p: FillProgress) => {
    if (p.phase === 'stored')
      set(r, { commits: p.commits, bytes: p.bytes, inFlight: 0, stored: r.state.stored + 1 });
    else
      set(r, {
        commits: p.commits,
        bytes: p.bytes,
        inFlight: p.phase === 'filling' && p.fetch?.phase === 'receiving' ? p.fetch.bytes : 0,
      });
  };
  // A private repo after a reload: the token dialog asks, as for any other fetch.
  withToken(() => gitClient.repo(repo.id).fillHistory({}, { onProgress, signal: controller.signal }))
    .then(
      (result) => {
        if (result.busyElsewhere) set(r, { status: 'elsewhere', inFlight: 0 });
        else
          set(r, { status: result.complete ? 'complete' : 'stopped', commits: result.commits, inFlight: 0 });
      },
      (err: BloblessError) => {
        if (controller.signal.aborted || err.code === 'ABORTED') set(r, { status: 'stopped', inFlight: 0 });
        else set(r, { status: 'failed', error: err.message, inFlight: 0 });
      },
    )
    .finally(() => {
      r.controller = null;
    });
}

export function stopHistoryFill(repoId: string): void {
  const r = fills.get(repoId);
  if (!r) return;
  r.stoppedByPerson = true;
  r.controller?.abort();
}

/**
 * The fill of `repo`, started here when its record says one is pending and none runs; null for a repo
 * that never needed one.
 */
export function useHistoryFill(repo: RepoSummary): FillState | null {
  const r = entry(repo.id);
  const [state, setState] = useState(r.state);
  const pending = repo.historyFill !== undefined;
  useEffect(() => {
    const update = () => setState(r.state);
    r.listeners.add(update);
    const auto = !r.stoppedByPerson && r.state.status !== 'complete' && r.state.status !== 'failed';
    if (pending && auto) startHistoryFill(repo);
    update();
    return () => void r.listeners.delete(update);
  }, [repo.id, pending]);
  return pending || state.stored > 0 ? state : null;
}
