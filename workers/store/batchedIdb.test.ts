import FS from '@isomorphic-git/lightning-fs';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { indexedDbStorage } from '../storage/indexedDb.ts';
import { memoryStorage } from '../storage/memory.ts';
import { BatchedIdb, handOver, STAGE_AHEAD_BYTES, type Superblock } from './batchedIdb.ts';
import { createBatchedFs } from './repoFs.ts';
import type { FileRecords, RecordKey } from './storage.ts';
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

/** recordsUnderTest after a transaction that staged inode 10's contents ahead failed (the disk full then). */
async function afterFailedStageAhead() {
  const under = recordsUnderTest();
  const { db, control } = under;
  db.stageBytes = 1;
  control.refuse = () => quotaError();
  await db.stageAhead(10, new Uint8Array(200_000));
  await db.storedInodes();
  control.refuse = null;
  return under;
}

/**
 * A database of file records on memory storage whose writes can be held back (`gate`) or refused (`refuse`),
 * and which counts them: what BatchedIdb does under a slow or full disk, without lightning-fs above it.
 */
function recordsUnderTest() {
  const inner = memoryStorage().files('db');
  const control = {
    inner,
    writes: [] as [RecordKey, unknown][][],
    gate: null as Promise<void> | null,
    readyGate: null as Promise<void> | null,
    refuse: null as ((changes: [RecordKey, unknown][]) => unknown) | null,
    closed: 0,
    cleared: 0,
  };
  const records: FileRecords = {
    get: (k) => inner.get(k),
    getMany: (k) => inner.getMany(k),
    keys: () => inner.keys(),
    ready: async () => {
      if (control.readyGate) await control.readyGate;
      await inner.ready();
    },
    async write(changes) {
      const taken = [...changes] as [RecordKey, unknown][];
      control.writes.push(taken);
      if (control.gate) await control.gate;
      const refused = control.refuse?.(taken);
      if (refused) throw refused;
      await inner.write(taken);
    },
    clear: async () => {
      control.cleared++;
      await inner.clear();
    },
    close: async () => {
      control.closed++;
    },
  };
  return { records, control, db: new BatchedIdb('db', records) };
}

function gate(): { promise: Promise<void>; open: () => void } {
  let open!: () => void;
  const promise = new Promise<void>((r) => {
    open = r;
  });
  return { promise, open };
}

const tree = (label: string) => new Map([['label', label]]) as unknown as Superblock;
const quotaError = () => new DOMException('The quota has been exceeded.', 'QuotaExceededError');
const tick = () => new Promise((r) => setTimeout(r, 5));

