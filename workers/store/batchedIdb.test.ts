import FS from '@isomorphic-git/lightning-fs';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { indexedDbStorage } from '../storage/indexedDb.ts';
import { handOver } from './batchedIdb.ts';
import { createBatchedFs } from './repoFs.ts';
import { Store } from './store.ts';

const storage = indexedDbStorage();
const store = new Store(storage, 'blobless');

type Deactivatable = { _deactivate(): Promise<void> };
const opened: FS[] = [];
let n = 0;

function freshName(): string {
  return `batched-idb-test-${n++}-${crypto.randomUUID().slice(0, 8)}`;
}

function open(name: string) {
  const made = createBatchedFs(storage, name);
  opened.push(made.fs);
  return made;
}

/** Lets go of the file system as lightning-fs does when idle: saves, releases its lock, closes the database. */
async function close(fs: FS): Promise<void> {
  await (fs.promises as unknown as Deactivatable)._deactivate();
}

afterEach(async () => {
  vi.restoreAllMocks();
  for (const fs of opened.splice(0)) await close(fs).catch(() => undefined);
});

/** Counts the read-write transactions opened on the files store of database `name`. */
function countWriteTransactions(name: string): { count: () => number } {
  let count = 0;
  const original = IDBDatabase.prototype.transaction;
  vi.spyOn(IDBDatabase.prototype, 'transaction').mockImplementation(function (
    this: IDBDatabase,
    ...args: Parameters<IDBDatabase['transaction']>
  ) {
    const [stores, mode] = args;
    if (this.name === name && mode === 'readwrite' && [stores].flat().includes(`${name}_files`)) count++;
    return original.apply(this, args);
  });
  return { count: () => count };
}

const bytes = (s: string) => new TextEncoder().encode(s);
const text = (b: unknown) => new TextDecoder().decode(b as Uint8Array);

