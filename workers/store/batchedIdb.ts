/**
 * A drop-in for lightning-fs's IdbBackend (the `db` option of its DefaultBackend) that turns one
 * IndexedDB transaction per file into one per superblock save. It stores through the engine's storage
 * (store/storage.ts FileRecords): IndexedDB by default, memory where asked; the batching is the same.
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
import type { FileRecords, RecordKey } from './storage.ts';

/** lightning-fs's in-memory superblock: a tree of Maps, stored as is (structured clone). */
export type Superblock = FS.SuperBlock;

const SUPERBLOCK_KEY = '!root';
/**
 * A new random value with every commit, in the same transaction: a worker that finds another value than
 * the one it last wrote or read knows another tab committed, and reloads its tree (repoFs syncRepoFs).
 */
const GENERATION_KEY = '!generation';

/**
 * While writes are held, contents of files new in the batch go to IndexedDB ahead of the commit, in
 * transactions of about this many bytes, so the final commit carries little more than the superblock, the
 * disk works while the writer computes, and the contents leave the worker's heap as soon as they are
 * stored. A checkout of the large fixture (20,000 files, 155 MB written, 58.5 MB fetched; `npm run bench --
 * --sizes large --runs 1 --profile --skip isogit,blame,embedOneFile,openOneFile,noopFetch,firstView`, the
 * checkout's steps), on one shared machine whose load moved between runs, so only the split is telling:
 *
 * | staged per transaction   | write-files | commit   | checkout total | worker peak heap | machine load |
 * | ------------------------ | ----------- | -------- | -------------- | ---------------- | ------------ |
 * | none (all at the commit) | 9,957 ms    | 5,727 ms | 25.9 s         | 527 MB           | 12           |
 * | 4 MB                     | 6,035 ms    | 3,471 ms | 15.6 s         | 555 MB           | 8            |
 * | 1 MB                     | 7,403 ms    | 5,980 ms | 22.6 s         | 567 MB           | 8            |
 * | none, quiet              | 4,351 ms    | 2,891 ms | 11.9 s         | 653 MB           | 1.9          |
 * | 4 MB, quiet              | 4,310 ms    | 2,424 ms | 11.3 s         | 643 MB           | 1.8          |
 * | none, quiet              | 4,177 ms    | 2,621 ms | 11.0 s         | 615 MB           | 2.1          |
 * | 4 MB, quiet              | 4,204 ms    | 2,564 ms | 11.1 s         | 562 MB           | 2.1          |
 *
 * Kept: within the noise on a quiet machine, and it holds less in memory until the commit
 * (docs/decisions/working-tree-storage.md).
 *
 * Staged contents are not named by any stored superblock until the commit, so a crash leaves them as
 * unnamed records, which startup repair deletes (repair.ts); a discard deletes them at once.
 */
export const STAGE_BYTES = 4 * 1024 * 1024;

/**
 * Contents stored ahead of the tree that will name them (stageAhead) may be in transactions not yet
 * complete up to about this many bytes; past it, the next stageAhead waits for the oldest to complete. It
 * bounds what a checkout holds in memory while IndexedDB writes behind it.
 */
export const STAGE_AHEAD_BYTES = 16 * 1024 * 1024;

/** Marks a buffer whose writer gave it up (a pack just received), so stored without a defensive copy. */
const HANDED_OVER = Symbol('handed over to the file system');

/**
 * Marks `bytes` as given to the file system for good: the writer will not change nor reuse them, and they
 * fill their whole ArrayBuffer, so writeFile keeps them as they are instead of copying. A pack is then held
 * once, not twice, until IndexedDB stores it. The mark is on the buffer itself, so it needs no registry.
 */
export function handOver(bytes: Uint8Array): Uint8Array {
  if (bytes.byteOffset === 0 && bytes.byteLength === bytes.buffer.byteLength) {
    Object.defineProperty(bytes, HANDED_OVER, { value: true });
  }
  return bytes;
}

function isHandedOver(bytes: Uint8Array): boolean {
  return (bytes as Uint8Array & { [HANDED_OVER]?: true })[HANDED_OVER] === true;
}

