import FS from '@isomorphic-git/lightning-fs';
import CacheFS from '@isomorphic-git/lightning-fs/src/CacheFS.js';
import DefaultBackend from '@isomorphic-git/lightning-fs/src/DefaultBackend.js';
import { BatchedIdb } from './batchedIdb.ts';
import { StoreError, storageError } from './errors.ts';
import type { FsMutex, Storage, StorageNames } from './storage.ts';

/** The git directory inside each repo's file system; `/` stays free for a working tree. */
export const GITDIR = '/.git';

export type PromiseFs = FS.PromisifiedFS;

export interface OpenRepoFs {
  fs: FS;
  db: BatchedIdb;
  /** Absent when made with lightning-fs's own backend (fixInodeWalk false, for benchmarks). */
  backend?: RepoFsBackend;
}

/**
 * How long a delete waits for other connections to the repo's database (another tab's worker) to close
 * after IndexedDB asked them to. Ours close at once on `versionchange`; one that does not is a tab that
 * is busy or hung, and the person is better told than kept waiting.
 */
export const DELETE_BLOCKED_TIMEOUT_MS = 10_000;

/**
 * One lightning-fs (one database) per repo, so deleting a repo is dropping a database, each with its file
 * contents behind BatchedIdb: one transaction per superblock save instead of one per file. One instance per
 * engine: the file systems it opened, the repos it deleted, and who is told when another tab committed.
 */
export class RepoFileSystems {
  private readonly opened = new Map<string, OpenRepoFs>();
  /** Repos deleted by this engine: a late write (a lazy fetch finishing) must not recreate their database. */
  private readonly deleted = new Set<string>();
  private readonly reloadListeners: ((repoId: string) => void)[] = [];

  constructor(
    private readonly storage: Storage,
    private readonly names: StorageNames,
    /** Whether this engine holds the repo's write lock (repoLock.ts): only then may a bare save commit. */
    private readonly writerCheck: (repoId: string) => boolean,
  ) {}

  dbName(repoId: string): string {
    return this.names.repoDatabase(repoId);
  }

  /** The repo's lightning-fs, opened on first use. */
  open(repoId: string): FS {
    return this.entry(repoId).fs;
  }

  /**
   * Opens the repo's database and loads its file tree now, for a write that comes later: a clone opens its
   * new database while its fetch waits on the network instead of after it. A failure is left for that
   * write to meet and report (writeAllOrNothing activates the same way), so this never rejects.
   */
  prepare(repoId: string): Promise<void> {
    return this.open(repoId)
      .promises.stat('/')
      .then(
        () => undefined,
        () => undefined,
      );
  }

  /** The repo's storage backend, for tests and benchmarks that count its transactions, and for repair. */
  backend(repoId: string): BatchedIdb {
    return this.entry(repoId).db;
  }

  private entry(repoId: string): OpenRepoFs {
    if (this.deleted.has(repoId)) {
      throw new StoreError('REPO_NOT_FOUND', `The repository "${repoId}" was deleted from this browser.`);
    }
    let entry = this.opened.get(repoId);
    if (!entry) {
      entry = createBatchedFs(this.storage, this.dbName(repoId));
      entry.db.mayCommitBareSave = () => this.writerCheck(repoId);
      this.opened.set(repoId, entry);
    }
    return entry;
  }

  /**
   * Lets a deleted repo be made again under the same id: for repos whose id is derived from their URL (the
   * minimal reads), where a new read after a delete is a new request, not a late write.
   */
  allowRecreate(repoId: string): void {
    this.deleted.delete(repoId);
  }