describe('BatchedIdb under lightning-fs', () => {
  it('stores n file writes and the superblock in one transaction per flush', async () => {
    const name = freshName();
    const { fs, db } = open(name);
    const p = fs.promises;
    await p.mkdir('/src');
    const tx = countWriteTransactions(name);
    for (let i = 0; i < 200; i++) await p.writeFile(`/src/f${i}.txt`, bytes(`file ${i}\n`));
    expect(tx.count()).toBe(0);
    expect(db.pendingWrites).toBe(200);
    await p.flush();
    expect(tx.count()).toBe(1);
    expect(db.transactions).toBe(1);
    expect(db.pendingWrites).toBe(0);

    // An overwrite, an unlink and a new file: the next flush is one transaction again.
    await p.writeFile('/src/f0.txt', bytes('changed\n'));
    await p.unlink('/src/f1.txt');
    await p.writeFile('/src/new.txt', bytes('new\n'));
    await p.flush();
    expect(tx.count()).toBe(2);
  });

  it('keeps a handed-over buffer as it is, and copies any other', async () => {
    const { fs } = open(freshName());
    const p = fs.promises;
    const pack = handOver(new Uint8Array([1, 2, 3]));
    await p.writeFile('/pack', pack);
    const other = new Uint8Array([4, 5, 6]);
    await p.writeFile('/other', other);
    other[0] = 9;
    expect(await p.readFile('/pack')).toBe(pack);
    expect(Array.from(await p.readFile('/other'))).toEqual([4, 5, 6]);
    // A view into a bigger buffer is never kept as is: IndexedDB would store the whole buffer.
    const view = handOver(new Uint8Array(16).subarray(0, 3));
    await p.writeFile('/view', view);
    expect(await p.readFile('/view')).not.toBe(view);
    await p.flush();
    expect(Array.from(await p.readFile('/pack'))).toEqual([1, 2, 3]);
  });

  it('reads see writes not yet committed', async () => {
    const { fs, db } = open(freshName());
    const p = fs.promises;
    await p.writeFile('/a.txt', 'first', 'utf8');
    expect(db.pendingWrites).toBe(1);
    expect(await p.readFile('/a.txt', 'utf8')).toBe('first');
    await p.flush();
    await p.writeFile('/a.txt', 'second', 'utf8');
    expect(await p.readFile('/a.txt', 'utf8')).toBe('second');
  });

  it('keeps what it stores apart from the caller’s buffer', async () => {
    const { fs } = open(freshName());
    const data = bytes('original');
    await fs.promises.writeFile('/a.bin', data);
    data.fill(0);
    expect(text(await fs.promises.readFile('/a.bin'))).toBe('original');
  });

  it('data survives a new file system instance after flush, and an unlink is stored too', async () => {
    const name = freshName();
    const first = open(name);
    await first.fs.promises.mkdir('/d');
    for (let i = 0; i < 50; i++) await first.fs.promises.writeFile(`/d/${i}.txt`, bytes(`n=${i}`));
    await first.fs.promises.flush();
    await first.fs.promises.unlink('/d/7.txt');
    await close(first.fs);

    const again = open(name);
    const names = await again.fs.promises.readdir('/d');
    expect(names.length).toBe(49);
    expect(names).not.toContain('7.txt');
    for (let i = 0; i < 50; i++) {
      if (i !== 7) expect(text(await again.fs.promises.readFile(`/d/${i}.txt`))).toBe(`n=${i}`);
    }
    // The inode of the unlinked file is gone from the store, not just from the tree.
    const stored = await rawKeys(name);
    expect(stored.filter((k) => typeof k === 'number').length).toBe(49);
  });

  it('discard drops uncommitted writes; the tree is read back as stored', async () => {
    const name = freshName();
    const { fs, db } = open(name);
    const p = fs.promises;
    await p.writeFile('/kept.txt', 'kept', 'utf8');
    await p.flush();
    const tx = countWriteTransactions(name);

    db.hold();
    await p.writeFile('/kept.txt', 'overwritten', 'utf8');
    await p.writeFile('/dropped.txt', 'dropped', 'utf8');
    await p.flush(); // held: not stored
    expect(tx.count()).toBe(0);
    db.discard();
    await close(fs);

    expect(tx.count()).toBe(0);
    expect(await p.readdir('/')).toEqual(['kept.txt']);
    expect(await p.readFile('/kept.txt', 'utf8')).toBe('kept');
    // And what IndexedDB holds agrees, read by a fresh instance.
    await close(fs);
    const again = open(name);
    expect(await again.fs.promises.readFile('/kept.txt', 'utf8')).toBe('kept');
  });

  it('holds every save until release, which commits once, even across lightning-fs going idle', async () => {
    const name = freshName();
    const { fs, db } = open(name);
    const p = fs.promises;
    const tx = countWriteTransactions(name);
    db.hold();
    await p.writeFile('/a.txt', 'a', 'utf8');
    await p.flush();
    await close(fs); // lightning-fs saves its superblock and lets go: still held
    await p.writeFile('/b.txt', 'b', 'utf8'); // reactivates from the held superblock
    expect(await p.readdir('/')).toEqual(['a.txt', 'b.txt']);
    expect(tx.count()).toBe(0);
    await db.release();
    expect(tx.count()).toBe(1);
    // The superblock that names b.txt came after the held save; lightning-fs saves it on its own flush.
    await p.flush();
    await close(fs);
    const again = open(name);
    expect((await again.fs.promises.readdir('/')).sort()).toEqual(['a.txt', 'b.txt']);
    expect(await again.fs.promises.readFile('/b.txt', 'utf8')).toBe('b');
  });

  it('reads and writes databases of lightning-fs’s own backend, and the other way round', async () => {
    const name = freshName();
    const stock = new FS(name);
    await stock.promises.writeFile('/stock.txt', 'from IdbBackend', 'utf8');
    await close(stock);

    const ours = open(name);
    expect(await ours.fs.promises.readFile('/stock.txt', 'utf8')).toBe('from IdbBackend');
    await ours.fs.promises.writeFile('/ours.txt', 'from BatchedIdb', 'utf8');
    await close(ours.fs);

    const stockAgain = new FS(name);
    opened.push(stockAgain);
    expect(await stockAgain.promises.readFile('/ours.txt', 'utf8')).toBe('from BatchedIdb');
    expect(await stockAgain.promises.readFile('/stock.txt', 'utf8')).toBe('from IdbBackend');
  });

  it('numbers inodes without reusing one within a session, and every file keeps its own content', async () => {
    const name = freshName();
    const { fs } = open(name);
    const p = fs.promises;
    const inodes = new Set<number>();
    for (let i = 0; i < 300; i++) {
      await p.writeFile(`/f${i}`, `v${i}`, 'utf8');
      inodes.add((await p.stat(`/f${i}`)).ino);
      if (i % 3 === 0) await p.unlink(`/f${i}`);
    }
    expect(inodes.size).toBe(300);
    await close(fs);
    const again = open(name).fs.promises;
    for (let i = 0; i < 300; i++) {
      if (i % 3 === 0) await expect(again.readFile(`/f${i}`)).rejects.toThrow();
      else expect(await again.readFile(`/f${i}`, 'utf8')).toBe(`v${i}`);
    }
  });

  it('a refused commit is dropped, not retried, as STORAGE_FULL with its figures; the tree reloads as stored', async () => {
    const name = freshName();
    const { fs, db } = open(name);
    const p = fs.promises;
    await p.writeFile('/kept.txt', 'kept', 'utf8');
    await p.flush();
    const original = IDBDatabase.prototype.transaction;
    let refusals = 0;
    const spy = vi.spyOn(IDBDatabase.prototype, 'transaction').mockImplementation(function (
      this: IDBDatabase,
      ...args: Parameters<IDBDatabase['transaction']>
    ) {
      if (args[1] === 'readwrite' && refusals++ === 0) throw new DOMException('quota', 'QuotaExceededError');
      return original.apply(this, args);
    });
    await p.writeFile('/big.bin', new Uint8Array(2_500_000));
    const err = await p.flush().catch((e) => e);
    expect(err).toMatchObject({ name: 'StoreError', code: 'STORAGE_FULL' });
    expect(err.message).toContain('2.5 MB needed');
    expect(db.pendingWrites).toBe(0);
    spy.mockRestore();
    const tx = countWriteTransactions(name);
    await p.writeFile('/next.txt', 'next', 'utf8');
    await p.flush();
    // One commit of the new write alone: the refused 2.5 MB did not come back with it.
    expect(tx.count()).toBe(1);
    await close(fs);
    expect((await p.readdir('/')).sort()).toEqual(['kept.txt', 'next.txt']);
    const stored = await rawKeys(name);
    // Two files, the superblock and the commit's generation.
    expect(stored.length).toBe(4);
  });
});

