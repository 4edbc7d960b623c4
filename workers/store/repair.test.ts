// Startup repair on memory storage, without a git server: a repo stored from a pack git made, then left as
// an interrupted write leaves it (a record or a database missing, contents missing, unnamed contents, pack
// files without partners, a record behind HEAD), repaired by a new engine on the same storage, as a worker
// starting in a new tab. The git CLI judges what is left: the rebuilt index is git's own, byte for byte,
// and `git fsck` accepts the repaired git directory. test/crashRepair*.test.ts crash real operations.

import { execFileSync } from 'node:child_process';
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { exportDir } from '../../test/support/exportGitDir.ts';
import { useTmpDir } from '../../test/support/tmpDir.ts';
import { memoryStorage } from '../storage/memory.ts';
import { writeNewGitDir } from './gitDir.ts';
import type { RepoRecord } from './registry.ts';
import { repairStores } from './repair.ts';
import type { RepoEvent } from './repoEvents.ts';
import { GITDIR, type PromiseFs } from './repoFs.ts';
import type { Storage } from './storage.ts';
import { Store } from './store.ts';
import { repoRecord } from './testing/repoRecord.ts';

const tmp = useTmpDir('repair');
const NS = 'repairtest';
const ID = 'r';

const git = (cwd: string, ...args: string[]) =>
  execFileSync('git', args, {
    cwd,
    encoding: 'utf8',
    env: {
      ...process.env,
      GIT_AUTHOR_NAME: 'A',
      GIT_AUTHOR_EMAIL: 'a@example.com',
      GIT_COMMITTER_NAME: 'A',
      GIT_COMMITTER_EMAIL: 'a@example.com',
      GIT_AUTHOR_DATE: '1700000000 +0000',
      GIT_COMMITTER_DATE: '1700000000 +0000',
    },
  }).trim();

/** A repository of two commits, all its objects in one pack: what a clone stores. */
let source: { checksum: string; pack: Uint8Array; idx: Uint8Array; first: string; head: string };

beforeAll(() => {
  const dir = join(tmp(), 'source');
  mkdirSync(dir);
  git(dir, 'init', '-q', '-b', 'main');
  writeFileSync(join(dir, 'a.txt'), 'one\n');
  git(dir, 'add', '.');
  git(dir, 'commit', '-q', '-m', 'first');
  const first = git(dir, 'rev-parse', 'HEAD');
  writeFileSync(join(dir, 'b.txt'), 'two\n');
  git(dir, 'add', '.');
  git(dir, 'commit', '-q', '-m', 'second');
  git(dir, 'repack', '-adq');
  const packDir = join(dir, '.git/objects/pack');
  const name = readdirSync(packDir).find((n) => n.endsWith('.pack')) as string;
  const checksum = name.slice('pack-'.length, -'.pack'.length);
  source = {
    checksum,
    pack: new Uint8Array(readFileSync(join(packDir, name))),
    idx: new Uint8Array(readFileSync(join(packDir, `pack-${checksum}.idx`))),
    first,
    head: git(dir, 'rev-parse', 'HEAD'),
  };
});

const opened: Store[] = [];
afterEach(async () => {
  for (const s of opened.splice(0)) await s.close();
});

/** An engine on `storage`, as a worker starting in a tab. */
function engine(storage: Storage): Store {
  const store = new Store(storage, NS);
  opened.push(store);
  return store;
}

const record = (over: Partial<RepoRecord> = {}) => repoRecord(ID, { headOid: source.head, ...over });

const packPath = (ext: string, checksum = source.checksum) =>
  `${GITDIR}/objects/pack/pack-${checksum}.${ext}`;

/** Stores a clone of the source as repo `r` and its record; `change` then alters its files before the flush. */
async function seed(
  storage: Storage,
  opts: { record?: Partial<RepoRecord>; change?: (fs: PromiseFs) => Promise<void> } = {},
): Promise<void> {
  const store = engine(storage);
  const fs = store.repoFs.open(ID).promises;
  await writeNewGitDir(fs, {
    description: 'Cloned by Blobless',
    config: {
      remote: { url: 'https://example.com/r.git', fetchRefspec: '+refs/heads/*:refs/remotes/origin/*' },
    },
    head: { branch: 'main' },
    looseRefs: [{ name: 'refs/heads/main', value: source.head }],
    packedRefs: [],
    shallow: [],
    pack: { checksum: source.checksum, pack: source.pack.slice(), idx: source.idx.slice(), promisor: '' },
  });
  await fs.writeFile('/a.txt', 'one\n', 'utf8');
  await opts.change?.(fs);
  await fs.flush();
  await store.registry.put(record(opts.record));
  await store.close();
}