export class BatchedIdb {
  /** Contents waiting for the next commit, by inode; null is an unlink. */
  private pending = new Map<number, Uint8Array | null>();
  /** Batches being committed right now: still what reads must see until their transaction completes. */
  private committing: Map<number, Uint8Array | null>[] = [];
  /** Inodes numbered during the current hold: no stored superblock names them, so they can be staged. */
  private fresh = new Set<number>();
  /** Bytes of fresh contents pending, not yet staged. */
  private freshBytes = 0;
  /** Fresh contents in a staging transaction right now: reads see them until it completes. */
  private staging: Map<number, Uint8Array>[] = [];
  /** Inodes whose contents this hold stored ahead of its commit (stage()). */
  private staged = new Set<number>();
  /** The first staging transaction that failed: the whole batch then fails at its commit. */
  private stageError: unknown = null;
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
  /** Contents staged ahead (stageAhead) waiting for their transaction, by inode, and their bytes. */
  private ahead = new Map<number, Uint8Array>();
  private aheadBytes = 0;
  /** Transactions of contents staged ahead not yet complete, oldest first. */
  private aheadInFlight: { bytes: number; done: Promise<void> }[] = [];
  private aheadInFlightBytes = 0;
  /** The first transaction of contents staged ahead that failed: every later call throws it. */
  private aheadError: unknown = null;
  /** The generation this worker's tree was loaded at or last committed. */
  generation: string | undefined;
  /** Whether a save carrying no file may be committed (repoFs: only under the repo's write lock). */
  mayCommitBareSave: (() => boolean) | undefined;
  /** Whether lightning-fs has loaded the stored tree through this instance. */
  loaded = false;
  /** STAGE_BYTES; tests stage every write with 1. */
  stageBytes = STAGE_BYTES;
  /** Write transactions committed, for tests and benchmarks. */
  transactions = 0;
  /**
   * Called when a commit failed: its writes are dropped, so lightning-fs's in-memory tree names files
   * IndexedDB does not hold, and must be reloaded from what is stored (repoFs.ts deactivates it).
   */
  onCommitFailed: (() => void) | undefined;

  constructor(
    readonly dbName: string,
    /** Where the records go: one database of the engine's storage. */
    private readonly records: FileRecords,
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
    const [superblock, generation] = (await this.records.getMany([SUPERBLOCK_KEY, GENERATION_KEY])) as [
      Superblock,
      string | undefined,
    ];
    this.generation = generation;
    this.loaded = true;
    return superblock;
  }

  /** The inodes whose contents IndexedDB holds (committed): startup repair looks for the ones missing. */
  async storedInodes(): Promise<Set<number>> {
    await this.chain;
    const keys = await this.records.keys();
    return new Set(keys.filter((k): k is number => typeof k === 'number'));
  }

  /** The generation IndexedDB holds now: another than `generation` means another tab committed. */
  async storedGeneration(): Promise<string | undefined> {
    await this.chain;
    return (await this.records.get(GENERATION_KEY)) as string | undefined;
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
    return (await this.records.get(inode)) as Uint8Array | undefined;
  }

  writeFile(inode: number, data: Uint8Array): Promise<void> {
    // A copy unless handed over: the caller may reuse its buffer, and a pooled Node Buffer would store its
    // whole slab.
    this.pending.set(inode, isHandedOver(data) ? data : new Uint8Array(data));
    if (this.holds > 0 && this.fresh.has(inode) && !this.dead) {
      this.freshBytes += data.byteLength;
      if (this.freshBytes >= this.stageBytes) this.stage();
    }
    return Promise.resolve();
  }

  /**
   * lightning-fs numbered a new inode (RepoFsBackend): while held, its contents are new to IndexedDB and
   * may be stored before the commit. Outside a hold the next commit stores them anyway.
   */
  noteNewInode(inode: number): void {
    if (this.holds > 0) this.fresh.add(inode);
  }