describe('writeAllOrNothing', () => {
  it('stores everything written inside it in one transaction', async () => {
    const repoId = freshName();
    const fs = store.repoFs.open(repoId);
    opened.push(fs);
    await fs.promises.writeFile('/before.txt', 'before', 'utf8');
    const tx = countWriteTransactions(store.repoFs.dbName(repoId));
    await store.repoFs.writeAllOrNothing(repoId, async () => {
      await fs.promises.mkdir('/w');
      for (let i = 0; i < 100; i++) await fs.promises.writeFile(`/w/${i}`, `${i}`, 'utf8');
    });
    // One for what was pending before (kept out of the batch), one for the batch.
    expect(tx.count()).toBe(2);
    expect(store.repoFs.backend(repoId).pendingWrites).toBe(0);
    await close(fs);
    expect((await fs.promises.readdir('/w')).length).toBe(100);
  });

  it('stores nothing of a write that throws, and the tree is as before', async () => {
    const repoId = freshName();
    const fs = store.repoFs.open(repoId);
    opened.push(fs);
    const p = fs.promises;
    await p.writeFile('/kept.txt', 'kept', 'utf8');
    await p.mkdir('/dir');
    const failure = new Error('half way');
    await expect(
      store.repoFs.writeAllOrNothing(repoId, async () => {
        await p.writeFile('/kept.txt', 'changed', 'utf8');
        await p.writeFile('/dir/new.txt', 'new', 'utf8');
        await p.rmdir('/dir').catch(() => undefined);
        await p.unlink('/kept.txt');
        throw failure;
      }),
    ).rejects.toBe(failure);
    expect(await p.readFile('/kept.txt', 'utf8')).toBe('kept');
    expect(await p.readdir('/dir')).toEqual([]);
    expect(store.repoFs.backend(repoId).pendingWrites).toBe(0);
    await close(fs);
    expect(await p.readFile('/kept.txt', 'utf8')).toBe('kept');
  });

  it.each([
    // Chromium: a made-up quota, what the site uses plus 10 GiB.
    [
      { usage: 4_600_000, quota: 4_600_000 + 10 * 2 ** 30 },
      'this site stores 4.6 MB; the browser reports 10737.4 MB free, yet refused it',
    ],
    // A browser whose figures are true: less is free than was needed.
    [{ usage: 9_500_000, quota: 10_000_000 }, '0.5 MB free of 10.0 MB'],
    // Under a tenth of a megabyte, kilobytes: "0.0 MB free" would say nothing.
    [{ usage: 9_960_000, quota: 10_000_000 }, '40 KB free of 10.0 MB'],
  ])(
    'a batch the disk refuses is STORAGE_FULL with the figures (%o), and none of it is stored',
    async (estimate, room) => {
      const repoId = freshName();
      const fs = store.repoFs.open(repoId);
      opened.push(fs);
      const p = fs.promises;
      await p.writeFile('/kept.txt', 'kept', 'utf8');
      await p.flush();
      const nav = globalThis.navigator as unknown as { storage?: unknown };
      const storage = nav.storage;
      nav.storage = { estimate: async () => estimate };
      // The disk is full from the batch on: what was stored before it stays.
      let full = false;
      const original = IDBDatabase.prototype.transaction;
      vi.spyOn(IDBDatabase.prototype, 'transaction').mockImplementation(function (
        this: IDBDatabase,
        ...args: Parameters<IDBDatabase['transaction']>
      ) {
        if (
          full &&
          args[1] === 'readwrite' &&
          [args[0]].flat().includes(`${store.repoFs.dbName(repoId)}_files`)
        ) {
          throw new DOMException('The quota has been exceeded.', 'QuotaExceededError');
        }
        return original.apply(this, args);
      });
      try {
        const err = await store.repoFs
          .writeAllOrNothing(repoId, async () => {
            full = true;
            await p.writeFile('/pack.bin', new Uint8Array(1_500_000));
            await p.unlink('/kept.txt');
          })
          .catch((e) => e);
        expect(err).toMatchObject({ name: 'StoreError', code: 'STORAGE_FULL' });
        expect(err.message).toBe(
          `The browser refused to store the changes (1.5 MB needed; ${room}): its storage for this site is full. Delete repositories you no longer need, then try again.`,
        );
      } finally {
        nav.storage = storage;
        vi.restoreAllMocks();
      }
      expect(store.repoFs.backend(repoId).pendingWrites).toBe(0);
      expect(await p.readdir('/')).toEqual(['kept.txt']);
      await close(fs);
      expect(await p.readdir('/')).toEqual(['kept.txt']);
      expect(await p.readFile('/kept.txt', 'utf8')).toBe('kept');
    },
  );
});

