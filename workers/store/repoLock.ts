// One writer per repository, across the tabs and workers of this origin: every write to a repo runs under
// a Web Lock named after it (see docs/ARCHITECTURE.md, "One writer per repository"). In Node (the vitest
// suite) navigator.locks is absent and an in-process lock manager with the same semantics stands in.

import { StoreError } from './errors.ts';
import { openRepoEvents, type RepoEvent } from './repoEvents.ts';
import { repoFsGeneration, setRepoWriterCheck, syncRepoFs } from './repoFs.ts';

/** The lock's name. lightning-fs's own activation lock is `blobless-repo-<id>_lock`: a different one. */
export function repoLockName(repoId: string): string {
  return `blobless-repo-${repoId}:write`;
}

interface LockRequestOptions {
  ifAvailable?: boolean;
  signal?: AbortSignal;
}

interface LockManagerLike {
  request<T>(name: string, options: LockRequestOptions, callback: (lock: unknown) => Promise<T>): Promise<T>;
  query?(): Promise<{ held?: { name?: string }[]; pending?: { name?: string }[] }>;
}

/**
 * navigator.locks' exclusive mode, in one process: requests for a name are granted one at a time in the
 * order they came; `ifAvailable` gets null at once when the name is held or awaited; a signal that fires
 * while waiting rejects with an AbortError, as the Web Locks API does.
 */
export class InProcessLocks implements LockManagerLike {
  private queues = new Map<string, { grant: () => void }[]>();
  private heldNames = new Set<string>();

  async request<T>(
    name: string,
    options: LockRequestOptions,
    callback: (lock: unknown) => Promise<T>,
  ): Promise<T> {
    const queue = this.queues.get(name) ?? [];
    const busy = this.heldNames.has(name) || queue.length > 0;
    if (busy && options.ifAvailable) return callback(null);
    if (options.signal?.aborted) throw abortError();
    if (busy) {
      await new Promise<void>((resolve, reject) => {
        const waiter = { grant: resolve };
        queue.push(waiter);
        this.queues.set(name, queue);
        options.signal?.addEventListener(
          'abort',
          () => {
            const at = queue.indexOf(waiter);
            if (at === -1) return;
            queue.splice(at, 1);
            reject(abortError());
          },
          { once: true },
        );
      });
    }
    this.heldNames.add(name);
    try {
      return await callback({ name });
    } finally {
      // Handed straight to the next in line, so an `ifAvailable` request in between finds it taken.
      const next = this.queues.get(name)?.shift();
      if (next) next.grant();
      else this.heldNames.delete(name);
    }
  }

  async query() {
    return {
      held: [...this.heldNames].map((name) => ({ name })),
      pending: [...this.queues].flatMap(([name, q]) => q.map(() => ({ name }))),
    };
  }

  /** What a terminated worker leaves: no lock held, nobody waiting. For crash tests. */
  reset(): void {
    this.heldNames.clear();
    this.queues.clear();
  }
}

function abortError(): Error {
  return Object.assign(new Error('The lock request was aborted.'), { name: 'AbortError' });
}

const inProcess = new InProcessLocks();

function locks(): LockManagerLike {
  const native = (globalThis.navigator as { locks?: LockManagerLike } | undefined)?.locks;
  return native ?? inProcess;
}

/** Identifies this worker in repo events, so a page can tell its own worker's events from others'. */
export const WORKER_ORIGIN = Math.random().toString(36).slice(2);

interface Holding {
  what: string;
}

/** The repos whose lock this worker holds right now, and what it runs under each. */
const heldHere = new Map<string, Holding>();

let channel: BroadcastChannel | null | undefined;
function events(): BroadcastChannel | null {
  if (channel === undefined) {
    channel = openRepoEvents();
    if (channel) {
      channel.onmessage = (e: MessageEvent<RepoEvent>) => {
        const m = e.data;
        const mine = heldHere.get(m?.repoId);
        if (m?.type === 'who' && mine) {
          post({ type: 'busy', repoId: m.repoId, what: mine.what, origin: WORKER_ORIGIN });
        }
      };
      // A worker that only listens must not keep Node (tests) alive.
      (channel as unknown as { unref?: () => void }).unref?.();
    }
  }
  return channel;
}

function post(event: RepoEvent): void {
  events()?.postMessage(event);
}

/** The lock is held elsewhere: `what` runs there (undefined until the holder says). */
export interface LockWait {
  what: string | undefined;
}

export interface RepoLockHooks {
  signal?: AbortSignal;
  /** Called when the lock is held elsewhere, and again once the holder says what it runs. */
  onWait?: (holder: LockWait) => void;
}

/** Whether an operation of this worker holds the repo's lock now. */
export function heldInThisWorker(repoId: string): boolean {
  return heldHere.has(repoId);
}

// Only the lock's holder may store a tree with no file written (see BatchedIdb.saveSuperblock).
setRepoWriterCheck(heldInThisWorker);

/**
 * Runs `fn` holding the repo's write lock: an API entry point that writes. Waits while another tab or
 * worker (or another operation of this one) holds it, telling `onWait` what runs there; the signal gives
 * up the wait (StoreError ABORTED). Before `fn`, lightning-fs's tree is read again if another tab
 * committed since this worker last looked (syncRepoFs). Never call it from inside an operation that
 * holds the lock: that waits forever (use underRepoLock).
 */