  /**
   * Stores the contents of a file that no tree names yet, under an inode number nobody else will use
   * (RepoFsBackend.reserveInode), in transactions of about `stageBytes`, without holding writes: what the
   * inode will be once a held write places it (adoptStagedAhead: what is not in a transaction by then is
   * committed with the hold), or what dropStagedAhead deletes. Waits
   * while STAGE_AHEAD_BYTES are in transactions not yet complete. `data` is stored as it is: the caller
   * must not change it afterwards. A crash leaves unnamed records, which startup repair deletes.
   */
  async stageAhead(inode: number, data: Uint8Array): Promise<void> {
    if (this.aheadError !== null) throw this.aheadError;
    if (this.dead) return;
    this.ahead.set(inode, data);
    this.aheadBytes += data.byteLength;
    if (this.aheadBytes >= this.stageBytes) this.storeAhead();
    while (this.aheadInFlightBytes > STAGE_AHEAD_BYTES && this.aheadInFlight.length > 0) {
      await this.aheadInFlight[0].done;
    }
    if (this.aheadError !== null) throw this.aheadError;
  }

  /** Resolves once every content staged ahead so far is stored; throws if one could not be. */
  async flushStagedAhead(): Promise<void> {
    if (this.aheadBytes > 0 || this.ahead.size > 0) this.storeAhead();
    while (this.aheadInFlight.length > 0) await this.aheadInFlight[0].done;
    if (this.aheadError !== null) throw this.aheadError;
  }

  /**
   * The held write that places these inodes in the tree names them from its commit on: until then they
   * are this hold's staged contents, deleted if it is discarded.
   */
  adoptStagedAhead(inodes: Iterable<number>): void {
    if (this.holds === 0) throw new Error('BatchedIdb.adoptStagedAhead() outside a hold');
    for (const inode of inodes) {
      const data = this.ahead.get(inode);
      if (data === undefined) {
        this.staged.add(inode);
        continue;
      }
      // Not in a transaction yet (the last, partial one): it rides with the hold's commit instead of
      // costing a transaction of its own just before it.
      this.ahead.delete(inode);
      this.aheadBytes -= data.byteLength;
      this.pending.set(inode, data);
    }
  }

  /** Deletes contents staged ahead that no tree will name (the checkout that staged them failed). */
  dropStagedAhead(inodes: number[]): Promise<void> {
    this.ahead.clear();
    this.aheadBytes = 0;
    this.aheadError = null;
    if (inodes.length === 0 || this.dead) return Promise.resolve();
    // Chained after the puts, so none lands after its delete. If the delete fails, repair finds them.
    const run = this.chain.then(() => this.records.write(deletions(inodes)).catch(() => undefined));
    this.chain = run;
    return run;
  }

  private storeAhead(): void {
    const batch = this.ahead;
    const bytes = this.aheadBytes;
    this.ahead = new Map();
    this.aheadBytes = 0;
    const run = this.chain.then(async () => {
      if (this.aheadError !== null || this.dead) return;
      try {
        // Once the records are open, write() takes its copy before it returns: this worker need not hold
        // the contents until they are stored.
        await this.records.ready();
        const written = this.records.write([...batch]);
        batch.clear();
        await written;
      } catch (err) {
        this.aheadError ??= await storageErrorWithFigures(err, 'the changes', bytes);
      }
    });
    this.chain = run;
    const entry = { bytes, done: run };
    this.aheadInFlight.push(entry);
    this.aheadInFlightBytes += bytes;
    void run.finally(() => {
      this.aheadInFlight.splice(this.aheadInFlight.indexOf(entry), 1);
      this.aheadInFlightBytes -= bytes;
    });
  }

