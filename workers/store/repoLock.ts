// One writer per repository, across the tabs and workers of this origin: every write to a repo runs under
// a Web Lock named after it (see docs/ARCHITECTURE.md, "One writer per repository"). In Node (the vitest
// suite) navigator.locks is absent and an in-process lock manager with the same semantics stands in.

import { StoreError } from './errors.ts';
import { openRepoEvents, type RepoEvent } from './repoEvents.ts';
import type { RepoFileSystems } from './repoFs.ts';
import type { LockManagerLike, LockRequestOptions, StorageNames } from './storage.ts';

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

interface Holding {
  what: string;
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

/**
 * One engine's side of the repo locks: which it holds and what it runs under each, and the channel on
 * which it says so to the other tabs.
 */
export class RepoLocks {
  /** Identifies this engine in repo events, so a page can tell its own worker's events from others'. */
  readonly origin = Math.random().toString(36).slice(2);
  /** The repos whose lock this engine holds right now, and what it runs under each. */
  private readonly heldHere = new Map<string, Holding>();
  private channel: BroadcastChannel | null | undefined;

  constructor(
    private readonly locks: LockManagerLike,
    private readonly names: StorageNames,
    /** Set once the file systems exist (they ask this object who may commit a bare save). */
    private readonly repoFs: () => RepoFileSystems,
  ) {}

  /** The write lock's name. */
  lockName(repoId: string): string {
    return this.names.writeLock(repoId);
  }

  private events(): BroadcastChannel | null {
    if (this.channel === undefined) {
      const channel = openRepoEvents(this.names.eventsChannel);
      this.channel = channel;
      if (channel) {
        channel.onmessage = (e: MessageEvent<RepoEvent>) => {
          const m = e.data;
          const mine = this.heldHere.get(m?.repoId);
          if (m?.type === 'who' && mine) {
            this.post({ type: 'busy', repoId: m.repoId, what: mine.what, origin: this.origin });
          }
        };
        // An engine that only listens must not keep Node (tests) alive.
        (channel as unknown as { unref?: () => void }).unref?.();
      }
    }
    return this.channel;
  }

  private post(event: RepoEvent): void {
    this.events()?.postMessage(event);
  }

  /** Whether an operation of this engine holds the repo's lock now. */
  heldHereNow(repoId: string): boolean {
    return this.heldHere.has(repoId);
  }

  /**
   * Runs `fn` holding the repo's write lock: an operation that writes. Waits while another tab or worker
   * (or another operation of this engine) holds it, telling `onWait` what runs there; the signal gives up
   * the wait (StoreError ABORTED). Before `fn`, lightning-fs's tree is read again if another tab committed
   * since this engine last looked (RepoFileSystems.sync). Never call it from inside an operation that holds
   * the lock: that waits forever (use underRepoLock).
   */
  async withRepoLock<T>(
    repoId: string,
    what: string,
    fn: () => Promise<T>,
    hooks: RepoLockHooks = {},
  ): Promise<T> {
    let ran = false;
    try {
      return await this.lockedRun(
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
      return this.withHeld(repoId, what, fn);
    }
  }

  private async lockedRun<T>(
    repoId: string,
    what: string,
    fn: () => Promise<T>,
    hooks: RepoLockHooks,
  ): Promise<T> {
    const { signal, onWait } = hooks;
    const run = () => this.withHeld(repoId, what, fn);
    const name = this.lockName(repoId);
    const first = await this.locks.request(name, { ifAvailable: true }, async (lock) =>
      lock ? { value: await run() } : null,
    );
    if (first) return first.value;

    let stopListening = () => {};
    if (onWait) {
      const local = this.heldHere.get(repoId);
      onWait({ what: local?.what });
      const ch = openRepoEvents(this.names.eventsChannel);
      if (ch) {
        ch.onmessage = (e: MessageEvent<RepoEvent>) => {
          if (e.data?.type === 'busy' && e.data.repoId === repoId) onWait({ what: e.data.what });
        };
        ch.postMessage({ type: 'who', repoId, origin: this.origin } satisfies RepoEvent);
        stopListening = () => ch.close();
      }
    }
    try {
      return await this.locks.request(name, { signal }, () => {
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
   * A write made on behalf of whatever runs (a lazy blob fetch's pack): if an operation of this engine
   * holds the lock, the write is part of that operation and runs at once (waiting would deadlock: a
   * checkout waits for its own blob fetches); otherwise it takes the lock itself.
   */
  underRepoLock<T>(
    repoId: string,
    what: string,
    fn: () => Promise<T>,
    hooks: RepoLockHooks = {},
  ): Promise<T> {
    if (this.heldHere.has(repoId)) return fn();
    return this.withRepoLock(repoId, what, fn, hooks);
  }

  /**
   * Runs `fn` under the lock only if it is free right now, else returns `busy` without waiting: for
   * background work (the pack merge) that must never hold up, or run inside, an operation.
   */
  async tryRepoLock<T>(repoId: string, what: string, fn: () => Promise<T>): Promise<{ value: T } | 'busy'> {
    if (this.heldHere.has(repoId)) return 'busy';
    const got = await this.locks.request(this.lockName(repoId), { ifAvailable: true }, async (lock) =>
      lock ? { value: await this.withHeld(repoId, what, fn) } : null,
    );
    return got ?? 'busy';
  }

  private async withHeld<T>(repoId: string, what: string, fn: () => Promise<T>): Promise<T> {
    const repoFs = this.repoFs();
    this.heldHere.set(repoId, { what });
    this.post({ type: 'busy', repoId, what, origin: this.origin });
    let before: string | undefined;
    try {
      await repoFs.sync(repoId);
      before = repoFs.generation(repoId);
      return await fn();
    } finally {
      this.heldHere.delete(repoId);
      // Every commit makes a new generation: a changed one (or a repo made or deleted) is news to other tabs.
      if (repoFs.generation(repoId) !== before) {
        this.post({ type: 'changed', repoId, what, origin: this.origin });
      }
      this.post({ type: 'idle', repoId, origin: this.origin });
    }
  }

  /**
   * Runs `fn` holding the repo's fill lock (not the write lock) if no tab or worker holds it, else returns
   * `busy` at once: one history fill per repo, whoever opened it first. The fill takes the write lock only
   * to store each step.
   */
  async tryFillLock<T>(repoId: string, fn: () => Promise<T>): Promise<{ value: T } | 'busy'> {
    const got = await this.locks.request(this.names.fillLock(repoId), { ifAvailable: true }, async (lock) =>
      lock ? { value: await fn() } : null,
    );
    return got ?? 'busy';
  }

  /** Resolves once nobody holds or waits for the repo's lock (momentarily taking it). */
  async repoLockFree(repoId: string): Promise<void> {
    await this.locks.request(this.lockName(repoId), {}, async () => undefined);
  }

  /** Whether any worker of this origin holds or awaits the repo's lock: a clone there is alive. */
  async repoLockInUse(repoId: string): Promise<boolean> {
    const name = this.lockName(repoId);
    // Where query() is missing, tryRepoLock (ifAvailable) still keeps repair off a held repo.
    const state = (await this.locks.query?.()) ?? {};
    return [...(state.held ?? []), ...(state.pending ?? [])].some((l) => l.name === name);
  }

  /** For crash tests: what terminating the worker does to its locks. */
  dropAll(): void {
    this.heldHere.clear();
    if (this.locks instanceof InProcessLocks) this.locks.reset();
  }

  /** Stops listening on the events channel (the engine closes). */
  close(): void {
    this.channel?.close();
    this.channel = undefined;
  }
}