/** Deletes the stored contents of the files at `paths`, as a write that died half-way could leave them. */
async function loseContents(storage: Storage, ...paths: string[]): Promise<void> {
  const store = engine(storage);
  const fs = store.repoFs.open(ID).promises;
  const inodes = [];
  for (const path of paths) inodes.push((await fs.lstat(path)).ino as number);
  await store.close();
  await storage.files(store.repoFs.dbName(ID)).write(inodes.map((ino) => [ino, null]));
}

/** The locks taken (`repoId: what`), as another tab hears them; `stop` waits until each was let go. */
function hearLocks(): { busy: string[]; stop: (expectIdle?: boolean) => Promise<void> } {
  const busy: string[] = [];
  let idle = 0;
  const channel = new BroadcastChannel(`${NS}-repos`);
  channel.onmessage = (e: MessageEvent<RepoEvent>) => {
    if (e.data.type === 'busy') busy.push(`${e.data.repoId}: ${e.data.what}`);
    if (e.data.type === 'idle') idle++;
  };
  /** `expectIdle` false: no lock was taken, so no idle message is coming; the wait would run its 2 s out. */
  const stop = async (expectIdle = true) => {
    for (let i = 0; i < 200 && ((expectIdle && idle === 0) || idle < busy.length); i++)
      await new Promise((r) => setTimeout(r, 10));
    channel.close();
  };
  return { busy, stop };
}

/**
 * Repairs with a new engine, and hands it back to look at what is left, with the repos whose pack set it
 * dropped (to be read again) and the locks it took, as the other tabs hear them. `lockHeld`: the repo's
 * lock is held elsewhere, so repair takes none (and `busy` is not waited for).
 */
async function repair(storage: Storage, opts: { lockHeld?: boolean } = {}) {
  const store = engine(storage);
  const forgotten: string[] = [];
  const forget = store.forgetRepo.bind(store);
  store.forgetRepo = (id) => {
    forgotten.push(id);
    forget(id);
  };
  const { busy, stop } = hearLocks();
  const report = await repairStores(store);
  await stop(!opts.lockHeld);
  return { store, report, fs: store.repoFs.open(ID).promises, forgotten, busy };
}

async function exists(fs: PromiseFs, path: string): Promise<boolean> {
  return fs.lstat(path).then(
    () => true,
    () => false,
  );
}

/** `git fsck` on the repo's git directory copied to disk: throws (with git's words) if git refuses it. */
async function fsck(store: Store): Promise<void> {
  const dir = join(tmp(), `export-${Math.random().toString(36).slice(2)}`);
  await exportDir(store.repoFs.open(ID), GITDIR, dir);
  git(dir, '--git-dir', dir, 'fsck', '--strict', '--no-dangling');
}