  /** Stores the fresh contents pending now, in a transaction of their own, ahead of the commit. */
  private stage(): void {
    const batch = new Map<number, Uint8Array>();
    for (const [inode, data] of this.pending) {
      if (data !== null && this.fresh.has(inode)) batch.set(inode, data);
    }
    this.freshBytes = 0;
    if (batch.size === 0) return;
    for (const inode of batch.keys()) this.pending.delete(inode);
    this.staging.push(batch);
    const run = this.chain.then(async () => {
      try {
        if (this.stageError !== null || this.dead || this.ignoringSaves) return;
        await this.records.write(batch);
        for (const inode of batch.keys()) this.staged.add(inode);
      } catch (err) {
        let bytes = 0;
        for (const data of batch.values()) bytes += data.byteLength;
        this.stageError ??= await storageErrorWithFigures(err, 'the changes', bytes);
      } finally {
        this.staging.splice(this.staging.indexOf(batch), 1);
      }
    });
    this.chain = run;
  }

  /** Ends the hold's staging: nothing is fresh or staged any more (committed, dropped or wiped). */
  private forgetStaging(): void {
    this.staged = new Set();
    this.fresh = new Set();
    this.freshBytes = 0;
    this.stageError = null;
  }

  /** Deletes what this hold staged (its commit will not happen): no superblock will ever name it. */
  private dropStaged(): void {
    const inodes = [...this.staged, ...this.staging.flatMap((b) => [...b.keys()])];
    this.forgetStaging();
    if (inodes.length === 0) return;
    // Chained after any staging in flight, so its put cannot land after this delete. If the delete itself
    // fails, startup repair finds the unnamed records.
    this.chain = this.chain.then(() => this.records.write(deletions(inodes)).catch(() => undefined));
  }

  /** Deletes stored contents that no superblock names (startup repair, under the repo's write lock). */
  async deleteUnnamed(inodes: number[]): Promise<void> {
    await this.chain;
    await this.records.write(deletions(inodes));
  }

  unlink(inode: number): Promise<void> {
    this.pending.set(inode, null);
    return Promise.resolve();
  }

  async wipe(): Promise<void> {
    this.pending.clear();
    this.forgetStaging();
    this.heldSuperblock = undefined;
    await this.records.clear();
  }

  /** lightning-fs closes its backend when it goes idle; held writes stay in memory for the next commit. */
  async close(): Promise<void> {
    await this.chain;
    if (this.pending.size > 0 || this.heldSuperblock !== undefined) return;
    await this.records.close();
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
    if (!this.dead) this.dropStaged();
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
    await this.records.ready();
    if (this.ignoringSaves || this.dead) return;
    // From here to the last put nothing awaits, so the batch and the superblock are taken at one instant.
    const batch = this.pending;
    this.pending = new Map();
    const waiters = this.holds === 0 ? this.commitWaiters.splice(0) : [];
    const generation = Math.random().toString(36).slice(2);
    this.committing.push(batch);
    // A staging transaction of this batch failed, or one of contents staged ahead that it names (chained
    // before this commit, so they have settled).
    const failedBefore = this.stageError ?? (this.staged.size > 0 ? this.aheadError : null);
    try {
      if (failedBefore !== null) throw failedBefore;
      const changes: [RecordKey, unknown][] = [...batch];
      changes.push([SUPERBLOCK_KEY, superblock], [GENERATION_KEY, generation]);
      await this.records.write(changes);
      this.transactions++;
      this.generation = generation;
      // The superblock now names what was staged: it is committed like the rest.
      this.forgetStaging();
      this.settleWaiters(waiters, true);
    } catch (err) {
      this.settleWaiters(waiters, false);
      this.dropStaged();
      // Dropped, not put back: a batch the disk refused would fail again on every later save, and
      // would ride along with writes that could otherwise be stored. What IndexedDB holds is the last
      // committed superblock and its files, so the in-memory tree is reloaded from there.
      this.ignoringSaves = true;
      this.heldSuperblock = undefined;
      this.onCommitFailed?.();
      if (err === failedBefore) throw err;
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
    for (let i = this.staging.length - 1; i >= 0; i--) {
      if (this.staging[i].has(inode)) return this.staging[i].get(inode);
    }
    for (let i = this.committing.length - 1; i >= 0; i--) {
      if (this.committing[i].has(inode)) return this.committing[i].get(inode);
    }
    return undefined;
  }
}

function deletions(inodes: number[]): [RecordKey, null][] {
  return inodes.map((inode) => [inode, null]);
}