describe('staging ahead of the commit', () => {
  /** A repo whose every new file is staged as soon as it is written (STAGE_BYTES 1). */
  function stagingRepo() {
    const repoId = freshName();
    const fs = store.repoFs.open(repoId);
    opened.push(fs);
    store.repoFs.backend(repoId).stageBytes = 1;
    return { repoId, fs, p: fs.promises, name: store.repoFs.dbName(repoId) };
  }

  /** The superblock IndexedDB holds now, read apart from the repo's own file system. */
  async function storedPaths(name: string): Promise<string[]> {
    const other = new FS(`${name}`, {
      db: new (await import('./batchedIdb.ts')).BatchedIdb(name, storage.files(name)),
    } as never);
    opened.push(other);
    const out: string[] = [];
    const walk = async (dir: string) => {
      for (const entry of await other.promises.readdir(dir).catch(() => [] as string[])) {
        const path = `${dir === '/' ? '' : dir}/${entry}`;
        if ((await other.promises.lstat(path)).isDirectory()) await walk(path);
        else out.push(path);
      }
    };
    await walk('/');
    await close(other);
    return out.sort();
  }

  it('stores new files before the commit, named by no stored superblock until it', async () => {
    const { repoId, fs, p, name } = stagingRepo();
    await p.writeFile('/before.txt', 'before', 'utf8');
    await p.flush();
    const keysBefore = (await rawKeys(name)).length;
    await store.repoFs.writeAllOrNothing(repoId, async () => {
      await p.mkdir('/w');
      for (let i = 0; i < 20; i++) await p.writeFile(`/w/${i}`, `content ${i}`, 'utf8');
      // Staged: their contents are in IndexedDB already, and out of the pending batch.
      await store.repoFs.backend(repoId).storedInodes();
      expect((await rawKeys(name)).length).toBe(keysBefore + 20);
      expect(store.repoFs.backend(repoId).pendingWrites).toBe(0);
      expect(await storedPaths(name)).toEqual(['/before.txt']);
      // Reads of a staged file go to IndexedDB.
      expect(await p.readFile('/w/7', 'utf8')).toBe('content 7');
    });
    expect(await storedPaths(name)).toEqual([
      '/before.txt',
      ...Array.from({ length: 20 }, (_, i) => `/w/${i}`).sort(),
    ]);
    await close(fs);
    expect(await p.readFile('/w/19', 'utf8')).toBe('content 19');
  });

  it('rewrites of files stored before are never staged: a failed write leaves them as they were', async () => {
    const { repoId, p, name } = stagingRepo();
    await p.writeFile('/kept.txt', 'kept', 'utf8');
    await p.flush();
    const keysBefore = await rawKeys(name);
    const failure = new Error('half way');
    await expect(
      store.repoFs.writeAllOrNothing(repoId, async () => {
        await p.writeFile('/kept.txt', 'x'.repeat(1000), 'utf8');
        await p.writeFile('/new.txt', 'new', 'utf8');
        await store.repoFs.backend(repoId).storedInodes();
        expect((await rawKeys(name)).length).toBe(keysBefore.length + 1);
        throw failure;
      }),
    ).rejects.toBe(failure);
    // The discard deleted what it staged; the old file is untouched.
    await store.repoFs.backend(repoId).storedInodes();
    expect((await rawKeys(name)).sort()).toEqual(keysBefore.sort());
    expect(await p.readFile('/kept.txt', 'utf8')).toBe('kept');
    await expect(p.readFile('/new.txt', 'utf8')).rejects.toThrow();
  });
});

function rawKeys(name: string): Promise<IDBValidKey[]> {
  return new Promise((resolve, reject) => {
    const req = indexedDB.open(name);
    req.onerror = () => reject(req.error);
    req.onsuccess = () => {
      const db = req.result;
      const keys = db.transaction(`${name}_files`, 'readonly').objectStore(`${name}_files`).getAllKeys();
      keys.onsuccess = () => {
        db.close();
        resolve(keys.result);
      };
      keys.onerror = () => reject(keys.error);
    };
  });
}
