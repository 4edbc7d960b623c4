// The engine's default storage: IndexedDB, which every tab and worker of an origin shares. Each repository
// is a database in lightning-fs's own layout (store `<name>_files`, the superblock under `!root`, file
// contents under their inode number), so repositories stored by lightning-fs's default backend stay
// readable and the other way round; the registry is an idb-keyval store; the locks are Web Locks.

import { del, get, promisifyRequest, set, type UseStore, values } from 'idb-keyval';
import { StoreError, storageError } from '../store/errors.ts';
import { InProcessLocks } from '../store/repoLock.ts';
import type { FileRecords, KeyValueStore, LockManagerLike, RecordKey, Storage } from '../store/storage.ts';

/** What indexedDbStorage keeps repositories in and locks them with; the browser's own by default. */
export interface IndexedDbStorageOptions {
  /** The IndexedDB to use; `globalThis.indexedDB` when absent. */
  indexedDB?: IDBFactory;
  /**
   * The locks; `navigator.locks` when there is one, else this storage's own (then only this engine
   * is kept from writing a repository twice at once: enough where no other tab can reach the databases).
   */
  locks?: LockManagerLike;
}

/** Repositories in IndexedDB, shared with every tab of the origin (the default of createEngine). */
export function indexedDbStorage(options: IndexedDbStorageOptions = {}): Storage {
  const factory = () => options.indexedDB ?? globalThis.indexedDB;
  const native = (globalThis.navigator as { locks?: LockManagerLike } | undefined)?.locks;
  return {
    kind: 'indexeddb',
    files: (name) => new IdbFileRecords(factory, name, `${name}_files`),
    keyValue: <T>(database: string, store: string) => idbKeyValue<T>(factory, database, store),
    deleteDatabase: (name, { blockedTimeoutMs }) => deleteDatabase(factory(), name, blockedTimeoutMs),
    listDatabases: async () => {
      const idb = factory() as IDBFactory & { databases?: () => Promise<IDBDatabaseInfo[]> };
      if (typeof idb.databases !== 'function') return undefined;
      const all = await idb.databases();
      return all.map((d) => d.name ?? '').filter(Boolean);
    },
    locks: options.locks ?? native ?? new InProcessLocks(),
  };
}

/**
 * Whether this page may use IndexedDB: a widget in a cross-site iframe whose browser blocks third-party
 * storage gets "UnknownError: The user denied permission to access the database" (Chromium with
 * partitioning off, third-party cookies blocked, private windows). `name` is a database made for the probe.
 */
export function indexedDbAvailable(name: string, factory = globalThis.indexedDB): Promise<boolean> {
  return new Promise((resolve) => {
    try {
      const req = factory.open(name);
      req.onsuccess = () => {
        req.result.close();
        resolve(true);
      };
      req.onerror = () => resolve(false);
      req.onblocked = () => resolve(true);
    } catch {
      resolve(false);
    }
  });
}

class IdbFileRecords implements FileRecords {
  private dbPromise: Promise<IDBDatabase> | undefined;
  /** The connection once open: a write then fills its transaction before it returns. */
  private open: IDBDatabase | undefined;

  constructor(
    private readonly factory: () => IDBFactory,
    private readonly dbName: string,
    private readonly storeName: string,
  ) {}

  async ready(): Promise<void> {
    await this.db();
  }

  async get(key: RecordKey): Promise<unknown> {
    return (await this.getMany([key]))[0];
  }

  async getMany(keys: readonly RecordKey[]): Promise<unknown[]> {
    const db = await this.db();
    return new Promise((resolve, reject) => {
      const tx = db.transaction(this.storeName, 'readonly');
      const store = tx.objectStore(this.storeName);
      const reqs = keys.map((k) => store.get(k));
      tx.oncomplete = () => resolve(reqs.map((r) => r.result));
      tx.onabort = tx.onerror = () => reject(tx.error);
    });
  }

  async keys(): Promise<RecordKey[]> {
    const db = await this.db();
    return new Promise((resolve, reject) => {
      const tx = db.transaction(this.storeName, 'readonly');
      const req = tx.objectStore(this.storeName).getAllKeys();
      tx.oncomplete = () => resolve(req.result as RecordKey[]);
      tx.onabort = tx.onerror = () => reject(tx.error ?? req.error);
    });
  }

