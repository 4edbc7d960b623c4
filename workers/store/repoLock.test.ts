// One writer per repository, on memory storage (no git server): the in-process stand-in for navigator.locks,
// and RepoLocks' rules above it (exclusion, waiting and giving up, nesting, background work that never waits,
// the events other tabs hear). test/repoLock.test.ts has the rules that need clones.

import { afterEach, describe, expect, it } from 'vitest';
import { memoryStorage } from '../storage/memory.ts';
import type { RepoEvent } from './repoEvents.ts';
import { InProcessLocks, type LockWait } from './repoLock.ts';
import type { LockManagerLike } from './storage.ts';
import { Store } from './store.ts';

function deferred<T = void>(): { promise: Promise<T>; resolve: (value: T) => void } {
  let resolve!: (value: T) => void;
  const promise = new Promise<T>((r) => {
    resolve = r;
  });
  return { promise, resolve };
}

/** Lets queued promise callbacks run (lock grants are a few microtasks deep). */
const settle = () => new Promise((r) => setTimeout(r, 10));

const stores: Store[] = [];
const channels: BroadcastChannel[] = [];
afterEach(async () => {
  for (const s of stores.splice(0)) await s.close();
  for (const c of channels.splice(0)) c.close();
});

function newStore(storage = memoryStorage(), namespace = 'locktest'): Store {
  const store = new Store(storage, namespace);
  stores.push(store);
  return store;
}

/** A waiter that stopped waiting (aborted, or got the lock) must not report another holder's later news. */
async function expectDeafToLateNews(waits: LockWait[]): Promise<void> {
  const count = waits.length;
  const other = new BroadcastChannel('locktest-repos');
  channels.push(other);
  other.postMessage({ type: 'busy', repoId: 'r', what: 'late news', origin: 'x' } satisfies RepoEvent);
  await settle();
  expect(waits).toHaveLength(count);
}

/** Everything said on the namespace's events channel, as another tab hears it. */
function listen(namespace = 'locktest'): RepoEvent[] {
  const heard: RepoEvent[] = [];
  const channel = new BroadcastChannel(`${namespace}-repos`);
  channel.onmessage = (e: MessageEvent<RepoEvent>) => heard.push(e.data);
  channels.push(channel);
  return heard;
}