export async function withRepoLock<T>(
  repoId: string,
  what: string,
  fn: () => Promise<T>,
  hooks: RepoLockHooks = {},
): Promise<T> {
  let ran = false;
  try {
    return await lockedRun(
      repoId,
      what,
      () => {
        ran = true;
        return fn();
      },
      hooks,
    );
  } catch (err) {
    // A frame denied storage by the browser (third-party storage blocked) is denied locks too; it has
    // no storage another tab could share either.
    if (ran || (err as { name?: string }).name !== 'SecurityError') throw err;
    return withHeld(repoId, what, fn);
  }
}

async function lockedRun<T>(
  repoId: string,
  what: string,
  fn: () => Promise<T>,
  hooks: RepoLockHooks,
): Promise<T> {
  const { signal, onWait } = hooks;
  const run = () => withHeld(repoId, what, fn);
  const name = repoLockName(repoId);
  const first = await locks().request(name, { ifAvailable: true }, async (lock) =>
    lock ? { value: await run() } : null,
  );
  if (first) return first.value;

  let stopListening = () => {};
  if (onWait) {
    const local = heldHere.get(repoId);
    onWait({ what: local?.what });
    const ch = openRepoEvents();
    if (ch) {
      ch.onmessage = (e: MessageEvent<RepoEvent>) => {
        if (e.data?.type === 'busy' && e.data.repoId === repoId) onWait({ what: e.data.what });
      };
      ch.postMessage({ type: 'who', repoId, origin: WORKER_ORIGIN } satisfies RepoEvent);
      stopListening = () => ch.close();
    }
  }
  try {
    return await locks().request(name, { signal }, () => {
      stopListening();
      return run();
    });
  } catch (err) {
    if ((err as { name?: string }).name === 'AbortError' || signal?.aborted) {
      throw new StoreError('ABORTED', `Stopped waiting for the other tab's work on this repository.`);
    }
    throw err;
  } finally {
    stopListening();
  }
}

/**
 * A write made on behalf of whatever runs (a lazy blob fetch's pack): if an operation of this worker holds
 * the lock, the write is part of that operation and runs at once (waiting would deadlock: a checkout
 * waits for its own blob fetches); otherwise it takes the lock itself.
 */
export function underRepoLock<T>(
  repoId: string,
  what: string,
  fn: () => Promise<T>,
  hooks: RepoLockHooks = {},
): Promise<T> {
  if (heldHere.has(repoId)) return fn();
  return withRepoLock(repoId, what, fn, hooks);
}

/**
 * Runs `fn` under the lock only if it is free right now, else returns `busy` without waiting: for
 * background work (the pack merge) that must never hold up, or run inside, an operation.
 */
export async function tryRepoLock<T>(
  repoId: string,
  what: string,
  fn: () => Promise<T>,
): Promise<{ value: T } | 'busy'> {
  if (heldHere.has(repoId)) return 'busy';
  const got = await locks().request(repoLockName(repoId), { ifAvailable: true }, async (lock) =>
    lock ? { value: await withHeld(repoId, what, fn) } : null,
  );
  return got ?? 'busy';
}

/**
 * Whether an operation (of any tab or worker) waits for the repo's lock now: background work holding it
 * stops at its next safe point and lets the operation go first.
 */
export async function repoLockWanted(repoId: string): Promise<boolean> {
  const name = repoLockName(repoId);
  const state = await locks().query?.();
  return (state?.pending ?? []).some((p) => p.name === name);
}

async function withHeld<T>(repoId: string, what: string, fn: () => Promise<T>): Promise<T> {
  heldHere.set(repoId, { what });
  post({ type: 'busy', repoId, what, origin: WORKER_ORIGIN });
  let before: string | undefined;
  try {
    await syncRepoFs(repoId);
    before = repoFsGeneration(repoId);
    return await fn();
  } finally {
    heldHere.delete(repoId);
    // Every commit makes a new generation: a changed one (or a repo made or deleted) is news to other tabs.
    if (repoFsGeneration(repoId) !== before) post({ type: 'changed', repoId, what, origin: WORKER_ORIGIN });
    post({ type: 'idle', repoId, origin: WORKER_ORIGIN });
  }
}

/**
 * Runs `fn` holding the repo's fill lock (`blobless-repo-<id>:fill`, not the write lock) if no tab or
 * worker holds it, else returns `busy` at once: one history fill per repo, whoever opened it first. The
 * fill takes the write lock only to store each step.
 */
export async function tryFillLock<T>(repoId: string, fn: () => Promise<T>): Promise<{ value: T } | 'busy'> {
  const got = await locks().request(`blobless-repo-${repoId}:fill`, { ifAvailable: true }, async (lock) =>
    lock ? { value: await fn() } : null,
  );
  return got ?? 'busy';
}

/** Resolves once nobody holds or waits for the repo's lock (momentarily taking it). */
export async function repoLockFree(repoId: string): Promise<void> {
  await locks().request(repoLockName(repoId), {}, async () => undefined);
}

/** Whether any worker of this origin holds or awaits the repo's lock: a clone there is alive. */
export async function repoLockInUse(repoId: string): Promise<boolean> {
  const name = repoLockName(repoId);
  // Where query() is missing, tryRepoLock (ifAvailable) still keeps repair off a held repo.
  const state = (await locks().query?.()) ?? {};
  return [...(state.held ?? []), ...(state.pending ?? [])].some((l) => l.name === name);
}

/** For crash tests: what terminating the worker does to its locks. */
export function dropLocksOfTerminatedWorker(): void {
  heldHere.clear();
  inProcess.reset();
}