  /**
   * Runs `write` with every change to the repo's files held in memory, then stores them all in one
   * transaction. If `write` throws, nothing it did is stored and the file tree is read back from storage,
   * as it was before. Changes made meanwhile by anything else on the same repo share that fate, so callers
   * run one writing operation per repo at a time. `newDatabase`: the repo's database was made for this
   * batch (a clone), so nothing was written before it.
   */
  async writeAllOrNothing<T>(
    repoId: string,
    write: () => Promise<T>,
    opts: { newDatabase?: boolean } = {},
  ): Promise<T> {
    const { fs, db } = this.entry(repoId);
    // lightning-fs's flush fails on a file system not yet initialised (a new repo): any call does that.
    await fs.promises.stat('/').catch(() => undefined);
    // What was written before is not part of this batch: store it now, so a discard cannot take it along.
    // A new database has nothing before: its flush would only store an empty tree, a transaction of 4 to 6 ms
    // on a small clone's path (docs/decisions/clone-fixed-costs.md).
    if (!opts.newDatabase) await fs.promises.flush();
    db.hold();
    let result: T;
    try {
      result = await write();
    } catch (err) {
      await this.discard(repoId);
      throw err;
    }
    try {
      // The superblock lightning-fs saves on flush (or saved while held, if it went idle) carries every write.
      await db.release();
      await fs.promises.flush();
    } catch (err) {
      // Not stored (a full disk, say): then not kept in memory either, where a later save would store it.
      await this.discard(repoId);
      throw storageError(err, 'the changes');
    }
    return result;
  }

  /** Drops the repo's uncommitted writes and makes lightning-fs reload its file tree from storage. */
  async discard(repoId: string): Promise<void> {
    const entry = this.opened.get(repoId);
    if (!entry) return;
    entry.db.discard();
    // Deactivating drops lightning-fs's in-memory superblock (its save is ignored after discard); the next
    // call loads the stored one.
    await deactivate(entry.fs);
  }

  /**
   * Registers what must be forgotten when the repo's files were changed by another tab (the pack set,
   * isomorphic-git's cache): called after sync() found a newer tree.
   */
  onReloaded(listener: (repoId: string) => void): void {
    this.reloadListeners.push(listener);
  }

  /**
   * Makes this engine see what another tab committed: lightning-fs keeps the tree in memory, and a tab that
   * wrote on a stale tree would erase the other's files. One small read of the stored generation; when it
   * differs, the tree is reloaded and the listeners told. Skipped while this engine has writes of its own
   * in flight (it holds the lock then, so nobody else can have committed). Returns whether it reloaded.
   */
  async sync(repoId: string): Promise<boolean> {
    const entry = this.opened.get(repoId);
    if (!entry) return false;
    const { fs, db } = entry;
    // Not yet loaded here: the first use reads the stored tree anyway.
    if (db.generation === undefined && !db.loaded) return false;
    if (db.held || db.pendingWrites > 0) return false;
    let stored: string | undefined;
    try {
      stored = await db.storedGeneration();
    } catch {
      return false;
    }
    if (stored === db.generation || db.held || db.pendingWrites > 0) return false;
    // Not flushed: the tree in memory is the older one, and saving it would erase the other tab's commit.
    db.discard();
    await deactivate(fs);
    for (const listener of this.reloadListeners) listener(repoId);
    return true;
  }

  /** The generation of the repo's tree this engine holds (undefined when not open): see BatchedIdb. */
  generation(repoId: string): string | undefined {
    return this.opened.get(repoId)?.db.generation;
  }

  /** Whether the repo's writes are held for an all-or-nothing batch (writeAllOrNothing) right now. */
  held(repoId: string): boolean {
    return this.opened.get(repoId)?.db.held ?? false;
  }

  /** Resolves true once the repo's writes so far are committed, false if they were dropped. */
  committed(repoId: string): Promise<boolean> {
    const entry = this.opened.get(repoId);
    return entry ? entry.db.whenCommitted() : Promise.resolve(true);
  }

  /**
   * For crash tests: what a terminated worker leaves. Every open repo loses its uncommitted writes and
   * stores nothing more (its lightning-fs saves are ignored), and this engine forgets it all.
   */
  async abandonAll(): Promise<void> {
    const entries = [...this.opened];
    this.opened.clear();
    this.deleted.clear();
    for (const [repoId, entry] of entries) {
      entry.db.kill();
      await deactivate(entry.fs).catch(() => undefined);
      for (const listener of this.reloadListeners) listener(repoId);
    }
  }

  private stagingOf(repoId: string): { db: BatchedIdb; backend: RepoFsBackend } {
    const { db, backend } = this.entry(repoId);
    if (!backend) throw new Error('Files are staged ahead only through RepoFsBackend');
    return { db, backend };
  }