describe('BatchedIdb on its own', () => {
  it('commits the writes, the unlinks, the superblock and a new generation in one write', async () => {
    const { db, control, records } = recordsUnderTest();
    await records.write([[5, bytes('old')]]);
    control.writes.length = 0;
    await db.writeFile(1, bytes('one'));
    await db.writeFile(2, bytes('two'));
    await db.unlink(5);
    expect(db.pendingWrites).toBe(3);
    expect(text(await db.readFile(1))).toBe('one');
    expect(await db.readFile(5)).toBeUndefined();
    expect(control.writes).toEqual([]);
    await db.saveSuperblock(tree('a'));
    expect(control.writes).toHaveLength(1);
    expect(control.writes[0].map(([k]) => k)).toEqual([1, 2, 5, '!root', '!generation']);
    expect(db.transactions).toBe(1);
    expect(db.pendingWrites).toBe(0);
    const first = db.generation;
    expect(first).toMatch(/^[0-9a-z]+$/);
    expect(await db.storedGeneration()).toBe(first);
    expect(await db.storedInodes()).toEqual(new Set([1, 2]));
    await db.writeFile(1, bytes('ONE'));
    await db.saveSuperblock(tree('b'));
    expect(db.generation).not.toBe(first);
    // A new instance reads what was stored.
    const again = new BatchedIdb('db', records);
    expect(again.loaded).toBe(false);
    expect(await again.loadSuperblock()).toEqual(tree('b'));
    expect(again.loaded).toBe(true);
    expect(again.generation).toBe(db.generation);
    expect(text(await again.readFile(1))).toBe('ONE');
  });

  it('holds every save until the last release, which commits the newest superblock once', async () => {
    const { db, control } = recordsUnderTest();
    await expect(db.release()).rejects.toThrow('BatchedIdb.release() without hold()');
    db.hold();
    db.hold();
    expect(db.held).toBe(true);
    await db.writeFile(1, bytes('x'));
    await db.saveSuperblock(tree('first'));
    await db.saveSuperblock(tree('second'));
    expect(await db.loadSuperblock()).toEqual(tree('second'));
    await db.release();
    expect(control.writes).toHaveLength(0);
    expect(db.held).toBe(true);
    await db.release();
    expect(db.held).toBe(false);
    expect(control.writes).toHaveLength(1);
    expect(await new BatchedIdb('db', control.inner).loadSuperblock()).toEqual(tree('second'));
    // A hold in which nothing was saved commits nothing.
    db.hold();
    await db.writeFile(2, bytes('y'));
    await db.release();
    expect(control.writes).toHaveLength(1);
    expect(db.pendingWrites).toBe(1);
  });

  it('whenCommitted: true once the writes so far are stored, false when they are dropped', async () => {
    const { db } = recordsUnderTest();
    expect(await db.whenCommitted()).toBe(true);
    await db.writeFile(1, bytes('x'));
    const stored = db.whenCommitted();
    await db.saveSuperblock(tree('a'));
    expect(await stored).toBe(true);
    // Held: a commit of what was pending before waits for the hold to end.
    db.hold();
    await db.writeFile(2, bytes('y'));
    let settled: boolean | undefined;
    void db.whenCommitted().then((v) => (settled = v));
    await tick();
    expect(settled).toBeUndefined();
    await db.saveSuperblock(tree('b'));
    await tick();
    expect(settled).toBeUndefined();
    await db.release();
    expect(settled).toBe(true);
    db.hold();
    await db.writeFile(3, bytes('z'));
    const dropped = db.whenCommitted();
    db.discard();
    expect(await dropped).toBe(false);
  });

  it('discard drops the uncommitted writes and ignores saves until the tree is loaded again', async () => {
    const { db, control } = recordsUnderTest();
    await db.writeFile(1, bytes('kept'));
    await db.saveSuperblock(tree('a'));
    db.hold();
    db.hold();
    await db.writeFile(1, bytes('changed'));
    await db.writeFile(2, bytes('new'));
    await db.saveSuperblock(tree('b'));
    db.discard();
    expect(db.held).toBe(false);
    expect(db.pendingWrites).toBe(0);
    expect(text(await db.readFile(1))).toBe('kept');
    expect(await db.readFile(2)).toBeUndefined();
    // lightning-fs's tree in memory still names file 2: its save is not stored.
    await db.saveSuperblock(tree('stale'));
    expect(control.writes).toHaveLength(1);
    expect(await db.loadSuperblock()).toEqual(tree('a'));
    await db.writeFile(3, bytes('after'));
    await db.saveSuperblock(tree('c'));
    expect(control.writes).toHaveLength(2);
  });

  it('a bare save is stored only where mayCommitBareSave allows it', async () => {
    const { db, control } = recordsUnderTest();
    let writer = false;
    db.mayCommitBareSave = () => writer;
    await db.saveSuperblock(tree('reads only'));
    expect(control.writes).toHaveLength(0);
    // With a file written, it is this worker's change and is stored.
    await db.writeFile(1, bytes('x'));
    await db.saveSuperblock(tree('with a file'));
    expect(control.writes).toHaveLength(1);
    writer = true;
    await db.saveSuperblock(tree('a mkdir under the lock'));
    expect(control.writes).toHaveLength(2);
    // Held, the save is kept for the release whatever the check says.
    writer = false;
    db.hold();
    await db.saveSuperblock(tree('held'));
    await db.release();
    expect(control.writes).toHaveLength(3);
  });

  it('reads see a batch while its commit is in flight', async () => {
    const { db, control } = recordsUnderTest();
    const slow = gate();
    control.gate = slow.promise;
    await db.writeFile(1, bytes('in flight'));
    const committing = db.saveSuperblock(tree('a'));
    await tick();
    expect(db.pendingWrites).toBe(0);
    expect(text(await db.readFile(1))).toBe('in flight');
    // Newer writes are read first.
    await db.writeFile(1, bytes('newer'));
    expect(text(await db.readFile(1))).toBe('newer');
    slow.open();
    await committing;
    await db.unlink(1);
    expect(await db.readFile(1)).toBeUndefined();
  });

  it('commits in the order they were asked for, each after the one before', async () => {
    const { db, control } = recordsUnderTest();
    const slow = gate();
    control.gate = slow.promise;
    await db.writeFile(1, bytes('first'));
    const a = db.saveSuperblock(tree('a'));
    await db.writeFile(1, bytes('second'));
    const b = db.saveSuperblock(tree('b'));
    await tick();
    expect(control.writes).toHaveLength(1);
    // What is stored is read after the commits asked for before.
    const generation = db.storedGeneration();
    const inodes = db.storedInodes();
    slow.open();
    await Promise.all([a, b]);
    expect(await generation).toBe(db.generation);
    expect(await inodes).toEqual(new Set([1]));
    expect(text(await control.inner.get(1))).toBe('second');
    expect(await control.inner.get('!root')).toEqual(tree('b'));
  });

  it('a refused commit throws STORAGE_FAILED, drops the batch, tells the owner, and ignores saves', async () => {
    const { db, control } = recordsUnderTest();
    await db.writeFile(1, bytes('kept'));
    await db.saveSuperblock(tree('a'));
    let failed = 0;
    db.onCommitFailed = () => failed++;
    control.refuse = () => new Error('disk on fire');
    await db.writeFile(1, bytes('lost'));
    await db.unlink(2);
    const waiter = db.whenCommitted();
    await expect(db.saveSuperblock(tree('b'))).rejects.toMatchObject({
      code: 'STORAGE_FAILED',
      message: 'Could not store the changes: disk on fire',
    });
    expect(await waiter).toBe(false);
    expect(failed).toBe(1);
    expect(db.pendingWrites).toBe(0);
    expect(text(await db.readFile(1))).toBe('kept');
    control.refuse = null;
    await db.saveSuperblock(tree('stale'));
    expect(await control.inner.get('!root')).toEqual(tree('a'));
    // The next commit after a reload is stored, and commits chained after a failed one still run.
    expect(await db.loadSuperblock()).toEqual(tree('a'));
    await db.writeFile(3, bytes('next'));
    await db.saveSuperblock(tree('c'));
    expect(await control.inner.get('!root')).toEqual(tree('c'));
  });

  it('a refused commit while held says how much it needed', async () => {
    const { db, control } = recordsUnderTest();
    control.refuse = () => quotaError();
    db.hold();
    await db.writeFile(1, new Uint8Array(300_000));
    await db.unlink(2);
    await db.saveSuperblock(tree('a'));
    await expect(db.release()).rejects.toMatchObject({ code: 'STORAGE_FULL' });
    await expect(
      (async () => {
        db.hold();
        await db.loadSuperblock();
        await db.writeFile(1, new Uint8Array(300_000));
        await db.saveSuperblock(tree('a'));
        await db.release();
      })(),
    ).rejects.toThrow('(0.3 MB needed');
  });

  it('kill: nothing is stored from then on', async () => {
    const { db, control } = recordsUnderTest();
    db.hold();
    await db.writeFile(1, bytes('x'));
    await db.saveSuperblock(tree('a'));
    db.kill();
    await db.release().catch(() => undefined);
    await db.writeFile(2, bytes('y'));
    await db.saveSuperblock(tree('b'));
    await db.stageAhead(9, bytes('ahead'));
    await db.flushStagedAhead();
    await db.dropStagedAhead([9]);
    expect(control.writes).toEqual([]);
  });

  it('close lets go of the records only with nothing pending; wipe deletes everything', async () => {
    const { db, control } = recordsUnderTest();
    await db.writeFile(1, bytes('x'));
    await db.close();
    expect(control.closed).toBe(0);
    db.hold();
    await db.saveSuperblock(tree('a'));
    await db.close();
    expect(control.closed).toBe(0);
    await db.release();
    await db.close();
    expect(control.closed).toBe(1);
    db.hold();
    await db.writeFile(2, bytes('y'));
    await db.saveSuperblock(tree('b'));
    await db.wipe();
    expect(control.cleared).toBe(1);
    expect(await control.inner.keys()).toEqual([]);
    expect(db.pendingWrites).toBe(0);
    await db.release();
    expect(control.writes).toHaveLength(1);
  });
});

