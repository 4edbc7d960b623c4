// What an engine keeps its repositories in, whatever holds them: the records under each repository's file
// system (lightning-fs's layout: the superblock and one record per file), the registry of repositories,
// the databases' names, and the locks that keep one writer per repository. The implementations live in
// storage/: IndexedDB (the default, shared by the tabs of an origin) and memory (one engine's life, and
// Node without IndexedDB). Everything above this interface (BatchedIdb, repoFs, the registry) is the same
// code for both.

/** A key in a database of file records: an inode number, or a name such as `!root`. */
export type RecordKey = string | number;

/**
 * One database of file records: what lightning-fs's IdbBackend reads and writes, under BatchedIdb. Values
 * are taken (cloned) when `write` is called, and each read gives values of its own, as IndexedDB does.
 */
export interface FileRecords {
  /** The value of `key`, or undefined when there is none. */
  get(key: RecordKey): Promise<unknown>;
  /** Several values read at one instant (one transaction). */
  getMany(keys: readonly RecordKey[]): Promise<unknown[]>;
  /** Every key of the database. */
  keys(): Promise<RecordKey[]>;
  /** Opens the connection: once it resolves, `write` takes its values before it returns. */
  ready(): Promise<void>;
  /**
   * Stores every change (a value, or null to delete the key) at once or none of them, and resolves when
   * they are stored. Throws what the backend threw (a full quota: QuotaExceededError) with none stored.
   * The values are taken (cloned) before it returns when `ready()` has resolved; else on opening.
   */
  write(changes: Iterable<readonly [RecordKey, unknown]>): Promise<void>;
  /** Deletes every record (lightning-fs's `wipe`). */
  clear(): Promise<void>;
  /** Lets go of the connection while lightning-fs is idle; the next call opens it again. */
  close(): Promise<void>;
}

/** A small store of values by key: the registry of repositories. */
export interface KeyValueStore<T> {
  /** The value of `key`, or undefined when there is none. */
  get(key: string): Promise<T | undefined>;
  /** Stores `value` under `key`, replacing what was there. */
  set(key: string, value: T): Promise<void>;
  /** Removes `key`; nothing happens when it is absent. */
  delete(key: string): Promise<void>;
  /** Every value, in no particular order. */
  values(): Promise<T[]>;
  /** Changes one value in one transaction; `change` returning undefined leaves the key as it was. */
  update(key: string, change: (old: T | undefined) => T | undefined): Promise<void>;
}

/** The options of LockManagerLike.request that the engine uses (Web Locks: `LockOptions`). */
export interface LockRequestOptions {
  /** Call back at once with null, rather than wait, when the lock is held. */
  ifAvailable?: boolean;
  /** Gives up the wait (the request rejects with an AbortError); a lock already held is not affected. */
  signal?: AbortSignal;
}

/** The part of the Web Locks API (navigator.locks) the engine uses: exclusive locks by name. */
export interface LockManagerLike {
  /**
   * Runs `callback` holding the exclusive lock `name`, and lets it go when the callback settles. With
   * `ifAvailable`, calls it with null at once when the lock is held; an aborted `signal` rejects the wait.
   */
  request<T>(name: string, options: LockRequestOptions, callback: (lock: unknown) => Promise<T>): Promise<T>;
  /**
   * The locks held and waited for (`LockManager.query`). Optional: without it, background work does not
   * see an operation waiting for it, and startup repair tells a live clone by `ifAvailable` alone.
   */
  query?(): Promise<{
    /** The locks held now. */
    held?: {
      /** The lock's name. */
      name?: string;
    }[];
    /** The requests waiting for a lock. */
    pending?: {
      /** The lock's name. */
      name?: string;
    }[];
  }>;
}

/** What lightning-fs's activation mutex needs (its Mutex and Mutex2 classes have this shape). */
export interface FsMutex {
  /** Whether this instance holds the mutex now. */
  has(): Promise<boolean>;
  /** Waits for the mutex and takes it; true once held (lightning-fs gives up after 10 minutes). */
  wait(): Promise<boolean>;
  /** Takes the mutex if it is free; false at once when another holds it. */
  acquire(): Promise<boolean>;
  /** Lets the mutex go; with `force`, takes it from whoever holds it (a holder that died). */
  release(options?: { force?: boolean }): Promise<void>;
}

/**
 * Where an engine keeps its repositories and how it locks them: IndexedDB (`blobless/storage/indexeddb`),
 * memory (`blobless/storage/memory`), or one of your own.
 */
export interface Storage {
  /** What keeps the data, for people and reports: 'indexeddb', 'memory'. */
  readonly kind: string;
  /** The records of database `name` (created on first write). */
  files(name: string): FileRecords;
  /** The values of store `store` in database `database`. */
  keyValue<T>(database: string, store: string): KeyValueStore<T>;
  /**
   * Deletes a database; resolves once it is gone. Another connection that keeps it open past
   * `blockedTimeoutMs` makes it fail with StoreError STORAGE_BLOCKED.
   */
  deleteDatabase(name: string, options: { blockedTimeoutMs: number }): Promise<void>;
  /** Every database's name, or undefined where the backend cannot list them (startup repair says so). */
  listDatabases(): Promise<string[] | undefined>;
  /** The locks: shared by every tab of the origin for IndexedDB, this storage's own for memory. */
  readonly locks: LockManagerLike;
  /**
   * lightning-fs's activation mutex for database `name`; undefined for lightning-fs's own choice (Web Locks,
   * else a lock record in IndexedDB). Storage no other worker can reach needs none.
   */
  fsMutex?(name: string): FsMutex;
}

/**
 * The names an engine gives its databases, locks and channel, all under its namespace, so that two engines
 * of one origin (an app and a library user, say) never touch each other's repositories.
 */
export class StorageNames {
  constructor(readonly namespace: string) {
    if (!/^[A-Za-z0-9._-]+$/.test(namespace)) {
      throw new TypeError(
        `The namespace ${JSON.stringify(namespace)} may hold only letters, digits, ".", "_" and "-".`,
      );
    }
  }

  /** Each repository's file system: one database, so deleting a repository is dropping it. */
  repoDatabase(repoId: string): string {
    return `${this.namespace}-repo-${repoId}`;
  }

  /** The repository a database name belongs to, and whether it is lightning-fs's `_lock` companion. */
  parseRepoDatabase(name: string): { repoId: string; companion: boolean } | null {
    const prefix = `${this.namespace}-repo-`;
    if (!name.startsWith(prefix)) return null;
    const rest = name.slice(prefix.length);
    const companion = rest.endsWith('_lock');
    const repoId = companion ? rest.slice(0, -'_lock'.length) : rest;
    return repoId ? { repoId, companion } : null;
  }

  get registryDatabase(): string {
    return `${this.namespace}-registry`;
  }

  /** One writer per repository (repoLock.ts); lightning-fs's own activation lock is `<database>_lock`. */
  writeLock(repoId: string): string {
    return `${this.namespace}-repo-${repoId}:write`;
  }

  /** One history fill per repository, across tabs. */
  fillLock(repoId: string): string {
    return `${this.namespace}-repo-${repoId}:fill`;
  }

  /** The BroadcastChannel on which workers say what they do to repositories (repoEvents.ts). */
  get eventsChannel(): string {
    return `${this.namespace}-repos`;
  }
}