describe('InProcessLocks', () => {
  it('lets one holder in at a time, the waiters in request order, and frees the name after the last', async () => {
    const locks = new InProcessLocks();
    const order: string[] = [];
    const gate = deferred();
    const a = locks.request('x', {}, async (lock) => {
      order.push(`a:${(lock as { name: string }).name}`);
      await gate.promise;
      order.push('a-done');
    });
    const b = locks.request('x', {}, async () => {
      order.push('b');
    });
    const c = locks.request('x', {}, async () => {
      order.push('c');
    });
    await settle();
    expect(order).toEqual(['a:x']);
    expect(await locks.query()).toEqual({ held: [{ name: 'x' }], pending: [{ name: 'x' }, { name: 'x' }] });
    gate.resolve();
    await Promise.all([a, b, c]);
    expect(order).toEqual(['a:x', 'a-done', 'b', 'c']);
    expect(await locks.query()).toEqual({ held: [], pending: [] });
    // Free again: a new request is granted at once.
    expect(await locks.request('x', { ifAvailable: true }, async (lock) => lock)).toEqual({ name: 'x' });
  });

  it('frees the name when the holder throws, and passes the error on', async () => {
    const locks = new InProcessLocks();
    await expect(
      locks.request('x', {}, async () => {
        throw new Error('boom');
      }),
    ).rejects.toThrow('boom');
    expect((await locks.query()).held).toEqual([]);
    expect(await locks.request('x', { ifAvailable: true }, async (lock) => lock !== null)).toBe(true);
  });

  it('ifAvailable gets null while the name is held, and while a waiter is handed it', async () => {
    const locks = new InProcessLocks();
    const gate = deferred();
    let bRan = false;
    const a = locks.request('x', {}, () => gate.promise);
    const b = locks.request('x', {}, async () => {
      bRan = true;
    });
    expect(await locks.request('x', { ifAvailable: true }, async (lock) => lock)).toBeNull();
    expect(await locks.request('other', { ifAvailable: true }, async (lock) => lock)).toEqual({
      name: 'other',
    });
    gate.resolve();
    await a;
    // Handed straight to b: an ifAvailable request made now finds it taken or done, never both holding.
    const during = await locks.request('x', { ifAvailable: true }, async (lock) => ({ lock, bRan }));
    expect(during.lock === null || during.bRan).toBe(true);
    await b;
  });

  it('an aborted signal gives up the wait with an AbortError; the queue goes on without it', async () => {
    const locks = new InProcessLocks();
    const gate = deferred();
    const order: string[] = [];
    const a = locks.request('x', {}, () => gate.promise);
    const controller = new AbortController();
    const b = locks.request('x', { signal: controller.signal }, async () => {
      order.push('b');
    });
    const c = locks.request('x', {}, async () => {
      order.push('c');
    });
    await settle();
    controller.abort();
    await expect(b).rejects.toMatchObject({ name: 'AbortError', message: 'The lock request was aborted.' });
    expect((await locks.query()).pending).toEqual([{ name: 'x' }]);
    gate.resolve();
    await Promise.all([a, c]);
    expect(order).toEqual(['c']);
    // A signal aborted before the request never waits, even for a free name.
    await expect(locks.request('y', { signal: AbortSignal.abort() }, async () => 1)).rejects.toMatchObject({
      name: 'AbortError',
    });
    expect((await locks.query()).held).toEqual([]);
  });

  it('a signal that fires after the grant changes nothing, to the holder or to those waiting', async () => {
    const locks = new InProcessLocks();
    const gate = deferred();
    const a = locks.request('x', {}, () => gate.promise);
    const controller = new AbortController();
    const bHolds = deferred();
    const b = locks.request('x', { signal: controller.signal }, async () => {
      await bHolds.promise;
      return 'b ran';
    });
    const c = locks.request('x', {}, async () => 'c ran');
    gate.resolve();
    await a;
    await settle();
    controller.abort();
    expect((await locks.query()).pending).toEqual([{ name: 'x' }]);
    bHolds.resolve();
    expect(await Promise.all([b, c])).toEqual(['b ran', 'c ran']);
    expect(await locks.query()).toEqual({ held: [], pending: [] });
  });

  it('reset leaves no lock held and nobody waiting', async () => {
    const locks = new InProcessLocks();
    void locks.request('x', {}, () => new Promise(() => {}));
    void locks.request('x', {}, async () => undefined);
    await settle();
    locks.reset();
    expect(await locks.query()).toEqual({ held: [], pending: [] });
    expect(await locks.request('x', { ifAvailable: true }, async (lock) => lock)).toEqual({ name: 'x' });
  });
});