describe('BatchedIdb staging within a hold', () => {
  it('stores fresh contents once stageBytes are pending, and only fresh ones', async () => {
    const { db, control } = recordsUnderTest();
    await db.writeFile(1, bytes('old'));
    await db.saveSuperblock(tree('a'));
    db.stageBytes = 10;
    db.noteNewInode(7);
    expect(control.writes).toHaveLength(1);
    db.hold();
    db.noteNewInode(2);
    db.noteNewInode(3);
    await db.writeFile(1, bytes('rewritten old file'));
    await db.writeFile(2, bytes('12345'));
    await db.unlink(3);
    await db.storedInodes();
    expect(control.writes).toHaveLength(1);
    await db.writeFile(3, bytes('67890'));
    await db.storedInodes();
    // 10 fresh bytes: staged, in a transaction of their own, out of the pending batch.
    expect(control.writes).toHaveLength(2);
    expect(control.writes[1].map(([k]) => k)).toEqual([2, 3]);
    expect(db.pendingWrites).toBe(1);
    expect(text(await db.readFile(2))).toBe('12345');
    // A fresh file unlinked before its staging is not staged (nor deleted there): the commit deletes it.
    db.noteNewInode(4);
    db.noteNewInode(5);
    await db.writeFile(4, bytes('1'));
    await db.unlink(4);
    await db.writeFile(5, bytes('0123456789'));
    await db.storedInodes();
    expect(control.writes[2].map(([k]) => k)).toEqual([5]);
    control.writes.splice(2, 1);
    // Inode 7 was numbered outside the hold: the commit stores it, never staging.
    await db.writeFile(7, new Uint8Array(100));
    await db.storedInodes();
    expect(control.writes).toHaveLength(2);
    await db.saveSuperblock(tree('b'));
    await db.release();
    expect(control.writes[2].map(([k]) => k)).toEqual([1, 4, 7, '!root', '!generation']);
    expect(new Set(await control.inner.keys())).toEqual(new Set([1, 2, 3, 5, 7, '!root', '!generation']));
  });

  it('reads see contents while their staging transaction runs', async () => {
    const { db, control } = recordsUnderTest();
    db.stageBytes = 1;
    db.hold();
    db.noteNewInode(2);
    const slow = gate();
    control.gate = slow.promise;
    await db.writeFile(2, bytes('staging'));
    await tick();
    expect(db.pendingWrites).toBe(0);
    expect(control.writes).toHaveLength(1);
    expect(text(await db.readFile(2))).toBe('staging');
    slow.open();
    await db.storedInodes();
    expect(text(await db.readFile(2))).toBe('staging');
    db.discard();
  });

  it('a discarded hold deletes what it staged, in flight or done; the old files stay', async () => {
    const { db, control } = recordsUnderTest();
    await db.writeFile(1, bytes('old'));
    await db.saveSuperblock(tree('a'));
    db.stageBytes = 1;
    db.hold();
    db.noteNewInode(2);
    db.noteNewInode(3);
    await db.writeFile(2, bytes('staged'));
    await db.storedInodes();
    const slow = gate();
    control.gate = slow.promise;
    await db.writeFile(3, bytes('in flight'));
    await tick();
    db.discard();
    slow.open();
    await db.storedInodes();
    expect(new Set(await control.inner.keys())).toEqual(new Set([1, '!root', '!generation']));
    expect(text(await db.readFile(1))).toBe('old');
  });

  it('a staging transaction refused fails the commit with its own error; nothing of the batch stays', async () => {
    const { db, control } = recordsUnderTest();
    await db.writeFile(1, bytes('old'));
    await db.saveSuperblock(tree('a'));
    db.stageBytes = 1;
    db.hold();
    db.noteNewInode(2);
    db.noteNewInode(3);
    await db.writeFile(2, bytes('staged'));
    await db.storedInodes();
    control.refuse = (changes) => (changes.some(([k]) => k === 3) ? quotaError() : null);
    await db.writeFile(3, new Uint8Array(200_000));
    await db.writeFile(1, bytes('changed'));
    await db.saveSuperblock(tree('b'));
    const err = await db.release().catch((e) => e);
    expect(err).toMatchObject({ code: 'STORAGE_FULL' });
    expect(err.message).toContain('(0.2 MB needed');
    control.refuse = null;
    await db.storedInodes();
    expect(new Set(await control.inner.keys())).toEqual(new Set([1, '!root', '!generation']));
    expect(await control.inner.get('!root')).toEqual(tree('a'));
    // The next hold starts clean.
    await db.loadSuperblock();
    db.hold();
    db.noteNewInode(4);
    await db.writeFile(4, bytes('next'));
    await db.saveSuperblock(tree('c'));
    await db.release();
    expect(await control.inner.get('!root')).toEqual(tree('c'));
    expect(text(await control.inner.get(4))).toBe('next');
  });

  it('a wipe ends the hold’s staging: the next hold stages afresh', async () => {
    const { db, control } = recordsUnderTest();
    db.stageBytes = 1;
    db.hold();
    db.noteNewInode(2);
    await db.wipe();
    await db.writeFile(2, bytes('not fresh any more'));
    await db.storedInodes();
    expect(control.writes).toEqual([]);
  });
});

