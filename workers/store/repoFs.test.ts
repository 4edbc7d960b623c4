import { afterEach, describe, expect, it } from 'vitest';
import { indexedDbStorage } from '../storage/indexedDb.ts';
import { memoryStorage } from '../storage/memory.ts';
import { createBatchedFs, du, mkdirp, type PromiseFs, RepoFsBackend, writeFileDeep } from './repoFs.ts';
import type { Storage } from './storage.ts';
import { Store } from './store.ts';

const store = new Store(indexedDbStorage(), 'blobless');

/** A connection to the repo's database that, like a hung tab, ignores `versionchange`. */
function openStubborn(name: string): Promise<IDBDatabase> {
  return new Promise((resolve, reject) => {
    const req = indexedDB.open(name);
    req.onsuccess = () => resolve(req.result);
    req.onerror = () => reject(req.error);
  });
}

async function databaseNames(): Promise<string[]> {
  return (await indexedDB.databases()).map((d) => d.name ?? '');
}

async function storeOneFile(repoId: string): Promise<void> {
  const fs = store.repoFs.open(repoId);
  await fs.promises.writeFile('/a', 'x');
  await fs.promises.flush();
}

describe('RepoFileSystems.delete', () => {
  it('waits for another connection to close instead of taking "blocked" as done', async () => {
    const repoId = 'delete-waits';
    await storeOneFile(repoId);
    const other = await openStubborn(store.repoFs.dbName(repoId));
    let settled = false;
    const deleting = store.repoFs.delete(repoId, { blockedTimeoutMs: 5_000 }).finally(() => {
      settled = true;
    });
    await new Promise((r) => setTimeout(r, 200));
    expect(settled).toBe(false);
    expect(await databaseNames()).toContain(store.repoFs.dbName(repoId));
    other.close();
    await deleting;
    expect(await databaseNames()).not.toContain(store.repoFs.dbName(repoId));
  });

  it('gives STORAGE_BLOCKED when the other connection never closes', async () => {
    const repoId = 'delete-blocked';
    await storeOneFile(repoId);
    const other = await openStubborn(store.repoFs.dbName(repoId));
    const err = await store.repoFs.delete(repoId, { blockedTimeoutMs: 100 }).catch((e: Error) => e);
    expect(err).toMatchObject({ name: 'StoreError', code: 'STORAGE_BLOCKED' });
    expect((err as Error).message).toContain('Another tab');
    other.close();
  });
});

const engines: Store[] = [];
afterEach(async () => {
  for (const e of engines.splice(0)) await e.close();
});

/** An engine on `storage`: two on one storage are two tabs of one origin. */
function tab(storage = memoryStorage()): Store {
  const e = new Store(storage, 'fstest');
  engines.push(e);
  return e;
}

async function exists(p: PromiseFs, path: string): Promise<boolean> {
  return p.lstat(path).then(
    () => true,
    () => false,
  );
}

/** `storage`, with every file-record write refused while `failing.on` (a full disk, say). */
function failingWrites(storage: Storage, failing: { on: boolean }): Storage {
  return {
    ...storage,
    files: (name) => {
      const records = storage.files(name);
      return Object.assign(Object.create(records), {
        write: (changes: Parameters<typeof records.write>[0]) =>
          failing.on ? Promise.reject(new Error('the disk failed')) : records.write(changes),
      });
    },
  };
}