  async write(changes: Iterable<readonly [RecordKey, unknown]>): Promise<void> {
    // Open already (BatchedIdb awaits ready() first): the transaction is filled before any await, so what
    // it puts is taken at one instant.
    const db = this.open ?? (await this.db());
    return new Promise<void>((resolve, reject) => {
      const tx = db.transaction(this.storeName, 'readwrite');
      tx.oncomplete = () => resolve();
      tx.onabort = tx.onerror = () => reject(tx.error);
      try {
        const store = tx.objectStore(this.storeName);
        for (const [key, value] of changes) {
          if (value === null) store.delete(key);
          else store.put(value, key);
        }
      } catch (err) {
        // A put can throw at once (a quota check, a clone failure): then none of it is stored.
        tx.abort();
        reject(err);
      }
    });
  }

  async clear(): Promise<void> {
    const db = await this.db();
    return new Promise((resolve, reject) => {
      const tx = db.transaction(this.storeName, 'readwrite');
      tx.objectStore(this.storeName).clear();
      tx.oncomplete = () => resolve();
      tx.onabort = tx.onerror = () => reject(tx.error);
    });
  }

  async close(): Promise<void> {
    if (!this.dbPromise) return;
    const db = await this.dbPromise.catch(() => undefined);
    this.dbPromise = undefined;
    this.open = undefined;
    db?.close();
  }

  private db(): Promise<IDBDatabase> {
    this.dbPromise ??= new Promise<IDBDatabase>((resolve, reject) => {
      const req = this.factory().open(this.dbName);
      req.onupgradeneeded = () => req.result.createObjectStore(this.storeName);
      req.onsuccess = () => {
        const db = req.result;
        // Deleting the repo's database must not wait for this connection.
        db.onversionchange = () => {
          db.close();
          this.dbPromise = undefined;
          this.open = undefined;
        };
        this.open = db;
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
}

function idbKeyValue<T>(factory: () => IDBFactory, database: string, storeName: string): KeyValueStore<T> {
  let opened: UseStore | undefined;
  // Opened on first use rather than at creation, so making an engine never touches IndexedDB.
  const store = (): UseStore => {
    opened ??= createStore(factory(), database, storeName);
    return opened;
  };
  return {
    get: (key) => get<T>(key, store()),
    set: (key, value) => set(key, value, store()),
    delete: (key) => del(key, store()),
    values: () => values<T>(store()),
    update: (key, change) =>
      store()('readwrite', (s) => {
        const req = s.get(key);
        return new Promise<void>((resolve, reject) => {
          req.onsuccess = () => {
            try {
              const next = change(req.result as T | undefined);
              if (next !== undefined) s.put(next, key);
              resolve(promisifyRequest(s.transaction));
            } catch (err) {
              reject(err);
            }
          };
          req.onerror = () => reject(req.error);
        });
      }),
  };
}

/** idb-keyval's createStore, on the IndexedDB given. */
function createStore(factory: IDBFactory, database: string, storeName: string): UseStore {
  const request = factory.open(database);
  request.onupgradeneeded = () => request.result.createObjectStore(storeName);
  const dbp = promisifyRequest(request);
  return (mode, callback) =>
    dbp.then((db) => callback(db.transaction(storeName, mode).objectStore(storeName)));
}

/**
 * Deletes a database, and resolves only once it is gone. `blocked` means other connections are still
 * open: IndexedDB has sent them `versionchange` (ours close on it), and the delete completes when they
 * have closed, so it is waited for, not taken as done.
 */
function deleteDatabase(factory: IDBFactory, name: string, blockedTimeoutMs: number): Promise<void> {
  return new Promise((resolve, reject) => {
    let timer: ReturnType<typeof setTimeout> | undefined;
    const req = factory.deleteDatabase(name);
    req.onsuccess = () => {
      clearTimeout(timer);
      resolve();
    };
    req.onerror = () => {
      clearTimeout(timer);
      reject(storageError(req.error, `the deletion of ${name}`));
    };
    req.onblocked = () => {
      timer ??= setTimeout(
        () =>
          reject(
            new StoreError(
              'STORAGE_BLOCKED',
              `Another tab keeps the repository's database ${name} open. Close that tab (or reload it), then delete again.`,
            ),
          ),
        blockedTimeoutMs,
      );
    };
  });
}