describe('BatchedIdb staging ahead of a hold', () => {
  it('stores contents in transactions of about stageBytes, adopted by the hold that names them', async () => {
    const { db, control } = recordsUnderTest();
    db.stageBytes = 6;
    await db.stageAhead(10, bytes('abc'));
    expect(control.writes).toHaveLength(0);
    await db.stageAhead(11, bytes('def'));
    await db.storedInodes();
    expect(control.writes.map((w) => w.map(([k]) => k))).toEqual([[10, 11]]);
    await db.stageAhead(12, bytes('g'));
    await db.flushStagedAhead();
    expect(control.writes.map((w) => w.map(([k]) => k))).toEqual([[10, 11], [12]]);
    // Nothing left: no empty transaction.
    await db.flushStagedAhead();
    expect(control.writes).toHaveLength(2);
    expect(() => db.adoptStagedAhead([10])).toThrow('BatchedIdb.adoptStagedAhead() outside a hold');
    db.hold();
    db.adoptStagedAhead([10, 11, 12]);
    await db.saveSuperblock(tree('names them'));
    await db.release();
    expect(text(await db.readFile(12))).toBe('g');
    expect(new Set(await control.inner.keys())).toEqual(new Set([10, 11, 12, '!root', '!generation']));
  });

  it('contents not yet in a transaction when adopted go with the hold’s commit, not one of their own', async () => {
    const { db, control } = recordsUnderTest();
    db.stageBytes = 6;
    await db.stageAhead(10, bytes('abcdef'));
    await db.stageAhead(11, bytes('gh'));
    await db.storedInodes();
    expect(control.writes.map((w) => w.map(([k]) => k))).toEqual([[10]]);
    db.hold();
    db.adoptStagedAhead([10, 11]);
    await db.saveSuperblock(tree('names them'));
    await db.release();
    expect(control.writes.map((w) => w.map(([k]) => k))).toEqual([[10], [11, '!root', '!generation']]);
    expect(text(await db.readFile(11))).toBe('gh');
    // Left nothing to stage: a flush stores nothing more.
    await db.flushStagedAhead();
    expect(control.writes).toHaveLength(2);
    // Dropped with a discarded hold: never stored.
    await db.stageAhead(12, bytes('ij'));
    db.hold();
    db.adoptStagedAhead([12]);
    db.discard();
    await db.storedInodes();
    expect(control.writes).toHaveLength(2);
    expect(await control.inner.keys()).not.toContain(12);
  });

  it('a hold naming contents whose transaction failed does not commit', async () => {
    const { db, control } = await afterFailedStageAhead();
    db.hold();
    db.adoptStagedAhead([10]);
    await db.saveSuperblock(tree('names a file not stored'));
    await expect(db.release()).rejects.toMatchObject({ code: 'STORAGE_FULL' });
    expect(await control.inner.keys()).toEqual([]);
  });

  it('a discarded hold deletes the contents it adopted', async () => {
    const { db, control } = recordsUnderTest();
    db.stageBytes = 1;
    await db.stageAhead(10, bytes('abc'));
    await db.flushStagedAhead();
    db.hold();
    db.adoptStagedAhead([10]);
    db.discard();
    await db.storedInodes();
    expect(await control.inner.keys()).toEqual([]);
  });

  it('dropStagedAhead deletes what will not be placed, after its puts, and forgets a failure', async () => {
    const { db, control } = recordsUnderTest();
    db.stageBytes = 1;
    const slow = gate();
    control.gate = slow.promise;
    await db.stageAhead(10, bytes('abc'));
    const dropping = db.dropStagedAhead([10]);
    slow.open();
    await dropping;
    expect(await control.inner.keys()).toEqual([]);
    await db.dropStagedAhead([]);
    expect(control.writes).toHaveLength(2);
    db.stageBytes = 100;
    await db.stageAhead(11, bytes('pending'));
    await db.dropStagedAhead([11]);
    await db.flushStagedAhead();
    expect(control.writes).toHaveLength(3);
    expect(await control.inner.keys()).toEqual([]);
    // A failure is given to every later call, until a drop forgets it.
    db.stageBytes = 1;
    control.refuse = () => quotaError();
    // Stored behind the call: the failure reaches the calls after it.
    await db.stageAhead(12, new Uint8Array(200_000));
    await db.storedInodes();
    control.refuse = null;
    await expect(db.stageAhead(13, bytes('x'))).rejects.toThrow('(0.2 MB needed');
    await expect(db.flushStagedAhead()).rejects.toMatchObject({ code: 'STORAGE_FULL' });
    await db.dropStagedAhead([12, 13]);
    await db.stageAhead(14, bytes('ok'));
    await db.flushStagedAhead();
    expect(await control.inner.keys()).toEqual([14]);
  });

  it('waits while more than STAGE_AHEAD_BYTES are in transactions not yet complete', async () => {
    const { db, control } = recordsUnderTest();
    const slow = gate();
    control.gate = slow.promise;
    const big = STAGE_AHEAD_BYTES / 2 + 1;
    await db.stageAhead(1, new Uint8Array(big));
    let second = false;
    const waiting = db.stageAhead(2, new Uint8Array(big)).then(() => {
      second = true;
    });
    await tick();
    expect(second).toBe(false);
    slow.open();
    await waiting;
    expect(second).toBe(true);
    // At most STAGE_AHEAD_BYTES in flight does not wait.
    const slower = gate();
    control.gate = slower.promise;
    let third = false;
    const small = db.stageAhead(3, new Uint8Array(STAGE_AHEAD_BYTES / 4)).then(() => {
      third = true;
    });
    await tick();
    expect(third).toBe(true);
    slower.open();
    await small;
    await db.flushStagedAhead();
  });
});