  /**
   * Stores `data` as the contents of a file the repo's tree does not name yet, without holding its writes
   * (BatchedIdb.stageAhead): a checkout writes a working tree's files as their blobs arrive, and names them
   * all in one held write at the end (placeStaged), or drops them (dropStaged). Waits while storage is
   * behind.
   */
  async stageFileAhead(repoId: string, data: Uint8Array): Promise<StagedFile> {
    const { db, backend } = this.stagingOf(repoId);
    // lightning-fs loads its tree on first use: the numbering counts on from it.
    await this.open(repoId)
      .promises.stat('/')
      .catch(() => undefined);
    const inode = backend.reserveInode();
    await db.stageAhead(inode, data);
    return { inode, size: data.byteLength };
  }

  /** Resolves once every file staged ahead is stored; throws the storage error if one could not be. */
  flushStaged(repoId: string): Promise<void> {
    return this.stagingOf(repoId).db.flushStagedAhead();
  }

  /**
   * Inside writeAllOrNothing: names each staged file at its path (which must not exist), with lightning-fs's
   * mode (0o666, or 0o777 for an executable, as writeFile is given them). Their contents are then the held
   * batch's: committed with it, or deleted if it is discarded.
   */
  async placeStaged(
    repoId: string,
    files: Iterable<{ path: string; staged: StagedFile; mode: number }>,
  ): Promise<void> {
    const { db, backend } = this.stagingOf(repoId);
    if (!db.held) throw new Error('placeStaged() outside writeAllOrNothing');
    // Active now, and nothing awaits below: no deactivation can drop the tree in between.
    await this.open(repoId).promises.stat('/');
    const inodes: number[] = [];
    for (const { path, staged, mode } of files) {
      backend.place(path, staged.inode, staged.size, mode);
      inodes.push(staged.inode);
    }
    db.adoptStagedAhead(inodes);
  }

  /** Deletes files staged ahead that will not be placed (the checkout that staged them failed). */
  dropStaged(repoId: string, files: StagedFile[]): Promise<void> {
    const entry = this.opened.get(repoId);
    return entry ? entry.db.dropStagedAhead(files.map((f) => f.inode)) : Promise.resolve();
  }

  /** Writes lightning-fs's debounced superblock now, so a reload right after an operation sees its files. */
  async flush(repoId: string): Promise<void> {
    await this.open(repoId).promises.flush();
  }

  /** Deletes the repo's database and lightning-fs's lock companion; nothing may recreate it afterwards. */
  async delete(repoId: string, opts: { blockedTimeoutMs?: number } = {}): Promise<void> {
    this.deleted.add(repoId);
    const entry = this.opened.get(repoId);
    this.opened.delete(repoId);
    if (entry) {
      // lightning-fs keeps its database open between calls; deleteDatabase would wait on it forever.
      entry.db.discard();
      await deactivate(entry.fs).catch(() => undefined);
    }
    const name = this.dbName(repoId);
    const blockedTimeoutMs = opts.blockedTimeoutMs ?? DELETE_BLOCKED_TIMEOUT_MS;
    await Promise.all([
      this.storage.deleteDatabase(name, { blockedTimeoutMs }),
      this.storage.deleteDatabase(`${name}_lock`, { blockedTimeoutMs }),
    ]);
  }

  /** Stores what is pending and lets go of every file system (the engine closes). */
  async close(): Promise<void> {
    const entries = [...this.opened.values()];
    this.opened.clear();
    for (const entry of entries) {
      await entry.fs.promises.flush().catch(() => undefined);
      await deactivate(entry.fs).catch(() => undefined);
    }
  }
}

/** A lightning-fs on database `name` as repos use it: BatchedIdb under RepoFsBackend. */
export function createBatchedFs(
  storage: Storage,
  name: string,
  opts: { fixInodeWalk?: boolean } = {},
): OpenRepoFs {
  const db = new BatchedIdb(name, storage.files(name));
  const backend = opts.fixInodeWalk === false ? undefined : new RepoFsBackend();
  const mutex = storage.fsMutex?.(name);
  const fs = new FS(name, { db, backend, mutex } as unknown as FS.Options);
  db.onCommitFailed = () => {
    void deactivate(fs).catch(() => undefined);
  };
  return { fs, db, backend };
}

