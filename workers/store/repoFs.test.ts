import { afterEach, describe, expect, it } from 'vitest';
import { indexedDbStorage } from '../storage/indexedDb.ts';
import { memoryStorage } from '../storage/memory.ts';
import { du, mkdirp, type PromiseFs, writeFileDeep } from './repoFs.ts';
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

  it('du sums the sizes of the files below a folder', async () => {
    const p = tab().repoFs.open('r').promises;
    await writeFileDeep(p, '/g/a', 'abc');
    await writeFileDeep(p, '/g/sub/b', '12345');
    await writeFileDeep(p, '/other', 'zzzzzzzz');
    expect(await du(p, '/g')).toBe(8);
    expect(await du(p, '/')).toBe(16);
  });
});