describe('BatchedIdb, what each guard keeps out', () => {
  it('a save queued behind a commit in flight is dropped by a discard before it runs', async () => {
    const { db, control } = recordsUnderTest();
    const slow = gate();
    control.gate = slow.promise;
    await db.writeFile(1, bytes('a'));
    const a = db.saveSuperblock(tree('a'));
    await tick();
    await db.writeFile(2, bytes('b'));
    const b = db.saveSuperblock(tree('b'));
    db.discard();
    slow.open();
    await Promise.all([a, b]);
    expect(control.writes).toHaveLength(1);
    expect(await control.inner.get('!root')).toEqual(tree('a'));
  });

  it('a discard while the records open drops the commit waiting for them', async () => {
    const { db, control } = recordsUnderTest();
    const opening = gate();
    control.readyGate = opening.promise;
    await db.writeFile(1, bytes('a'));
    const a = db.saveSuperblock(tree('a'));
    await tick();
    db.discard();
    opening.open();
    await a;
    expect(control.writes).toEqual([]);
  });

  it('whenCommitted inside a hold waits for the hold’s commit, even before anything is written', async () => {
    const { db } = recordsUnderTest();
    db.hold();
    let settled: boolean | undefined;
    void db.whenCommitted().then((v) => (settled = v));
    await tick();
    expect(settled).toBeUndefined();
    await db.writeFile(1, bytes('x'));
    await db.saveSuperblock(tree('a'));
    await db.release();
    expect(settled).toBe(true);
  });

  it('a commit queued before a hold does not settle the waiters of the hold’s writes', async () => {
    const { db, control } = recordsUnderTest();
    const slow = gate();
    control.gate = slow.promise;
    await db.writeFile(1, bytes('before'));
    const before = db.saveSuperblock(tree('before'));
    db.hold();
    await db.writeFile(2, bytes('held'));
    let settled: boolean | undefined;
    void db.whenCommitted().then((v) => (settled = v));
    control.gate = null;
    slow.open();
    await before;
    await tick();
    expect(settled).toBeUndefined();
    await db.saveSuperblock(tree('held'));
    await db.release();
    expect(settled).toBe(true);
  });

  it('reads find a file in an older staging batch or the commit in flight, past batches that lack it', async () => {
    const { db, control } = recordsUnderTest();
    const slow = gate();
    control.gate = slow.promise;
    await db.writeFile(1, bytes('committing'));
    const commit = db.saveSuperblock(tree('a'));
    db.stageBytes = 1;
    db.hold();
    db.noteNewInode(2);
    db.noteNewInode(3);
    await db.writeFile(2, bytes('older staging'));
    await db.writeFile(3, bytes('newer staging'));
    expect(text(await db.readFile(2))).toBe('older staging');
    expect(text(await db.readFile(1))).toBe('committing');
    slow.open();
    await commit;
    db.discard();
  });

  it('reads past a commit in flight that lacks the file find it where it is stored', async () => {
    const { db, control } = recordsUnderTest();
    await db.writeFile(2, bytes('stored'));
    await db.saveSuperblock(tree('a'));
    const slow = gate();
    control.gate = slow.promise;
    await db.writeFile(1, bytes('committing'));
    const commit = db.saveSuperblock(tree('b'));
    await tick();
    // The batch in flight holds inode 1 only: the look-up goes past it to the records.
    expect(text(await db.readFile(2))).toBe('stored');
    expect(await db.readFile(3)).toBeUndefined();
    slow.open();
    await commit;
  });

  it('counts only fresh contents toward staging: rewrites of stored files never set it off', async () => {
    const { db, control } = recordsUnderTest();
    await db.writeFile(1, bytes('old'));
    await db.saveSuperblock(tree('a'));
    db.stageBytes = 10;
    db.hold();
    db.noteNewInode(2);
    await db.writeFile(2, bytes('12345'));
    await db.writeFile(1, bytes('67890'));
    await db.storedInodes();
    expect(control.writes).toHaveLength(1);
    db.discard();
  });

  it('after a staging transaction fails, the hold stages nothing more', async () => {
    const { db, control } = recordsUnderTest();
    db.stageBytes = 1;
    db.hold();
    db.noteNewInode(2);
    db.noteNewInode(3);
    control.refuse = () => quotaError();
    await db.writeFile(2, bytes('refused'));
    await db.storedInodes();
    control.refuse = null;
    await db.writeFile(3, bytes('not tried'));
    await db.storedInodes();
    expect(control.writes).toHaveLength(1);
    await db.saveSuperblock(tree('a'));
    const err = await db.release().catch((e) => e);
    expect(err.message).toContain('refused to store the changes (1 KB needed');
  });

  it('a terminated worker deletes nothing it staged: startup repair does', async () => {
    const { db, control } = recordsUnderTest();
    db.stageBytes = 1;
    db.hold();
    db.noteNewInode(2);
    await db.writeFile(2, bytes('staged'));
    await db.storedInodes();
    db.kill();
    await db.storedInodes();
    expect(control.writes).toHaveLength(1);
    expect(await control.inner.keys()).toEqual([2]);
  });

  it('close keeps the records open while a held superblock waits, even with nothing pending', async () => {
    const { db, control } = recordsUnderTest();
    db.hold();
    await db.saveSuperblock(tree('a'));
    expect(db.pendingWrites).toBe(0);
    await db.close();
    expect(control.closed).toBe(0);
    db.discard();
  });

  it('deleteUnnamed deletes the records named, after the writes before it', async () => {
    const { db, control } = recordsUnderTest();
    await control.inner.write([
      [7, bytes('x')],
      [8, bytes('y')],
    ]);
    await db.writeFile(1, bytes('a'));
    const slow = gate();
    control.gate = slow.promise;
    const commit = db.saveSuperblock(tree('a'));
    const deleting = db.deleteUnnamed([7]);
    control.gate = null;
    slow.open();
    await Promise.all([commit, deleting]);
    expect(new Set(await control.inner.keys())).toEqual(new Set([1, 8, '!root', '!generation']));
  });
});