describe('RepoLocks', () => {
  it('makes a second writer wait until the first is done, and tells it what runs', async () => {
    const store = newStore();
    const order: string[] = [];
    const gate = deferred();
    const first = store.locks.withRepoLock('r', 'checkout of main', async () => {
      order.push('first');
      expect(store.locks.heldHereNow('r')).toBe(true);
      await gate.promise;
      order.push('first-done');
      return 1;
    });
    await settle();
    const waits: LockWait[] = [];
    const second = store.locks.withRepoLock(
      'r',
      'fetch',
      async () => {
        order.push('second');
        return 2;
      },
      { onWait: (w) => waits.push(w) },
    );
    await settle();
    expect(order).toEqual(['first']);
    expect(waits[0]).toEqual({ what: 'checkout of main' });
    expect(await store.locks.repoLockWanted('r')).toBe(true);
    expect(await store.locks.repoLockWanted('other')).toBe(false);
    gate.resolve();
    expect(await Promise.all([first, second])).toEqual([1, 2]);
    expect(order).toEqual(['first', 'first-done', 'second']);
    expect(store.locks.heldHereNow('r')).toBe(false);
    expect(await store.locks.repoLockWanted('r')).toBe(false);
  });

  it('other repos do not wait, and the lock is named by the namespace', async () => {
    const store = newStore();
    const gate = deferred();
    const first = store.locks.withRepoLock('r', 'a', () => gate.promise);
    await settle();
    expect(await store.locks.withRepoLock('s', 'b', async () => 'free')).toBe('free');
    expect(store.locks.lockName('r')).toBe('locktest-repo-r:write');
    expect(await store.storage.locks.query?.()).toMatchObject({ held: [{ name: 'locktest-repo-r:write' }] });
    gate.resolve();
    await first;
  });

  it('a waiter whose signal fires gets ABORTED and never runs; the holder is not affected', async () => {
    const store = newStore();
    const gate = deferred();
    const first = store.locks.withRepoLock('r', 'a', async () => {
      await gate.promise;
      return 'first';
    });
    await settle();
    const controller = new AbortController();
    let ran = false;
    const second = store.locks.withRepoLock(
      'r',
      'b',
      async () => {
        ran = true;
      },
      { signal: controller.signal },
    );
    await settle();
    controller.abort();
    await expect(second).rejects.toMatchObject({
      name: 'StoreError',
      code: 'ABORTED',
      message: "Stopped waiting for the other tab's work on this repository.",
    });
    gate.resolve();
    expect(await first).toBe('first');
    expect(ran).toBe(false);
    expect(store.locks.heldHereNow('r')).toBe(false);
  });

  it('an error of the operation is passed on as it is, and the lock is free after it', async () => {
    const store = newStore();
    const err = new Error('failed');
    await expect(
      store.locks.withRepoLock('r', 'a', async () => {
        throw err;
      }),
    ).rejects.toBe(err);
    expect(store.locks.heldHereNow('r')).toBe(false);
    expect(await store.locks.tryRepoLock('r', 'b', async () => 'ran')).toEqual({ value: 'ran' });
  });

  it('an AbortError of the operation itself, once the lock is held, is not a given-up wait', async () => {
    const store = newStore();
    const gate = deferred();
    const first = store.locks.withRepoLock('r', 'a', () => gate.promise);
    await settle();
    const abort = Object.assign(new Error('the operation stopped'), { name: 'AbortError' });
    const second = store.locks.withRepoLock('r', 'b', async () => {
      throw abort;
    });
    gate.resolve();
    await first;
    // Rethrown as ABORTED all the same: a wait given up and an operation stopped read the same to callers.
    await expect(second).rejects.toMatchObject({ code: 'ABORTED' });
    const plain = new Error('plain');
    const third = store.locks.withRepoLock('r', 'c', async () => {
      throw plain;
    });
    await expect(third).rejects.toBe(plain);
  });

  it('an error of an operation that waited for the lock is passed on as it is', async () => {
    const store = newStore();
    const gate = deferred();
    const first = store.locks.withRepoLock('r', 'a', () => gate.promise);
    await settle();
    const plain = new Error('plain');
    const second = store.locks.withRepoLock('r', 'b', async () => {
      throw plain;
    });
    await settle();
    gate.resolve();
    await first;
    await expect(second).rejects.toBe(plain);
  });

  it('onWait is not called when the lock is free, and not after a wait given up', async () => {
    const storage = memoryStorage();
    const holder = newStore(storage);
    const waiter = newStore(storage);
    const waits: LockWait[] = [];
    const onWait = (w: LockWait) => waits.push(w);
    expect(await waiter.locks.withRepoLock('r', 'free', async () => 'ran', { onWait })).toBe('ran');
    expect(waits).toEqual([]);
    const gate = deferred();
    const held = holder.locks.withRepoLock('r', 'clone', () => gate.promise);
    await settle();
    const controller = new AbortController();
    const waiting = waiter.locks.withRepoLock('r', 'fetch', async () => 'ran', {
      onWait,
      signal: controller.signal,
    });
    for (let i = 0; i < 50 && waits.length < 2; i++) await settle();
    controller.abort();
    await expect(waiting).rejects.toMatchObject({ code: 'ABORTED' });
    await expectDeafToLateNews(waits);
    gate.resolve();
    await held;
  });

  it('answers "who" once, only "who", and not once closed; a waiter hears only "busy" of its repo', async () => {
    const storage = memoryStorage();
    const holder = newStore(storage);
    const waiter = newStore(storage);
    // An operation before: its events opened the channel already.
    await holder.locks.withRepoLock('r', 'before', async () => undefined);
    const gate = deferred();
    const held = holder.locks.withRepoLock('r', 'clone', () => gate.promise);
    await settle();
    const waits: LockWait[] = [];
    const waiting = waiter.locks.withRepoLock('r', 'fetch', async () => 'ran', {
      onWait: (w) => waits.push(w),
    });
    for (let i = 0; i < 50 && waits.length < 2; i++) await settle();
    expect(waits).toEqual([{ what: undefined }, { what: 'clone' }]);
    const heard = listen();
    const asker = new BroadcastChannel('locktest-repos');
    channels.push(asker);
    // Not "who", and nothing at all: neither gets an answer, nor is news to the waiter.
    asker.postMessage(null);
    asker.postMessage({ type: 'idle', repoId: 'r', origin: 'x' } satisfies RepoEvent);
    asker.postMessage({ type: 'changed', repoId: 'r', what: 'push', origin: 'x' } satisfies RepoEvent);
    await settle();
    expect(waits).toHaveLength(2);
    asker.postMessage({ type: 'who', repoId: 'r', origin: 'x' } satisfies RepoEvent);
    await settle();
    const answers = () => heard.filter((e) => e?.type === 'busy' && e.origin === holder.locks.origin);
    expect(answers()).toEqual([{ type: 'busy', repoId: 'r', what: 'clone', origin: holder.locks.origin }]);
    holder.locks.close();
    asker.postMessage({ type: 'who', repoId: 'r', origin: 'x' } satisfies RepoEvent);
    await settle();
    expect(answers()).toHaveLength(1);
    gate.resolve();
    await held;
    expect(await waiting).toBe('ran');
  });

  it('underRepoLock runs at once inside this engine’s operation, and takes the lock outside one', async () => {
    const store = newStore();
    const order: string[] = [];
    await store.locks.withRepoLock('r', 'checkout', async () => {
      order.push(await store.locks.underRepoLock('r', 'blob fetch', async () => 'inside'));
    });
    expect(order).toEqual(['inside']);
    const gate = deferred();
    const other = newStore(store.storage);
    // Another engine on the same locks holds it: underRepoLock here waits for it.
    const held = other.locks.withRepoLock('r', 'clone', async () => {
      await gate.promise;
      order.push('clone');
    });
    await settle();
    const under = store.locks.underRepoLock('r', 'blob fetch', async () => {
      order.push('under');
    });
    await settle();
    expect(order).toEqual(['inside']);
    gate.resolve();
    await Promise.all([held, under]);
    expect(order).toEqual(['inside', 'clone', 'under']);
  });

  it('tryRepoLock and tryFillLock never wait: busy while held here or elsewhere', async () => {
    const store = newStore();
    const other = newStore(store.storage);
    let ran = 0;
    const inc = async () => ++ran;
    await store.locks.withRepoLock('r', 'op', async () => {
      expect(await store.locks.tryRepoLock('r', 'merge', inc)).toBe('busy');
      expect(await other.locks.tryRepoLock('r', 'merge', inc)).toBe('busy');
    });
    expect(ran).toBe(0);
    expect(await other.locks.tryRepoLock('r', 'merge', inc)).toEqual({ value: 1 });
    const gate = deferred();
    const fill = store.locks.tryFillLock('r', async () => {
      await gate.promise;
      return 'filled';
    });
    await settle();
    expect(await other.locks.tryFillLock('r', inc)).toBe('busy');
    // The fill lock is not the write lock.
    expect(await other.locks.tryRepoLock('r', 'merge', inc)).toEqual({ value: 2 });
    gate.resolve();
    expect(await fill).toEqual({ value: 'filled' });
    expect(await other.locks.tryFillLock('r', inc)).toEqual({ value: 3 });
  });

  it('repoLockFree waits for the holder; repoLockInUse sees a holder and a waiter of any engine', async () => {
    const store = newStore();
    const other = newStore(store.storage);
    expect(await store.locks.repoLockInUse('r')).toBe(false);
    const gate = deferred();
    let done = false;
    const held = other.locks.withRepoLock('r', 'clone', async () => {
      await gate.promise;
      done = true;
    });
    await settle();
    expect(await store.locks.repoLockInUse('r')).toBe(true);
    expect(await store.locks.repoLockInUse('s')).toBe(false);
    const free = store.locks.repoLockFree('r').then(() => done);
    await settle();
    gate.resolve();
    expect(await free).toBe(true);
    await held;
    expect(await store.locks.repoLockInUse('r')).toBe(false);
  });

  it('repoLockInUse sees a waiter alone, and without query() answers false', async () => {
    const locks = new InProcessLocks();
    let pending: { name?: string }[] = [];
    const queryOnly: LockManagerLike = {
      request: (n, o, cb) => locks.request(n, o, cb),
      query: async () => ({ held: [], pending }),
    };
    const store = newStore({ ...memoryStorage(), locks: queryOnly });
    pending = [{ name: store.locks.lockName('r') }];
    expect(await store.locks.repoLockInUse('r')).toBe(true);
    expect(await store.locks.repoLockWanted('r')).toBe(true);
    pending = [];
    const noQuery = newStore({
      ...memoryStorage(),
      locks: { request: (n, o, cb) => locks.request(n, o, cb) },
    });
    expect(await noQuery.locks.repoLockInUse('r')).toBe(false);
    expect(await noQuery.locks.repoLockWanted('r')).toBe(false);
  });

  it('a frame denied locks (SecurityError) runs the operation anyway, once', async () => {
    const denied: LockManagerLike = {
      request: async () => {
        throw Object.assign(new Error('denied'), { name: 'SecurityError' });
      },
    };
    const store = newStore({ ...memoryStorage(), locks: denied });
    let runs = 0;
    expect(
      await store.locks.withRepoLock('r', 'clone', async () => {
        runs++;
        expect(store.locks.heldHereNow('r')).toBe(true);
        return 'ok';
      }),
    ).toBe('ok');
    expect(runs).toBe(1);
    // Another error of the lock manager is passed on, and the operation does not run.
    const broken = newStore({
      ...memoryStorage(),
      locks: {
        request: async () => {
          throw new TypeError('broken');
        },
      },
    });
    await expect(broken.locks.withRepoLock('r', 'clone', async () => runs++)).rejects.toThrow('broken');
    expect(runs).toBe(1);
  });

  it('a SecurityError thrown by the operation itself is passed on, not a reason to run it again', async () => {
    const store = newStore();
    let runs = 0;
    const err = Object.assign(new Error('blocked'), { name: 'SecurityError' });
    await expect(
      store.locks.withRepoLock('r', 'clone', async () => {
        runs++;
        throw err;
      }),
    ).rejects.toBe(err);
    expect(runs).toBe(1);
  });

  it('says busy and idle to other tabs, and changed only when a commit made a new generation', async () => {
    const store = newStore();
    const heard = listen();
    await store.locks.withRepoLock('r', 'look', async () => undefined);
    await store.locks.withRepoLock('r', 'write', async () => {
      const fs = store.repoFs.open('r');
      await fs.promises.writeFile('/a', 'x');
      await fs.promises.flush();
    });
    await settle();
    const origin = store.locks.origin;
    expect(heard).toEqual([
      { type: 'busy', repoId: 'r', what: 'look', origin },
      { type: 'idle', repoId: 'r', origin },
      { type: 'busy', repoId: 'r', what: 'write', origin },
      { type: 'changed', repoId: 'r', what: 'write', origin },
      { type: 'idle', repoId: 'r', origin },
    ]);
  });

  it('answers "who" with what it runs, and a waiter hears it from the other engine', async () => {
    const storage = memoryStorage();
    const holder = newStore(storage);
    const waiter = newStore(storage);
    const gate = deferred();
    const held = holder.locks.withRepoLock('r', 'clone of big.git', () => gate.promise);
    await settle();
    const waits: LockWait[] = [];
    const waiting = waiter.locks.withRepoLock('r', 'fetch', async () => 'ran', {
      onWait: (w) => waits.push(w),
    });
    for (let i = 0; i < 50 && waits.length < 2; i++) await settle();
    // First nothing is known here (the holder is another engine), then the holder answers.
    expect(waits).toEqual([{ what: undefined }, { what: 'clone of big.git' }]);
    // "busy" about another repo is not this wait's news.
    // A "who" about a repo it does not hold gets no answer.
    const heard = listen();
    const asker = new BroadcastChannel('locktest-repos');
    channels.push(asker);
    asker.postMessage({ type: 'who', repoId: 'other', origin: 'x' } satisfies RepoEvent);
    asker.postMessage({ type: 'busy', repoId: 'other', what: 'elsewhere', origin: 'x' } satisfies RepoEvent);
    await settle();
    expect(heard.filter((e) => e.type === 'busy' && e.origin !== 'x')).toEqual([]);
    expect(waits).toHaveLength(2);
    gate.resolve();
    await held;
    expect(await waiting).toBe('ran');
  });

  it('a waiter stops listening once it holds the lock: later news of others is not its wait', async () => {
    const storage = memoryStorage();
    const holder = newStore(storage);
    const waiter = newStore(storage);
    const gate = deferred();
    const held = holder.locks.withRepoLock('r', 'clone', () => gate.promise);
    await settle();
    const waits: LockWait[] = [];
    const running = deferred();
    const waiting = waiter.locks.withRepoLock('r', 'fetch', () => running.promise, {
      onWait: (w) => waits.push(w),
    });
    for (let i = 0; i < 50 && waits.length < 2; i++) await settle();
    gate.resolve();
    await held;
    await settle();
    await expectDeafToLateNews(waits);
    running.resolve();
    await waiting;
  });

  it('dropAll leaves this engine holding nothing, as a terminated worker', async () => {
    const store = newStore();
    void store.locks.withRepoLock('r', 'clone', () => new Promise(() => {}));
    await settle();
    expect(store.locks.heldHereNow('r')).toBe(true);
    store.locks.dropAll();
    expect(store.locks.heldHereNow('r')).toBe(false);
    expect(await store.locks.tryRepoLock('r', 'repair', async () => 'free')).toEqual({ value: 'free' });
  });
});
