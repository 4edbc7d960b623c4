// Repositories kept in memory, for one engine's life: nothing persists and nothing is shared with another
// tab. For Node (no IndexedDB needed), tests, and a page the browser refuses storage to (a widget in a
// cross-site iframe with third-party storage blocked). The same code runs above it as above IndexedDB:
// BatchedIdb's batches, lightning-fs's file tree, the registry, one writer per repository.

import { InProcessLocks } from '../store/repoLock.ts';
import type { FileRecords, FsMutex, KeyValueStore, RecordKey, Storage } from '../store/storage.ts';

/** A storage whose databases are Maps, and whose locks only this engine takes. */
export function memoryStorage(): Storage {
  const databases = new Map<string, Map<RecordKey, unknown>>();
  // A database exists once something was written to it, as an IndexedDB one is listed once opened.
  const tables = (name: string) => (create: boolean) => {
    let table = databases.get(name);
    if (!table) {
      table = new Map();
      if (create) databases.set(name, table);
    }
    return table;
  };
  return {
    kind: 'memory',
    files: (name) => new MemoryRecords(tables(name)),
    keyValue: <T>(database: string, store: string) => memoryKeyValue<T>(tables(`${database}\0${store}`)),
    deleteDatabase: async (name) => {
      databases.delete(name);
    },
    listDatabases: async () => [...databases.keys()].filter((n) => !n.includes('\0')),
    locks: new InProcessLocks(),
    // Nobody else can reach these databases: lightning-fs needs no activation lock.
    fsMutex: () => NO_MUTEX,
  };
}

const NO_MUTEX: FsMutex = Object.freeze({
  has: async () => true,
  wait: async () => true,
  acquire: async () => true,
  release: async () => undefined,
});

/**
 * As IndexedDB does: a value is cloned when stored and again when read, so neither lightning-fs's live
 * tree nor a caller's buffer ever aliases what is stored. File contents that BatchedIdb hands in are its
 * own (copied or handed over), so they are kept as they are; they are copied when read.
 */
function stored(value: unknown): unknown {
  return value instanceof Uint8Array ? value : structuredClone(value);
}

function read(value: unknown): unknown {
  if (value === undefined) return undefined;
  return value instanceof Uint8Array ? value.slice() : structuredClone(value);
}

class MemoryRecords implements FileRecords {
  constructor(private readonly table: (create: boolean) => Map<RecordKey, unknown>) {}

  async ready(): Promise<void> {}

  async get(key: RecordKey): Promise<unknown> {
    return read(this.table(false).get(key));
  }

  async getMany(keys: readonly RecordKey[]): Promise<unknown[]> {
    const table = this.table(false);
    return keys.map((k) => read(table.get(k)));
  }

  async keys(): Promise<RecordKey[]> {
    return [...this.table(false).keys()];
  }

  write(changes: Iterable<readonly [RecordKey, unknown]>): Promise<void> {
    // Taken now, applied together: all or nothing, as one transaction.
    const taken = [...changes].map(([k, v]) => [k, v === null ? null : stored(v)] as const);
    const table = this.table(true);
    for (const [key, value] of taken) {
      if (value === null) table.delete(key);
      else table.set(key, value);
    }
    return Promise.resolve();
  }

  async clear(): Promise<void> {
    this.table(false).clear();
  }

  async close(): Promise<void> {}
}

function memoryKeyValue<T>(table: (create: boolean) => Map<RecordKey, unknown>): KeyValueStore<T> {
  return {
    get: async (key) => read(table(false).get(key)) as T | undefined,
    set: async (key, value) => {
      table(true).set(key, stored(value));
    },
    delete: async (key) => {
      table(false).delete(key);
    },
    values: async () => [...table(false).values()].map((v) => read(v) as T),
    update: async (key, change) => {
      const next = change(read(table(false).get(key)) as T | undefined);
      if (next !== undefined) table(true).set(key, stored(next));
    },
  };
}
