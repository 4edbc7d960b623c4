import { useEffect, useState } from 'preact/hooks';
import { openRepoEvents, type RepoEvent } from '../workers/repoEvents.ts';
import { gitClient } from './gitClient.ts';

/**
 * What the workers of other tabs are doing to stored repositories, from their BroadcastChannel events:
 * which repo is busy with what, and a counter per repo that goes up each time another tab committed a
 * change to it (views re-read the repo when it moves). This page's own worker's events are left out.
 */
interface Activity {
  busy: Map<string, string>;
  changes: Map<string, number>;
  /** Goes up with every change to any repo (the list of repos may have changed). */
  anyChange: number;
}

let state: Activity = { busy: new Map(), changes: new Map(), anyChange: 0 };
const listeners = new Set<() => void>();
let started = false;

function start(): void {
  if (started) return;
  started = true;
  const channel = openRepoEvents();
  if (!channel) return;
  const own = gitClient.workerOrigin();
  channel.onmessage = async (e: MessageEvent<RepoEvent>) => {
    const m = e.data;
    if (!m || typeof m.repoId !== 'string' || m.origin === (await own)) return;
    const busy = new Map(state.busy);
    const changes = new Map(state.changes);
    let anyChange = state.anyChange;
    if (m.type === 'busy') busy.set(m.repoId, m.what);
    else if (m.type === 'idle') busy.delete(m.repoId);
    else if (m.type === 'changed') {
      changes.set(m.repoId, (changes.get(m.repoId) ?? 0) + 1);
      anyChange++;
    } else return;
    state = { busy, changes, anyChange };
    for (const l of listeners) l();
  };
}

/** Asks the other tabs' workers whether one is busy with the repo: the holder answers `busy`. */
export function askWhoIsBusy(repoId: string): void {
  start();
  const channel = openRepoEvents();
  if (!channel) return;
  channel.postMessage({ type: 'who', repoId, origin: 'page' } satisfies RepoEvent);
  channel.close();
}

export function useRepoActivity(): Activity {
  const [now, setNow] = useState(state);
  useEffect(() => {
    start();
    const update = () => setNow(state);
    listeners.add(update);
    return () => {
      listeners.delete(update);
    };
  }, []);
  return now;
}