describe('BatchedIdb staging ahead, what each guard keeps out', () => {
  it('an empty file staged ahead is stored too', async () => {
    const { db, control } = recordsUnderTest();
    await db.stageAhead(10, new Uint8Array(0));
    await db.flushStagedAhead();
    expect(await control.inner.keys()).toEqual([10]);
  });

  it('exactly STAGE_AHEAD_BYTES in flight does not wait', async () => {
    const { db, control } = recordsUnderTest();
    const slow = gate();
    control.gate = slow.promise;
    let done = false;
    const call = db.stageAhead(1, new Uint8Array(STAGE_AHEAD_BYTES)).then(() => {
      done = true;
    });
    await tick();
    expect(done).toBe(true);
    slow.open();
    await call;
    await db.flushStagedAhead();
  });

  it('a call that waited throws the failure that came meanwhile, with what it was storing', async () => {
    const { db, control } = recordsUnderTest();
    const slow = gate();
    control.gate = slow.promise;
    await db.stageAhead(1, new Uint8Array(STAGE_AHEAD_BYTES / 2 + 1));
    const waiting = db.stageAhead(2, new Uint8Array(STAGE_AHEAD_BYTES / 2 + 1));
    control.refuse = () => quotaError();
    slow.open();
    const err = await waiting.catch((e) => e);
    expect(err).toMatchObject({ code: 'STORAGE_FULL' });
    expect(err.message).toContain('refused to store the changes (8.4 MB needed');
  });

  it('a commit that names nothing staged ahead is stored although a transaction staged ahead failed', async () => {
    const { db, control } = await afterFailedStageAhead();
    // Only a commit naming contents staged ahead depends on them (the hold's adopted ones); this one is
    // of other files, and the failure is still the stage-ahead callers' to hear.
    await db.writeFile(1, bytes('other'));
    await db.saveSuperblock(tree('a'));
    expect(new Set(await control.inner.keys())).toEqual(new Set([1, '!root', '!generation']));
    await expect(db.flushStagedAhead()).rejects.toMatchObject({ code: 'STORAGE_FULL' });
  });

  it('contents queued behind a failed transaction are not stored, nor after a kill', async () => {
    const { db, control } = recordsUnderTest();
    db.stageBytes = 1;
    const slow = gate();
    control.gate = slow.promise;
    await db.stageAhead(1, bytes('refused'));
    await db.stageAhead(2, bytes('queued'));
    control.refuse = (changes) => (changes.some(([k]) => k === 1) ? quotaError() : null);
    slow.open();
    await expect(db.flushStagedAhead()).rejects.toMatchObject({ code: 'STORAGE_FULL' });
    expect(await control.inner.keys()).toEqual([]);
    expect(control.writes).toHaveLength(1);

    const other = recordsUnderTest();
    other.db.stageBytes = 1;
    const slower = gate();
    other.control.gate = slower.promise;
    await other.db.stageAhead(1, bytes('a'));
    await other.db.stageAhead(2, bytes('b'));
    await tick();
    other.control.gate = null;
    other.db.kill();
    slower.open();
    await other.db.storedInodes();
    expect(other.control.writes).toHaveLength(1);
  });
});
