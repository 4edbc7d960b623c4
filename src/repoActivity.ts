import { useEffect, useState } from 'preact/hooks';
import type { RepoEvent } from '../workers/engine/index.ts';
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

// The channel's name and this page's worker's id, from the worker (the UI imports no worker code).
let events: Promise<{ channel: string; origin: string }> | undefined;

function start(): void {
  if (started || typeof BroadcastChannel !== 'function') return;
  started = true;
  events = gitClient.repoEvents();
  void events.then(({ channel: name, origin }) => listen(new BroadcastChannel(name), origin));
}

function listen(channel: BroadcastChannel, own: string): void {
  channel.onmessage = (e: MessageEvent<RepoEvent>) => {
    const m = e.data;
    if (!m || typeof m.repoId !== 'string' || m.origin === own) return;
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
  void events?.then(({ channel: name }) => {
    const channel = new BroadcastChannel(name);
    channel.postMessage({ type: 'who', repoId, origin: 'page' } satisfies RepoEvent);
    channel.close();
  });
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
