/**
 * A drop-in for lightning-fs's IdbBackend (the `db` option of its DefaultBackend) that turns one
 * IndexedDB transaction per file into one per superblock save.
 *
 * lightning-fs keeps the directory tree (the "superblock") in memory and file contents in IndexedDB
 * under their inode number; its IdbBackend opens a transaction for every write, so writing a working
 * tree of n files costs n transactions. Here writes and unlinks wait in memory (reads see them first)
 * and are committed together with the superblock, in one transaction, when lightning-fs saves it: 500 ms
 * after the last change, on `fs.promises.flush()` and when the file system goes idle. Each commit is
 * atomic, so what IndexedDB holds is always a superblock and the file contents it names.
 *
 * The layout is lightning-fs's own (database `name`, store `name + "_files"`, superblock under `!root`,
 * contents under the inode number), so repositories stored by the default backend stay readable.
 */

import type FS from '@isomorphic-git/lightning-fs';
import { storageErrorWithFigures } from './errors.ts';

/** lightning-fs's in-memory superblock: a tree of Maps, stored as is (structured clone). */
export type Superblock = FS.SuperBlock;

const SUPERBLOCK_KEY = '!root';
/**
 * A new random value with every commit, in the same transaction: a worker that finds another value than
 * the one it last wrote or read knows another tab committed, and reloads its tree (repoFs syncRepoFs).
 */
const GENERATION_KEY = '!generation';

/** Buffers whose writer gave them up (a pack just received), so stored without a defensive copy. */
const handedOver = new WeakSet<Uint8Array>();

/**
 * Marks `bytes` as given to the file system for good: the writer will not change nor reuse them, and they
 * fill their whole ArrayBuffer, so writeFile keeps them as they are instead of copying. A pack is then held
 * once, not twice, until IndexedDB stores it.
 */
export function handOver(bytes: Uint8Array): Uint8Array {
  if (bytes.byteOffset === 0 && bytes.byteLength === bytes.buffer.byteLength) handedOver.add(bytes);
  return bytes;
}

export class BatchedIdb {
  /** Contents waiting for the next commit, by inode; null is an unlink. */
  private pending = new Map<number, Uint8Array | null>();
  /** Batches being committed right now: still what reads must see until their transaction completes. */
  private committing: Map<number, Uint8Array | null>[] = [];
  private dbPromise: Promise<IDBDatabase> | undefined;
  private holds = 0;
  /** A superblock lightning-fs asked to save while writes were held; committed on release. */
  private heldSuperblock: Superblock | undefined;
  /** Set by discard() until lightning-fs reloads the superblock: its in-memory tree is not to be saved. */
  private ignoringSaves = false;
  private chain: Promise<void> = Promise.resolve();
  /** Waiting for the writes pending now to be committed (true) or dropped (false). */
  private commitWaiters: ((committed: boolean) => void)[] = [];
  /** Set by kill(): this instance stands for a terminated worker and stores nothing any more. */
  private dead = false;
  /** The generation this worker's tree was loaded at or last committed. */
  generation: string | undefined;
  /** Whether a save carrying no file may be committed (repoFs: only under the repo's write lock). */
  mayCommitBareSave: (() => boolean) | undefined;
  /** Whether lightning-fs has loaded the stored tree through this instance. */
  loaded = false;
  /** Write transactions committed, for tests and benchmarks. */
  transactions = 0;
  /**
   * Called when a commit failed: its writes are dropped, so lightning-fs's in-memory tree names files
   * IndexedDB does not hold, and must be reloaded from what is stored (repoFs.ts deactivates it).
   */
  onCommitFailed: (() => void) | undefined;

  constructor(
    readonly dbName: string,
    readonly storeName = `${dbName}_files`,
  ) {}

  /** Writes (and unlinks) not yet committed. */
  get pendingWrites(): number {
    return this.pending.size;
  }

  get held(): boolean {
    return this.holds > 0;
  }

  // lightning-fs's typings say Uint8Array; DefaultBackend hands over its Map tree.
  saveSuperblock(superblock: unknown): Promise<void> {
    if (this.ignoringSaves || this.dead) return Promise.resolve();
    // A save with no file written is lightning-fs going idle after reads (or a mkdir, a rename). From a
    // worker that does not hold the repo's write lock its tree may be older than another tab's commit:
    // storing it would erase that commit.
    if (this.pending.size === 0 && this.holds === 0 && this.mayCommitBareSave && !this.mayCommitBareSave()) {
      return Promise.resolve();
    }
    if (this.holds > 0) {
      this.heldSuperblock = superblock as Superblock;
      return Promise.resolve();
    }
    return this.commit(superblock as Superblock);
  }