/**
 * lightning-fs's own backend, less two things. Its CacheFS numbers each new inode by walking the whole
 * tree for the largest number in use, so writing n files costs O(n²) (in Chromium, 4 of the 5 s it took
 * to write 20,000 files). Counting on from one walk per loaded tree gives fresh numbers without the walk;
 * unlike the walk it never hands out again the number of a file deleted meanwhile, which is harmless.
 * And a storage no other worker reaches gives its own activation mutex (none): lightning-fs's choice reads
 * `navigator.locks`, which Node does not have.
 */
export class RepoFsBackend extends DefaultBackend {
  private next = 0;
  private counted: unknown;
  /** An inode reserved earlier (reserveInode) for the file being placed now (place). */
  private placing: number | undefined;
  private walk: () => number = () => 0;

  override async init(name: string, options?: object): Promise<void> {
    const { db, mutex } = (options ?? {}) as { db?: unknown; mutex?: FsMutex };
    if (mutex) {
      // DefaultBackend.init, with the mutex given.
      this._name = name;
      this._idb = db;
      this._mutex = mutex;
      this._cache = new CacheFS(name, { uid: 1, gid: 1 });
      this._opts = {};
      this._needsWipe = false;
    } else {
      await super.init(name, options);
    }
    const cache = this._cache;
    this.walk = cache.autoinc.bind(cache);
    cache.autoinc = () => {
      if (this.placing !== undefined) return this.placing;
      const inode = this.reserveInode();
      // Numbered past everything the loaded tree names: its contents are new to storage.
      if (db instanceof BatchedIdb) db.noteNewInode(inode);
      return inode;
    };
  }

  /**
   * A number no file of the tree has, nor will be given: counted on from one walk per loaded tree, never
   * below a number this backend gave out before (a reserved one is in no tree until it is placed).
   */
  reserveInode(): number {
    const cache = this._cache;
    if (cache._root !== this.counted) {
      this.counted = cache._root;
      this.next = Math.max(this.next, this.walk());
    }
    return this.next++;
  }

  /**
   * Names `inode` (its contents already stored, BatchedIdb.stageAhead) as the file at `filepath`, which
   * does not exist yet, making its parent folders as writeFile would. In-memory only, as every change of
   * lightning-fs's tree: the next superblock save stores it. The file system must be active.
   */
  place(filepath: string, inode: number, size: number, mode: number): void {
    const cache = this._cache;
    const parts = filepath.split('/').filter(Boolean);
    let dir = '';
    for (const part of parts.slice(0, -1)) {
      dir += `/${part}`;
      try {
        cache.mkdir(dir, { mode: 0o777 });
      } catch {
        // there already
      }
    }
    this.placing = inode;
    try {
      cache.writeStat(filepath, size, { mode });
    } finally {
      this.placing = undefined;
    }
  }
}

/** File contents stored ahead of the held write that names them (RepoFileSystems.stageFileAhead). */
export interface StagedFile {
  inode: number;
  size: number;
}

function deactivate(fs: FS): Promise<void> {
  return (fs.promises as unknown as { _deactivate(): Promise<void> })._deactivate();
}

/** `mkdir -p`, tolerant of directories that already exist. */
export async function mkdirp(fs: PromiseFs, dir: string): Promise<void> {
  const parts = dir.split('/').filter(Boolean);
  let at = '';
  for (const part of parts) {
    at += `/${part}`;
    try {
      await fs.mkdir(at);
    } catch (err) {
      if ((err as { code?: string }).code !== 'EEXIST') throw err;
    }
  }
}

export async function writeFileDeep(fs: PromiseFs, path: string, data: Uint8Array | string): Promise<void> {
  await mkdirp(fs, path.slice(0, path.lastIndexOf('/')));
  await fs.writeFile(path, data, typeof data === 'string' ? 'utf8' : undefined);
}

/** Sum of file sizes below `dir`, to show what a repo costs in IndexedDB. */
export async function du(fs: PromiseFs, dir: string): Promise<number> {
  let total = 0;
  for (const name of await fs.readdir(dir)) {
    const path = `${dir === '/' ? '' : dir}/${name}`;
    const st = await fs.lstat(path);
    total += st.isDirectory() ? await du(fs, path) : st.size;
  }
  return total;
}