describe('repairStores', () => {
  it('leaves a whole repo as it is, and git accepts it', async () => {
    const storage = memoryStorage();
    await seed(storage);
    const { store, report, fs, forgotten, busy } = await repair(storage);
    expect(report).toEqual({ removed: [], reported: [] });
    // Checked under the repo's lock; nothing changed, so its pack set is kept.
    expect(busy).toEqual(['r: repairing']);
    expect(forgotten).toEqual([]);
    expect(await store.registry.get(ID)).toEqual(record());
    expect(await fs.readFile('/a.txt', 'utf8')).toBe('one\n');
    await fsck(store);
  });

  it('deletes a database no record names, and a lock companion left alone', async () => {
    const storage = memoryStorage();
    await seed(storage);
    const other = engine(storage);
    await other.registry.remove(ID);
    await storage.files(`${NS}-repo-gone_lock`).write([['x', 1]]);
    await storage.files('someone-else').write([['x', 1]]);
    const { busy, stop } = hearLocks();
    const report = await repairStores(engine(storage));
    await stop();
    // Each deleted under its lock, which the other tabs hear is taken for repairing.
    expect(busy.sort()).toEqual(['gone: repairing', 'r: repairing']);
    expect(report.removed.sort()).toEqual([
      `Deleted ${NS}-repo-gone_lock, left behind by a repository that is gone.`,
      `Deleted ${NS}-repo-r: an interrupted clone that no repository record names.`,
    ]);
    expect(report.reported).toEqual([]);
    expect(await storage.listDatabases()).toEqual(['someone-else']);
  });

  it('leaves a database without a record alone while its clone holds the lock', async () => {
    const storage = memoryStorage();
    await seed(storage);
    const cloning = engine(storage);
    await cloning.registry.remove(ID);
    let release = () => {};
    const held = cloning.locks.withRepoLock(ID, 'clone', () => new Promise<void>((r) => (release = r)));
    await new Promise((r) => setTimeout(r, 10));
    const { report } = await repair(storage, { lockHeld: true });
    expect(report).toEqual({ removed: [], reported: [] });
    expect(await storage.listDatabases()).toContain(`${NS}-repo-r`);
    release();
    await held;
  });

  it('removes a record whose database is gone, unless its lock is held', async () => {
    const storage = memoryStorage();
    await seed(storage);
    await storage.deleteDatabase(`${NS}-repo-r`, { blockedTimeoutMs: 0 });
    const holder = engine(storage);
    let release = () => {};
    const held = holder.locks.withRepoLock(ID, 'clone', () => new Promise<void>((r) => (release = r)));
    await new Promise((r) => setTimeout(r, 10));
    const busy = await repair(storage, { lockHeld: true });
    expect(busy.report).toEqual({ removed: [], reported: [] });
    expect(await busy.store.registry.get(ID)).toBeDefined();
    release();
    await held;
    const store = engine(storage);
    const report = await repairStores(store);
    expect(report).toEqual({
      removed: [
        'Removed r (https://example.com/r.git) from the list: its stored data was gone (an interrupted delete). Clone it again to get it back.',
      ],
      reported: [],
    });
    expect(await store.registry.list()).toEqual([]);
  });

  it('reports a database it could not delete, and says it deleted nothing', async () => {
    const storage = memoryStorage();
    await seed(storage);
    await engine(storage).registry.remove(ID);
    const refusing: Storage = {
      ...storage,
      deleteDatabase: () => Promise.reject(new Error('another tab keeps it open')),
    };
    const report = await repairStores(engine(refusing));
    expect(report).toEqual({
      removed: [],
      reported: [`Could not delete ${NS}-repo-r: another tab keeps it open`],
    });
    expect(await storage.listDatabases()).toContain(`${NS}-repo-r`);
  });

  it('where databases cannot be listed, says so and keeps every record', async () => {
    const storage = memoryStorage();
    await seed(storage);
    const unlisted: Storage = { ...storage, listDatabases: async () => undefined };
    const { store, report } = await repair(unlisted);
    expect(report.reported).toEqual([
      'This browser cannot list its databases, so leftovers of interrupted clones were not looked for.',
    ]);
    expect(report.removed).toEqual([]);
    expect(await store.registry.get(ID)).toEqual(record());
  });

  it('rebuilds an .idx whose contents are missing from its pack: git’s own index, and fsck accepts it', async () => {
    const storage = memoryStorage();
    await seed(storage);
    await loseContents(storage, packPath('idx'));
    const { store, report, fs, forgotten } = await repair(storage);
    expect(report).toEqual({
      removed: [`r: ${packPath('idx')} was missing its contents; rebuilt it from its pack.`],
      reported: [],
    });
    expect(forgotten).toEqual([ID]);
    expect(
      Buffer.from((await fs.readFile(packPath('idx'))) as Uint8Array).equals(Buffer.from(source.idx)),
    ).toBe(true);
    await fsck(store);
  });

  it('removes the pack when its .idx cannot be rebuilt (the pack is not the one named)', async () => {
    const storage = memoryStorage();
    await seed(storage, {
      change: async (fs) => {
        const broken = source.pack.slice();
        broken[broken.length - 1] ^= 0xff;
        await fs.unlink(packPath('pack'));
        await fs.writeFile(packPath('pack'), broken);
      },
    });
    await loseContents(storage, packPath('idx'));
    const { report, fs } = await repair(storage);
    expect(report.removed).toEqual([
      `r: ${packPath('idx')} was missing its contents; removed that pack (its objects are fetched again when needed).`,
    ]);
    for (const ext of ['idx', 'pack', 'promisor']) expect(await exists(fs, packPath(ext))).toBe(false);
  });

  it('removes the pack when its .idx cannot be rebuilt (a whole pack, under another checksum’s name)', async () => {
    const storage = memoryStorage();
    const other = 'e'.repeat(40);
    await seed(storage, {
      change: async (fs) => {
        await fs.writeFile(packPath('pack', other), source.pack.slice());
        await fs.writeFile(packPath('idx', other), source.idx.slice());
      },
    });
    await loseContents(storage, packPath('idx', other));
    const { store, report, fs } = await repair(storage);
    expect(report.removed).toEqual([
      `r: ${packPath('idx', other)} was missing its contents; removed that pack (its objects are fetched again when needed).`,
    ]);
    for (const ext of ['idx', 'pack']) expect(await exists(fs, packPath(ext, other))).toBe(false);
    await fsck(store);
  });

  it('removes a pack whose .pack contents are missing, with its partners', async () => {
    const storage = memoryStorage();
    await seed(storage);
    await loseContents(storage, packPath('pack'));
    const { report, fs, forgotten } = await repair(storage);
    expect(forgotten).toEqual([ID]);
    expect(report).toEqual({
      removed: [
        `r: ${packPath('pack')} was missing its contents; removed that pack (its objects are fetched again when needed).`,
      ],
      reported: [],
    });
    expect(await fs.readdir(`${GITDIR}/objects/pack`)).toEqual([]);
  });

  it('writes a .promisor marker whose contents are missing again, empty, and keeps its pack', async () => {
    const storage = memoryStorage();
    await seed(storage);
    await loseContents(storage, packPath('promisor'));
    const { store, report, fs } = await repair(storage);
    expect(report).toEqual({
      removed: [`r: ${packPath('promisor')} was missing its contents; wrote it again (empty).`],
      reported: [],
    });
    expect(await fs.readFile(packPath('promisor'), 'utf8')).toBe('');
    expect((await fs.readdir(`${GITDIR}/objects/pack`)).sort()).toHaveLength(3);
    await fsck(store);
  });

  it('drops a .keep marker whose contents are missing from the tree and keeps its pack', async () => {
    const storage = memoryStorage();
    await seed(storage, { change: (fs) => fs.writeFile(packPath('keep'), 'kept by hand\n', 'utf8') });
    await loseContents(storage, packPath('keep'));
    const { store, report, fs } = await repair(storage);
    expect(report).toEqual({
      removed: [],
      reported: [`r: ${packPath('keep')} was missing its contents and was removed from the file tree.`],
    });
    expect((await fs.readdir(`${GITDIR}/objects/pack`)).sort()).toEqual(
      ['idx', 'pack', 'promisor'].map((ext) => packPath(ext).split('/').pop()).sort(),
    );
    await fsck(store);
  });

  it('removes other files whose contents are missing, and says a working-tree file is checked out again', async () => {
    const storage = memoryStorage();
    await seed(storage);
    await loseContents(storage, '/a.txt', `${GITDIR}/description`);
    const { report, fs } = await repair(storage);
    expect(report.removed).toEqual([]);
    expect(report.reported.sort()).toEqual([
      'r: /.git/description was missing its contents and was removed from the file tree.',
      'r: /a.txt was missing its contents and was removed from the file tree (check it out again to restore it).',
    ]);
    expect(await exists(fs, '/a.txt')).toBe(false);
    expect(await exists(fs, `${GITDIR}/description`)).toBe(false);
    // Repaired once: a second look finds nothing.
    expect(await repairStores(engine(storage))).toEqual({ removed: [], reported: [] });
  });

  it('deletes stored contents no file names, and only those', async () => {
    const storage = memoryStorage();
    await seed(storage);
    await storage.files(`${NS}-repo-r`).write([
      [100_001, new Uint8Array([1])],
      [100_002, new Uint8Array([2])],
    ]);
    const { store, report, fs } = await repair(storage);
    expect(report).toEqual({
      removed: ['r: deleted 2 stored file contents that no file names (left by an interrupted write).'],
      reported: [],
    });
    const keys = await storage.files(`${NS}-repo-r`).keys();
    expect(keys).not.toContain(100_001);
    expect(keys).not.toContain(100_002);
    expect(await fs.readFile('/a.txt', 'utf8')).toBe('one\n');
    await fsck(store);
  });

  it.each([
    ['pack', 'a pack without its .idx'],
    ['idx', 'an .idx without its pack'],
    ['promisor', 'a pack marker without its pack'],
    ['keep', 'a pack marker without its pack'],
  ])('removes a lone %s (%s), and leaves other files of the folder', async (ext, what) => {
    const storage = memoryStorage();
    const lone = 'c'.repeat(40);
    await seed(storage, {
      change: async (fs) => {
        await fs.writeFile(packPath(ext, lone), new Uint8Array([1, 2, 3]));
        await fs.writeFile(`${GITDIR}/objects/pack/notes.txt`, 'not a pack', 'utf8');
      },
    });
    const { store, report, fs } = await repair(storage);
    expect(report).toEqual({
      removed: [`r: removed pack-${lone} (${what}, left by an interrupted write).`],
      reported: [],
    });
    expect(await exists(fs, packPath(ext, lone))).toBe(false);
    expect(await exists(fs, `${GITDIR}/objects/pack/notes.txt`)).toBe(true);
    expect(await exists(fs, packPath('idx'))).toBe(true);
    await fsck(store);
  });

  it('moves a record behind HEAD to HEAD: a branch, a packed ref, a detached commit', async () => {
    const storage = memoryStorage();
    await seed(storage, { record: { headOid: source.first } });
    const first = await repair(storage);
    expect(first.report.removed).toEqual(['r: the list now shows main, where HEAD is.']);
    expect(await first.store.registry.get(ID)).toEqual(record());

    const packed = memoryStorage();
    await seed(packed, {
      record: { branch: 'old', headOid: source.first },
      change: async (fs) => {
        await fs.writeFile(`${GITDIR}/HEAD`, 'ref: refs/heads/topic\n', 'utf8');
        await fs.writeFile(
          `${GITDIR}/packed-refs`,
          `# pack-refs with: peeled fully-peeled sorted \n${source.first} refs/heads/other\n${source.head} refs/heads/topic\n`,
          'utf8',
        );
      },
    });
    const second = await repair(packed);
    expect(second.report.removed).toEqual(['r: the list now shows topic, where HEAD is.']);
    expect(await second.store.registry.get(ID)).toMatchObject({ branch: 'topic', headOid: source.head });

    // The same commit, another branch: a checkout of a branch at the commit HEAD was on.
    const branched = memoryStorage();
    await seed(branched, { record: { branch: 'old' } });
    const moved = await repair(branched);
    expect(moved.report.removed).toEqual(['r: the list now shows main, where HEAD is.']);
    expect(await moved.store.registry.get(ID)).toEqual(record());

    const detached = memoryStorage();
    await seed(detached, { change: (fs) => fs.writeFile(`${GITDIR}/HEAD`, `${source.first}\n`, 'utf8') });
    const third = await repair(detached);
    expect(third.report.removed).toEqual([
      `r: the list now shows ${source.first.slice(0, 7)}, where HEAD is.`,
    ]);
    expect(await third.store.registry.get(ID)).toMatchObject({ branch: null, headOid: source.first });
  });

  it('leaves the record where HEAD names nothing it can read', async () => {
    for (const head of [
      'ref: refs/heads/nowhere\n',
      'not an id\n',
      'ref: refs/tags/t\n',
      'ref: refs/heads/bad\n',
    ]) {
      const storage = memoryStorage();
      await seed(storage, {
        record: { branch: 'kept', headOid: source.first },
        change: async (fs) => {
          await fs.writeFile(`${GITDIR}/HEAD`, head, 'utf8');
          await fs.writeFile(`${GITDIR}/packed-refs`, `${source.head} refs/tags/other\n`, 'utf8');
          // A loose ref that holds no id.
          await fs.writeFile(`${GITDIR}/refs/heads/bad`, 'not an id\n', 'utf8');
        },
      });
      const { store, report } = await repair(storage);
      expect(report).toEqual({ removed: [], reported: [] });
      expect(await store.registry.get(ID)).toMatchObject({ branch: 'kept', headOid: source.first });
    }
  });

  it('a ref outside refs/heads is a detached HEAD to the list', async () => {
    const storage = memoryStorage();
    await seed(storage, {
      change: async (fs) => {
        await fs.writeFile(`${GITDIR}/HEAD`, 'ref: refs/remotes/origin/main\n', 'utf8');
        await fs.writeFile(`${GITDIR}/refs/remotes/origin/main`, `${source.first}\n`, 'utf8');
      },
    });
    const { store, report } = await repair(storage);
    expect(report.removed).toEqual([`r: the list now shows ${source.first.slice(0, 7)}, where HEAD is.`]);
    expect(await store.registry.get(ID)).toMatchObject({ branch: null, headOid: source.first });
  });

  it('makes the record’s shallow flag follow the shallow file, except for the widget’s repos', async () => {
    const deepened = memoryStorage();
    await seed(deepened, { record: { shallow: true } });
    const a = await repair(deepened);
    expect(a.report.removed).toEqual(['r: the list now says the whole history is stored.']);
    expect((await a.store.registry.get(ID))?.shallow).toBe(false);

    const shallowed = memoryStorage();
    await seed(shallowed, { change: (fs) => fs.writeFile(`${GITDIR}/shallow`, `${source.head}\n`, 'utf8') });
    const b = await repair(shallowed);
    expect(b.report.removed).toEqual(['r: the list now says only part of the history is stored.']);
    expect((await b.store.registry.get(ID))?.shallow).toBe(true);

    const blank = memoryStorage();
    await seed(blank, {
      record: { shallow: true },
      change: (fs) => fs.writeFile(`${GITDIR}/shallow`, '\n', 'utf8'),
    });
    expect((await repair(blank)).report.removed).toEqual([
      'r: the list now says the whole history is stored.',
    ]);

    const minimal = memoryStorage();
    await seed(minimal, { record: { shallow: true, minimal: true } });
    const c = await repair(minimal);
    expect(c.report).toEqual({ removed: [], reported: [] });
    expect((await c.store.registry.get(ID))?.shallow).toBe(true);
  });

  it('the repair is stored: a new engine after it sees the repaired tree, and the pack set is read again', async () => {
    const storage = memoryStorage();
    const lone = 'd'.repeat(40);
    await seed(storage, { change: (fs) => fs.writeFile(packPath('pack', lone), new Uint8Array([1])) });
    const store = engine(storage);
    // The pack set read before the repair names the lone pack's folder as it was.
    await store.packs.for(ID);
    const forgotten: string[] = [];
    const forget = store.forgetRepo.bind(store);
    store.forgetRepo = (id) => {
      forgotten.push(id);
      forget(id);
    };
    await repairStores(store);
    expect(forgotten).toEqual([ID]);
    await store.close();
    const after = engine(storage).repoFs.open(ID).promises;
    expect(await exists(after, packPath('pack', lone))).toBe(false);
  });

  it('a repo it cannot check is reported, and the others are still repaired', async () => {
    const storage = memoryStorage();
    await seed(storage, { record: { shallow: true } });
    await engine(storage).registry.put(record({ id: 'broken', name: 'broken', lastFetchedAt: 2 }));
    await storage.files(`${NS}-repo-broken`).write([[1, new Uint8Array([1])]]);
    // A disk error reading the broken repo's records.
    const failing: Storage = {
      ...storage,
      files: (name) => {
        const records = storage.files(name);
        if (name !== `${NS}-repo-broken`) return records;
        return Object.assign(Object.create(records), {
          keys: () => Promise.reject(new Error('the disk failed')),
        });
      },
    };
    const report = await repairStores(engine(failing));
    expect(report.reported).toEqual(['Could not check broken: the disk failed']);
    expect(report.removed).toEqual(['r: the list now says the whole history is stored.']);
  });
});