  /** The stored superblock, or undefined for a new database (lightning-fs then starts an empty tree). */
  async loadSuperblock(): Promise<Superblock> {
    this.ignoringSaves = false;
    // While writes are held, the newest tree is the held one: IndexedDB's would not name the held files.
    if (this.heldSuperblock !== undefined) return this.heldSuperblock;
    await this.chain;
    const [superblock, generation] = await this.requestMany<[Superblock, string | undefined]>((store) => [
      store.get(SUPERBLOCK_KEY),
      store.get(GENERATION_KEY),
    ]);
    this.generation = generation;
    this.loaded = true;
    return superblock;
  }

  /** The inodes whose contents IndexedDB holds (committed): startup repair looks for the ones missing. */
  async storedInodes(): Promise<Set<number>> {
    await this.chain;
    const keys = await this.request<IDBValidKey[]>('readonly', (store) => store.getAllKeys());
    return new Set(keys.filter((k): k is number => typeof k === 'number'));
  }

  /** The generation IndexedDB holds now: another than `generation` means another tab committed. */
  async storedGeneration(): Promise<string | undefined> {
    await this.chain;
    return this.request('readonly', (store) => store.get(GENERATION_KEY));
  }

  /**
   * Resolves true once every write made so far is committed, false if they are dropped instead (a
   * discard, a failed commit): what depends on them being stored (the registry's figures) waits for it.
   */
  whenCommitted(): Promise<boolean> {
    if (this.pending.size === 0 && this.heldSuperblock === undefined && this.holds === 0) {
      return this.chain.then(() => true);
    }
    return new Promise((resolve) => this.commitWaiters.push(resolve));
  }

  /** What a terminated worker leaves behind: writes not committed are lost, and nothing is stored later. */
  kill(): void {
    this.dead = true;
    this.discard();
  }

  async readFile(inode: number): Promise<Uint8Array | undefined> {
    const pending = this.lookupPending(inode);
    if (pending !== undefined) return pending ?? undefined;
    return this.request('readonly', (store) => store.get(inode));
  }

  writeFile(inode: number, data: Uint8Array): Promise<void> {
    // A copy unless handed over: the caller may reuse its buffer, and a pooled Node Buffer would store its
    // whole slab.
    this.pending.set(inode, handedOver.has(data) ? data : new Uint8Array(data));
    return Promise.resolve();
  }

  unlink(inode: number): Promise<void> {
    this.pending.set(inode, null);
    return Promise.resolve();
  }

  async wipe(): Promise<void> {
    this.pending.clear();
    this.heldSuperblock = undefined;
    await this.request('readwrite', (store) => store.clear());
  }

  /** lightning-fs closes its backend when it goes idle; held writes stay in memory for the next commit. */
  async close(): Promise<void> {
    await this.chain;
    if (this.pending.size > 0 || this.heldSuperblock !== undefined || !this.dbPromise) return;
    const db = await this.dbPromise.catch(() => undefined);
    this.dbPromise = undefined;
    db?.close();
  }

  /**
   * Keeps every write in memory, superblock saves included, until release(): what happens in between
   * reaches IndexedDB as one transaction, or not at all if discard() is called instead.
   */
  hold(): void {
    this.holds++;
  }

  /** Ends a hold; the last one commits what was held if lightning-fs saved its superblock meanwhile. */
  async release(): Promise<void> {
    if (this.holds === 0) throw new Error('BatchedIdb.release() without hold()');
    this.holds--;
    if (this.holds > 0 || this.heldSuperblock === undefined) return;
    const superblock = this.heldSuperblock;
    this.heldSuperblock = undefined;
    await this.commit(superblock);
  }

  /**
   * Drops every write not yet committed and ends all holds. lightning-fs's in-memory superblock still
   * names the dropped files, so saves are ignored until it reloads the superblock: deactivate the file
   * system right after (see discardRepoFsChanges in repoFs.ts).
   */
  discard(): void {
    this.settleWaiters(this.commitWaiters.splice(0), false);
    this.pending.clear();
    this.heldSuperblock = undefined;
    this.holds = 0;
    this.ignoringSaves = true;
  }