describe('RepoFileSystems across tabs', () => {
  it('sync reloads the tree another tab committed, tells the listeners, and only then', async () => {
    const storage = memoryStorage();
    const a = tab(storage);
    const b = tab(storage);
    const reloaded: string[] = [];
    b.repoFs.onReloaded((id) => reloaded.push(id));
    // Not open here yet: nothing to sync.
    expect(await b.repoFs.sync('r')).toBe(false);
    expect(b.repoFs.generation('r')).toBeUndefined();
    await a.locks.withRepoLock('r', 'write', async () => {
      await a.repoFs.open('r').promises.writeFile('/one', '1', 'utf8');
      await a.repoFs.flush('r');
    });
    expect(await b.repoFs.open('r').promises.readFile('/one', 'utf8')).toBe('1');
    expect(b.repoFs.generation('r')).toBe(a.repoFs.generation('r'));
    expect(await b.repoFs.sync('r')).toBe(false);
    await a.locks.withRepoLock('r', 'write', async () => {
      await a.repoFs.open('r').promises.writeFile('/two', '2', 'utf8');
      await a.repoFs.flush('r');
    });
    expect(await exists(b.repoFs.open('r').promises, '/two')).toBe(false);
    expect(await b.repoFs.sync('r')).toBe(true);
    expect(reloaded).toEqual(['r']);
    expect(await b.repoFs.open('r').promises.readFile('/two', 'utf8')).toBe('2');
    expect(b.repoFs.generation('r')).toBe(a.repoFs.generation('r'));
    expect(await b.repoFs.sync('r')).toBe(false);
    expect(reloaded).toEqual(['r']);
  });

  it('sync never drops this tab’s own writes in flight', async () => {
    const storage = memoryStorage();
    const a = tab(storage);
    const b = tab(storage);
    const bp = b.repoFs.open('r').promises;
    await b.locks.withRepoLock('r', 'write', async () => {
      await bp.writeFile('/mine', 'b', 'utf8');
      await b.repoFs.flush('r');
    });
    await a.locks.withRepoLock('r', 'write', async () => {
      await a.repoFs.open('r').promises.writeFile('/theirs', 'a', 'utf8');
      await a.repoFs.flush('r');
    });
    await bp.writeFile('/pending', 'p', 'utf8');
    expect(await b.repoFs.sync('r')).toBe(false);
    await b.repoFs.discard('r');
    await b.repoFs.writeAllOrNothing('r', async () => {
      expect(b.repoFs.held('r')).toBe(true);
      expect(await b.repoFs.sync('r')).toBe(false);
    });
    expect(b.repoFs.held('r')).toBe(false);
    expect(b.repoFs.held('never-opened')).toBe(false);
  });

  it('sync gives up quietly when the stored generation cannot be read', async () => {
    const storage = memoryStorage();
    const b = tab({
      ...storage,
      files: (name) =>
        Object.assign(Object.create(storage.files(name)), {
          get: () => Promise.reject(new Error('the disk failed')),
        }),
    });
    await b.locks.withRepoLock('r', 'write', async () => {
      await b.repoFs.open('r').promises.writeFile('/a', 'x', 'utf8');
      await b.repoFs.flush('r');
    });
    expect(await b.repoFs.sync('r')).toBe(false);
  });

  it('sync leaves alone a repo opened here but not loaded yet, and reloads one read before anything was stored', async () => {
    const storage = memoryStorage();
    const a = tab(storage);
    const b = tab(storage);
    const reloaded: string[] = [];
    b.repoFs.onReloaded((id) => reloaded.push(id));
    const empty = b.repoFs.open('empty').promises;
    expect(await empty.readdir('/')).toEqual([]);
    for (const id of ['unread', 'empty']) {
      await a.locks.withRepoLock(id, 'write', async () => {
        await a.repoFs.open(id).promises.writeFile('/one', '1', 'utf8');
        await a.repoFs.flush(id);
      });
    }
    expect(a.repoFs.generation('empty')).toEqual(expect.any(String));
    // Opened, its tree not loaded yet: loading reads the stored tree anyway.
    b.repoFs.open('unread');
    expect(await b.repoFs.sync('unread')).toBe(false);
    expect(await b.repoFs.sync('empty')).toBe(true);
    expect(reloaded).toEqual(['empty']);
    expect(await empty.readdir('/')).toEqual(['one']);
    expect(await b.repoFs.open('unread').promises.readdir('/')).toEqual(['one']);
  });

  it('sync keeps the tree when this tab starts writing while the stored generation is read', async () => {
    const storage = memoryStorage();
    let release: (() => void) | undefined;
    const b = tab({
      ...storage,
      files: (name) => {
        const records = storage.files(name);
        return Object.assign(Object.create(records), {
          // Held while a test holds `release`: the read of the stored generation waits for it.
          get: async (key: Parameters<typeof records.get>[0]) => {
            if (release) await new Promise<void>((r) => (release = r));
            return records.get(key);
          },
        });
      },
    });
    const a = tab(storage);
    const bp = b.repoFs.open('r').promises;
    expect(await bp.readdir('/')).toEqual([]);
    await a.locks.withRepoLock('r', 'write', async () => {
      await a.repoFs.open('r').promises.writeFile('/theirs', 'a', 'utf8');
      await a.repoFs.flush('r');
    });
    release = () => undefined;
    const syncing = b.repoFs.sync('r');
    await bp.writeFile('/mine', 'b', 'utf8');
    release();
    release = undefined;
    expect(await syncing).toBe(false);
    expect(await bp.readFile('/mine', 'utf8')).toBe('b');
  });

  it('a new tab numbers its new files past those stored: no file’s contents are overwritten', async () => {
    const storage = memoryStorage();
    const a = tab(storage);
    await a.locks.withRepoLock('r', 'write', async () => {
      await writeFileDeep(a.repoFs.open('r').promises, '/d/a', 'first');
      await a.repoFs.flush('r');
    });
    const b = tab(storage);
    await b.locks.withRepoLock('r', 'write', async () => {
      for (const n of [0, 1, 2, 3]) await b.repoFs.open('r').promises.writeFile(`/b${n}`, `b${n}`, 'utf8');
      await b.repoFs.flush('r');
    });
    const c = tab(storage).repoFs.open('r').promises;
    expect(await c.readFile('/d/a', 'utf8')).toBe('first');
    for (const n of [0, 1, 2, 3]) expect(await c.readFile(`/b${n}`, 'utf8')).toBe(`b${n}`);
  });

  it('writeAllOrNothing on a new database (a clone) commits in one transaction, and a throw leaves nothing', async () => {
    const e = tab();
    const batch = (id: string, opts?: { newDatabase: boolean }) =>
      e.locks.withRepoLock(id, 'write', () =>
        e.repoFs.writeAllOrNothing(
          id,
          async () => {
            await e.repoFs.open(id).promises.writeFile('/a', 'a', 'utf8');
          },
          opts,
        ),
      );
    await batch('made', { newDatabase: true });
    expect(e.repoFs.backend('made').transactions).toBe(1);
    expect(await e.repoFs.open('made').promises.readFile('/a', 'utf8')).toBe('a');
    // Without the option the batch first stores what was there (an empty tree here): one more.
    await batch('other');
    expect(e.repoFs.backend('other').transactions).toBe(2);
    await expect(
      e.locks.withRepoLock('failed', 'write', () =>
        e.repoFs.writeAllOrNothing(
          'failed',
          async () => {
            await e.repoFs.open('failed').promises.writeFile('/half', 'h', 'utf8');
            throw new Error('half way');
          },
          { newDatabase: true },
        ),
      ),
    ).rejects.toThrow('half way');
    expect(await e.repoFs.open('failed').promises.readdir('/')).toEqual([]);
    expect(e.repoFs.backend('failed').transactions).toBe(0);
  });

  it('writeAllOrNothing: a write that throws rethrows as it is; a commit storage refuses is STORAGE_FAILED', async () => {
    const failing = { on: false };
    const storage = memoryStorage();
    const e = tab(failingWrites(storage, failing));
    const p = e.repoFs.open('r').promises;
    await p.writeFile('/kept', 'k', 'utf8');
    await e.repoFs.flush('r');
    const thrown = new Error('half way');
    await expect(
      e.repoFs.writeAllOrNothing('r', async () => {
        await p.writeFile('/half', 'h', 'utf8');
        throw thrown;
      }),
    ).rejects.toBe(thrown);
    expect(await p.readdir('/')).toEqual(['kept']);
    // Storage fails from inside the batch on; the commit must throw the disk's error, typed.
    const expectRefused = async (write: () => Promise<void>) => {
      const err = await e.locks
        .withRepoLock('r', 'write', () => e.repoFs.writeAllOrNothing('r', write))
        .catch((x: unknown) => x);
      failing.on = false;
      expect(err).toMatchObject({
        name: 'StoreError',
        code: 'STORAGE_FAILED',
        message: 'Could not store the changes: the disk failed',
      });
    };
    await expectRefused(async () => {
      await p.writeFile('/refused', 'r', 'utf8');
      failing.on = true;
    });
    // Not kept in memory either, where a later save would store it.
    expect(await p.readdir('/')).toEqual(['kept']);
    expect(await tab(storage).repoFs.open('r').promises.readdir('/')).toEqual(['kept']);
    // A file stored ahead of the commit that storage refused: its error is what the commit throws.
    e.repoFs.backend('r').stageBytes = 1;
    await expectRefused(async () => {
      failing.on = true;
      await p.writeFile('/staged', 's', 'utf8');
    });
    expect(await p.readdir('/')).toEqual(['kept']);
  });

  it('a save storage refuses outside a batch makes the tree read back from storage', async () => {
    const failing = { on: false };
    const e = tab(failingWrites(memoryStorage(), failing));
    const p = e.repoFs.open('r').promises;
    await p.writeFile('/kept', 'k', 'utf8');
    await e.repoFs.flush('r');
    failing.on = true;
    await p.writeFile('/refused', 'r', 'utf8');
    await e.repoFs.flush('r').catch(() => undefined);
    failing.on = false;
    expect(await p.readdir('/')).toEqual(['kept']);
  });

  it('committed: true once this tab’s writes are stored, false once dropped', async () => {
    const e = tab();
    expect(await e.repoFs.committed('never-opened')).toBe(true);
    const p = e.repoFs.open('r').promises;
    await p.writeFile('/a', 'x', 'utf8');
    const stored = e.repoFs.committed('r');
    await e.repoFs.flush('r');
    expect(await stored).toBe(true);
    await p.writeFile('/b', 'y', 'utf8');
    const dropped = e.repoFs.committed('r');
    await e.repoFs.discard('r');
    expect(await dropped).toBe(false);
    expect(await exists(p, '/b')).toBe(false);
    await e.repoFs.discard('never-opened');
  });

  it('abandonAll loses what was not committed, as a terminated worker, and forgets every repo', async () => {
    const storage = memoryStorage();
    const e = tab(storage);
    const reloaded: string[] = [];
    e.repoFs.onReloaded((id) => reloaded.push(id));
    const p = e.repoFs.open('r').promises;
    await p.writeFile('/kept', 'k', 'utf8');
    await e.repoFs.flush('r');
    await p.writeFile('/lost', 'l', 'utf8');
    await e.repoFs.delete('gone');
    await e.repoFs.abandonAll();
    expect(reloaded).toEqual(['r']);
    const after = tab(storage).repoFs.open('r').promises;
    expect(await after.readdir('/')).toEqual(['kept']);
    // Forgotten: a deleted id may be opened again, and the repo is opened afresh.
    expect(() => e.repoFs.open('gone')).not.toThrow();
    expect(e.repoFs.open('r')).not.toBe(p);
  });

  it('a deleted repo is not recreated by a late write, unless allowed again', async () => {
    const storage = memoryStorage();
    const e = tab(storage);
    await e.repoFs.open('r').promises.writeFile('/a', 'x', 'utf8');
    await e.repoFs.flush('r');
    await storage.files(`${e.repoFs.dbName('r')}_lock`).write([['x', 1]]);
    await e.repoFs.delete('r');
    expect(await storage.listDatabases()).toEqual([]);
    expect(() => e.repoFs.open('r')).toThrow(
      expect.objectContaining({
        code: 'REPO_NOT_FOUND',
        message: 'The repository "r" was deleted from this browser.',
      }),
    );
    expect(() => e.repoFs.backend('r')).toThrow('was deleted');
    e.repoFs.allowRecreate('r');
    expect(await e.repoFs.open('r').promises.readdir('/')).toEqual([]);
  });

  it('delete drops writes not yet stored, so that no later save recreates the database', async () => {
    const storage = memoryStorage();
    const deleted: [string, unknown][] = [];
    const e = tab({
      ...storage,
      deleteDatabase: (name, options) => {
        deleted.push([name, options]);
        return storage.deleteDatabase(name, options);
      },
    });
    const p = e.repoFs.open('r').promises;
    await p.writeFile('/a', 'x', 'utf8');
    await e.repoFs.flush('r');
    await p.writeFile('/late', 'l', 'utf8');
    await e.repoFs.delete('r', { blockedTimeoutMs: 100 });
    await p.flush().catch(() => undefined);
    expect(await storage.listDatabases()).toEqual([]);
    await e.repoFs.delete('s');
    const name = (id: string) => e.repoFs.dbName(id);
    expect(deleted).toEqual([
      [name('r'), { blockedTimeoutMs: 100 }],
      [`${name('r')}_lock`, { blockedTimeoutMs: 100 }],
      [name('s'), { blockedTimeoutMs: 10_000 }],
      [`${name('s')}_lock`, { blockedTimeoutMs: 10_000 }],
    ]);
  });

  it('close stores what is pending', async () => {
    const storage = memoryStorage();
    const e = tab(storage);
    await e.repoFs.open('r').promises.writeFile('/a', 'x', 'utf8');
    await e.close();
    expect(await tab(storage).repoFs.open('r').promises.readFile('/a', 'utf8')).toBe('x');
  });
});

describe('files staged ahead (RepoFileSystems.stageFileAhead)', () => {
  it('are stored before the held write that places them, and named from its commit on', async () => {
    const storage = memoryStorage();
    const e = tab(storage);
    const p = e.repoFs.open('r').promises;
    await p.writeFile('/old', 'old', 'utf8');
    await e.repoFs.flush('r');
    e.repoFs.backend('r').stageBytes = 1;
    const a = await e.repoFs.stageFileAhead('r', new TextEncoder().encode('aaa'));
    const b = await e.repoFs.stageFileAhead('r', new TextEncoder().encode('bb'));
    expect(a.size).toBe(3);
    expect(b.inode).not.toBe(a.inode);
    expect(a.inode).toBeGreaterThan((await p.lstat('/old')).ino as number);
    await e.repoFs.flushStaged('r');
    await expect(e.repoFs.placeStaged('r', [])).rejects.toThrow('placeStaged() outside writeAllOrNothing');
    // Under the repo's lock, as every operation writes: with every new file staged, the save is a bare one.
    await e.locks.withRepoLock('r', 'checkout', () =>
      e.repoFs.writeAllOrNothing('r', async () => {
        await e.repoFs.placeStaged('r', [
          { path: '/dir/sub/a.txt', staged: a, mode: 0o666 },
          { path: '/run.sh', staged: b, mode: 0o777 },
        ]);
        // A file written after them gets a number of its own.
        await p.writeFile('/after', 'z', 'utf8');
      }),
    );
    const other = tab(storage).repoFs.open('r').promises;
    expect(await other.readFile('/dir/sub/a.txt', 'utf8')).toBe('aaa');
    expect(await other.readFile('/run.sh', 'utf8')).toBe('bb');
    expect(await other.readFile('/after', 'utf8')).toBe('z');
    expect((await other.lstat('/run.sh')).mode & 0o777).toBe(0o777);
    expect((await other.lstat('/dir/sub/a.txt')).size).toBe(3);
    expect(new Set([a.inode, b.inode, (await other.lstat('/after')).ino]).size).toBe(3);
    // The folders placing made are folders as mkdir makes them.
    expect((await other.lstat('/dir/sub')).mode & 0o777).toBe(0o777);
  });

  it('flushStaged throws what storage refused', async () => {
    const failing = { on: true };
    const e = tab(failingWrites(memoryStorage(), failing));
    e.repoFs.open('r');
    e.repoFs.backend('r').stageBytes = 1;
    await e.repoFs.stageFileAhead('r', new TextEncoder().encode('x'));
    await expect(e.repoFs.flushStaged('r')).rejects.toThrow('the disk failed');
  });

  it('inside a batch, a new file is stored ahead of the commit once it passes stageBytes', async () => {
    const storage = memoryStorage();
    const e = tab(storage);
    const p = e.repoFs.open('r').promises;
    await p.writeFile('/old', 'old', 'utf8');
    await e.repoFs.flush('r');
    const db = e.repoFs.backend('r');
    db.stageBytes = 1;
    await e.locks.withRepoLock('r', 'write', () =>
      e.repoFs.writeAllOrNothing('r', async () => {
        await p.writeFile('/new', 'new', 'utf8');
        const ino = (await p.lstat('/new')).ino as number;
        expect(await db.storedInodes()).toContain(ino);
      }),
    );
  });

  it('placed into folders that exist, and dropped when the checkout fails', async () => {
    const storage = memoryStorage();
    const e = tab(storage);
    const p = e.repoFs.open('r').promises;
    await mkdirp(p, '/dir');
    await e.repoFs.flush('r');
    e.repoFs.backend('r').stageBytes = 1;
    const kept = await e.repoFs.stageFileAhead('r', new TextEncoder().encode('kept'));
    const dropped = await e.repoFs.stageFileAhead('r', new TextEncoder().encode('dropped'));
    await e.locks.withRepoLock('r', 'checkout', () =>
      e.repoFs.writeAllOrNothing('r', () =>
        e.repoFs.placeStaged('r', [{ path: '/dir/k', staged: kept, mode: 0o666 }]),
      ),
    );
    await e.repoFs.dropStaged('r', [dropped]);
    await e.repoFs.dropStaged('never-opened', [dropped]);
    const keys = await storage.files(e.repoFs.dbName('r')).keys();
    expect(keys).toContain(kept.inode);
    expect(keys).not.toContain(dropped.inode);
    expect(await tab(storage).repoFs.open('r').promises.readFile('/dir/k', 'utf8')).toBe('kept');
  });
});