  /** Commits are chained so they reach IndexedDB in the order lightning-fs asked for them. */
  private commit(superblock: Superblock): Promise<void> {
    const run = this.chain.then(() => this.commitNow(superblock));
    this.chain = run.catch(() => undefined);
    return run;
  }

  private async commitNow(superblock: Superblock): Promise<void> {
    if (this.ignoringSaves || this.dead) return;
    const db = await this.db();
    if (this.ignoringSaves || this.dead) return;
    // From here to the last put nothing awaits, so the batch and the superblock are taken at one instant.
    const batch = this.pending;
    this.pending = new Map();
    const waiters = this.holds === 0 ? this.commitWaiters.splice(0) : [];
    const generation = Math.random().toString(36).slice(2);
    this.committing.push(batch);
    try {
      await new Promise<void>((resolve, reject) => {
        const tx = db.transaction(this.storeName, 'readwrite');
        tx.oncomplete = () => resolve();
        tx.onabort = tx.onerror = () => reject(tx.error);
        const store = tx.objectStore(this.storeName);
        try {
          for (const [inode, data] of batch) {
            if (data === null) store.delete(inode);
            else store.put(data, inode);
          }
          store.put(superblock, SUPERBLOCK_KEY);
          store.put(generation, GENERATION_KEY);
        } catch (err) {
          // A put can throw at once (a quota check, a clone failure): none of the batch may be stored.
          tx.abort();
          reject(err);
        }
      });
      this.transactions++;
      this.generation = generation;
      this.settleWaiters(waiters, true);
    } catch (err) {
      this.settleWaiters(waiters, false);
      // Dropped, not put back: a batch the disk refused would fail again on every later save, and
      // would ride along with writes that could otherwise be stored. What IndexedDB holds is the last
      // committed superblock and its files, so the in-memory tree is reloaded from there.
      this.ignoringSaves = true;
      this.heldSuperblock = undefined;
      this.onCommitFailed?.();
      let bytes = 0;
      for (const data of batch.values()) bytes += data?.byteLength ?? 0;
      throw await storageErrorWithFigures(err, 'the changes', bytes);
    } finally {
      this.committing.splice(this.committing.indexOf(batch), 1);
    }
  }

  private settleWaiters(waiters: ((committed: boolean) => void)[], committed: boolean): void {
    for (const w of waiters) w(committed);
  }

  private lookupPending(inode: number): Uint8Array | null | undefined {
    if (this.pending.has(inode)) return this.pending.get(inode);
    for (let i = this.committing.length - 1; i >= 0; i--) {
      if (this.committing[i].has(inode)) return this.committing[i].get(inode);
    }
    return undefined;
  }

  private db(): Promise<IDBDatabase> {
    this.dbPromise ??= new Promise<IDBDatabase>((resolve, reject) => {
      const req = indexedDB.open(this.dbName);
      req.onupgradeneeded = () => req.result.createObjectStore(this.storeName);
      req.onsuccess = () => {
        const db = req.result;
        // Deleting the repo's database must not wait for this connection.
        db.onversionchange = () => {
          db.close();
          this.dbPromise = undefined;
        };
        resolve(db);
      };
      req.onerror = () => reject(req.error);
    });
    const opening = this.dbPromise;
    opening.catch(() => {
      if (this.dbPromise === opening) this.dbPromise = undefined;
    });
    return opening;
  }

  private async requestMany<T extends unknown[]>(make: (store: IDBObjectStore) => IDBRequest[]): Promise<T> {
    const db = await this.db();
    return new Promise<T>((resolve, reject) => {
      const tx = db.transaction(this.storeName, 'readonly');
      const reqs = make(tx.objectStore(this.storeName));
      tx.oncomplete = () => resolve(reqs.map((r) => r.result) as T);
      tx.onabort = tx.onerror = () => reject(tx.error);
    });
  }

  private async request<T>(
    mode: IDBTransactionMode,
    make: (store: IDBObjectStore) => IDBRequest,
  ): Promise<T> {
    const db = await this.db();
    return new Promise<T>((resolve, reject) => {
      const tx = db.transaction(this.storeName, mode);
      const req = make(tx.objectStore(this.storeName));
      tx.oncomplete = () => resolve(req.result as T);
      tx.onabort = tx.onerror = () => reject(tx.error ?? req.error);
    });
  }
}