describe('repoFs helpers', () => {
  it('mkdirp makes every missing folder and accepts those that exist; writeFileDeep writes under them', async () => {
    const p = tab().repoFs.open('r').promises;
    await mkdirp(p, '/a/b');
    await mkdirp(p, '/a/b/c/');
    expect(await p.readdir('/a/b')).toEqual(['c']);
    await writeFileDeep(p, '/x/y/z.txt', 'text');
    await writeFileDeep(p, '/x/bin', new Uint8Array([1, 2]));
    expect(await p.readFile('/x/y/z.txt', 'utf8')).toBe('text');
    expect(Array.from((await p.readFile('/x/bin')) as Uint8Array)).toEqual([1, 2]);
  });

  it('mkdirp throws what is not "exists already"', async () => {
    const denied = Object.assign(new Error('denied'), { code: 'EACCES' });
    const made: string[] = [];
    const fs = {
      mkdir: async (dir: string) => {
        made.push(dir);
        if (dir === '/a/b') throw denied;
      },
    } as unknown as PromiseFs;
    await expect(mkdirp(fs, '/a/b/c')).rejects.toBe(denied);
    expect(made).toEqual(['/a', '/a/b']);
  });

  it('createBatchedFs gives RepoFsBackend, or lightning-fs’s own backend with fixInodeWalk false', () => {
    const storage = memoryStorage();
    expect(createBatchedFs(storage, 'x').backend).toBeInstanceOf(RepoFsBackend);
    expect(createBatchedFs(storage, 'y', { fixInodeWalk: false }).backend).toBeUndefined();
  });

  it('du sums the sizes of the files below a folder', async () => {
    const p = tab().repoFs.open('r').promises;
    await writeFileDeep(p, '/g/a', 'abc');
    await writeFileDeep(p, '/g/sub/b', '12345');
    await writeFileDeep(p, '/other', 'zzzzzzzz');
    expect(await du(p, '/g')).toBe(8);
    expect(await du(p, '/')).toBe(16);
  });
});
