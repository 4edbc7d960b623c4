// A worker terminated at each named point of a clone, a checkout and a pack merge (crashPoints.ts), then
// startup repair as a new worker runs it: the store is consistent, and the report says what was removed.

import { join } from 'node:path';
import { beforeAll, describe, expect, inject, it } from 'vitest';
import type { EngineContext } from '../workers/engine/engine.ts';
import { maybeRepack } from '../workers/ops/maintenance/packMaintenance.ts';
import { readFile } from '../workers/ops/read/readFile.ts';
import { repairStores } from '../workers/store/repair.ts';
import { GITDIR } from '../workers/store/repoFs.ts';
import { checkedExport } from './support/cloneOracle.ts';
import { crashAt, pauseAt, terminateWorker } from './support/crash.ts';
import { testEngine } from './support/engine.ts';
import { git as gitCli } from './support/git.ts';
import { packFiles } from './support/repoChecks.ts';
import { useTmpDir } from './support/tmpDir.ts';
import { gitCheckoutOf, readLightningWorktree } from './support/worktree.ts';

const { engine, ctx } = testEngine();

const serverUrl = inject('gitServerUrl');
const fixturesDir = inject('fixturesDir');
const tmp = useTmpDir('crash');
let exports = 0;

async function databaseNames(): Promise<string[]> {
  return (await indexedDB.databases()).map((d) => d.name ?? '').sort();
}

async function rev(repo: string, spec: string): Promise<string> {
  return (await gitCli(['rev-parse', spec], { cwd: join(fixturesDir, repo) })).trim();
}

/** Every pack has its .pack and its .idx. */
async function expectWholePacks(repoId: string, of: EngineContext = ctx): Promise<void> {
  const files = await packFiles(of, repoId);
  const names = new Set(files.map((f) => f.replace(/\.(pack|idx|promisor)$/, '')));
  for (const name of names) {
    expect(files).toContain(`${name}.pack`);
    expect(files).toContain(`${name}.idx`);
  }
}

/** Stops `checkout` at checkout:files-written and terminates the worker; what IndexedDB held then. */
async function terminatedAtFilesWritten(
  repoId: string,
  checkout: () => Promise<unknown>,
): Promise<Set<number>> {
  const pause = pauseAt(ctx, 'checkout:files-written');
  const running = checkout();
  running.catch(() => undefined);
  await pause.paused;
  const stored = await ctx.store.repoFs.backend(repoId).storedInodes();
  ctx.store.crash.setHook(undefined);
  await terminateWorker(ctx);
  return stored;
}

describe('a clone', () => {
  it('terminated between its files and its record: repair deletes the database and says so', async () => {
    const before = new Set(await databaseNames());
    await crashAt(ctx, 'clone:files-committed', () => engine.clone({ url: `${serverUrl}/basic.git` }));
    const left = (await databaseNames()).filter((n) => !before.has(n));
    const main = left.find((n) => !n.endsWith('_lock'));
    expect(main).toMatch(/^blobless-repo-/);
    const repoId = main!.slice('blobless-repo-'.length);
    expect(await ctx.store.registry.get(repoId)).toBeUndefined();

    const report = await repairStores(ctx.store);
    expect(report.removed).toContain(
      `Deleted ${ctx.store.repoFs.dbName(repoId)}: an interrupted clone that no repository record names.`,
    );
    expect((await databaseNames()).filter((n) => n.startsWith(ctx.store.repoFs.dbName(repoId)))).toEqual([]);
    // A second repair finds nothing more to do about it.
    expect((await repairStores(ctx.store)).removed.filter((r) => r.includes(repoId))).toEqual([]);
  });

  it('still running (its lock held) is left alone by repair, and completes', async () => {
    const before = new Set(await databaseNames());
    const pause = pauseAt(ctx, 'clone:files-committed');
    const cloning = engine.clone({ url: `${serverUrl}/basic.git` });
    await pause.paused;
    const main = (await databaseNames()).find((n) => !before.has(n) && !n.endsWith('_lock'))!;
    const report = await repairStores(ctx.store);
    expect([...report.removed, ...report.reported].filter((r) => r.includes(main))).toEqual([]);
    expect(await databaseNames()).toContain(main);
    pause.resume();
    const { repoId } = await cloning;
    expect(ctx.store.repoFs.dbName(repoId)).toBe(main);
    expect(await ctx.store.registry.get(repoId)).toBeDefined();
    await checkedExport(ctx, repoId, tmp(), `export-${exports++}`);
  });
});

describe('a checkout of features.git', () => {
  const repo = 'features.git';
  let repoId: string;
  let main: string;
  let dev: string;

  beforeAll(async () => {
    repoId = (await engine.clone({ url: `${serverUrl}/${repo}` })).repoId;
    await engine.repo(repoId).checkout({ ref: 'main' });
    main = await rev(repo, 'main');
    dev = await rev(repo, 'dev');
  });

  async function expectWorktreeOf(commit: string): Promise<void> {
    const ours = await readLightningWorktree(ctx.store.repoFs.open(repoId));
    expect(ours).toEqual(await gitCheckoutOf(join(fixturesDir, repo), commit, tmp()));
  }

  it('terminated with its files written but not committed: nothing of it is stored', async () => {
    await crashAt(ctx, 'checkout:files-written', () => engine.repo(repoId).checkout({ ref: 'dev' }));
    const report = await repairStores(ctx.store);
    expect(report.removed.filter((r) => r.startsWith('features'))).toEqual([]);
    const head = await ctx.store.repoFs.open(repoId).promises.readFile(`${GITDIR}/HEAD`, 'utf8');
    expect(head).toBe('ref: refs/heads/main\n');
    await expectWorktreeOf(main);
    expect(await ctx.store.registry.get(repoId)).toMatchObject({ branch: 'main', headOid: main });
    await expectWholePacks(repoId);
    await checkedExport(ctx, repoId, tmp(), `export-${exports++}`);
  });

  it('terminated with new files stored ahead of its commit: repair deletes the contents no file names', async () => {
    await engine.repo(repoId).checkout({ ref: 'dev' });
    // main adds .gitmodules and notes/README.txt to dev: new files, staged as written (STAGE_BYTES 1).
    ctx.store.repoFs.backend(repoId).stageBytes = 1;
    const stored = await terminatedAtFilesWritten(repoId, () =>
      engine.repo(repoId).checkout({ ref: 'main' }),
    );

    const report = await repairStores(ctx.store);
    const mine = report.removed.filter((r) => r.startsWith('features'));
    expect(mine).toHaveLength(1);
    expect(mine[0]).toMatch(/^features: deleted [1-9]\d* stored file contents that no file names/);
    // What is stored now is exactly what the tree names: nothing of the dead checkout.
    const after = await ctx.store.repoFs.backend(repoId).storedInodes();
    expect(after.size).toBeLessThan(stored.size);
    await expectWorktreeOf(dev);
    expect(await ctx.store.registry.get(repoId)).toMatchObject({ branch: 'dev', headOid: dev });
    await expectWholePacks(repoId);
    await checkedExport(ctx, repoId, tmp(), `export-${exports++}`);
    expect((await repairStores(ctx.store)).removed.filter((r) => r.startsWith('features'))).toEqual([]);
    await engine.repo(repoId).checkout({ ref: 'main' });
  });

  it('terminated after its commit, before its record: repair brings the record to HEAD', async () => {
    await crashAt(ctx, 'checkout:files-committed', () => engine.repo(repoId).checkout({ ref: 'dev' }));
    expect(await ctx.store.registry.get(repoId)).toMatchObject({ branch: 'main' });
    const report = await repairStores(ctx.store);
    expect(report.removed).toContain('features: the list now shows dev, where HEAD is.');
    expect(await ctx.store.registry.get(repoId)).toMatchObject({ branch: 'dev', headOid: dev });
    await expectWorktreeOf(dev);
  });

  it('terminated after its blobs were stored: they stay, and the next checkout needs no request for them', async () => {
    await engine.repo(repoId).checkout({ ref: 'main' });
    await crashAt(ctx, 'checkout:blobs-stored', () => engine.repo(repoId).checkout({ ref: 'feature/x' }));
    await repairStores(ctx.store);
    await expectWholePacks(repoId);
    await expectWorktreeOf(main);
    const result = await engine.repo(repoId).checkout({ ref: 'feature/x' });
    expect(result.blobsFetched).toBe(0);
    await expectWorktreeOf(await rev(repo, 'feature/x'));
    await checkedExport(ctx, repoId, tmp(), `export-${exports++}`);
  });
});

describe('a first checkout, into no working tree (files stored as their blobs arrive)', () => {
  it('terminated before its commit: repair deletes the files stored ahead, the blobs stay, the next one fetches none', async () => {
    const repo = 'features.git';
    const { repoId } = await engine.clone({ url: `${serverUrl}/${repo}` });
    // Every file in a transaction of its own, ahead of the commit: the last ones would otherwise go with
    // the commit the crash prevents, and a small tree's all of them.
    ctx.store.repoFs.backend(repoId).stageBytes = 1;
    const stored = await terminatedAtFilesWritten(repoId, () =>
      engine.repo(repoId).checkout({ ref: 'main' }),
    );

    const name = (await ctx.store.registry.get(repoId))!.name;
    const report = await repairStores(ctx.store);
    const mine = report.removed.filter((r) => r.startsWith(`${name}:`));
    expect(mine).toHaveLength(1);
    expect(mine[0]).toMatch(/: deleted [1-9]\d* stored file contents that no file names/);
    expect((await ctx.store.repoFs.backend(repoId).storedInodes()).size).toBeLessThan(stored.size);
    // As the clone left it: no working tree, no index.
    expect(await readLightningWorktree(ctx.store.repoFs.open(repoId))).toEqual([]);
    expect(await ctx.store.repoFs.open(repoId).promises.readdir(GITDIR)).not.toContain('index');
    await expectWholePacks(repoId);

    const result = await engine.repo(repoId).checkout({ ref: 'main' });
    expect(result.blobsFetched).toBe(0);
    expect(await readLightningWorktree(ctx.store.repoFs.open(repoId))).toEqual(
      await gitCheckoutOf(join(fixturesDir, repo), await rev(repo, 'main'), tmp()),
    );
    await checkedExport(ctx, repoId, tmp(), `export-${exports++}`);
  });
});

describe('a pack merge', () => {
  const paths = ['README.md', 'src/new-name.js', 'scripts/build.sh', 'notes/README.txt'];
  // An engine of its own: in the file's, the operations stopped dead above still count as calls in flight
  // (ForegroundActivity), so each background step of this clone waited FOREGROUND_MAX_WAIT_MS (10 s) before
  // the merge could start: 10 s per case in CI, against 2-4 s alone. Its own namespace, so that its repair
  // looks at its own repos only, as a worker of a new page would.
  const merging = testEngine({ namespace: 'crash-merge' });

  it.each(['repack:merged-pack-committed', 'repack:old-packs-removing'] as const)(
    'terminated at %s: every pack whole, every blob readable, fsck passes',
    async (point) => {
      const { engine, ctx } = merging;
      const { repoId } = await engine.clone({ url: `${serverUrl}/features.git` });
      const oids: string[] = [];
      for (const path of paths) oids.push((await readFile(ctx, repoId, 'HEAD', path)).oid);
      await crashAt(ctx, point, () => maybeRepack(ctx, repoId, { threshold: 2 }));
      const report = await repairStores(ctx.store);
      for (const line of report.removed.filter((r) => r.startsWith('features'))) {
        // Only leftovers of the interrupted merge: an old pack whose .idx went first.
        expect(line).toMatch(/removed pack-[0-9a-f]{40} \(a pack without its \.idx/);
      }
      await expectWholePacks(repoId, ctx);
      expect((await ctx.store.packs.for(repoId)).missing(oids)).toEqual([]);
      await checkedExport(ctx, repoId, tmp(), `export-${exports++}`);
      for (const path of paths) await readFile(ctx, repoId, 'HEAD', path);
    },
  );
});

describe('damage repair finds and mends', () => {
  it('a pack without its .idx, an .idx whose contents are gone, a record without data, a stray _lock', async () => {
    const { repoId } = await engine.clone({ url: `${serverUrl}/basic.git` });
    const fs = ctx.store.repoFs.open(repoId).promises;
    const [packName] = (await packFiles(ctx, repoId)).filter((f) => f.endsWith('.idx'));
    const idxPath = `${GITDIR}/objects/pack/${packName}`;
    const idxBytes = (await fs.readFile(idxPath)) as Uint8Array;
    const orphan = 'f'.repeat(40);
    await fs.writeFile(`${GITDIR}/objects/pack/pack-${orphan}.pack`, new Uint8Array([1, 2, 3]));
    await fs.flush();
    // The .idx's contents vanish from IndexedDB while the tree still names it.
    const ino = (await fs.lstat(idxPath)).ino as number;
    await terminateWorker(ctx);
    await deleteKey(ctx.store.repoFs.dbName(repoId), ino);
    await ctx.store.registry.put({
      ...(await ctx.store.registry.get(repoId))!,
      id: 'gone',
      name: 'gone',
      url: 'http://example.invalid/gone',
    });
    await createDatabase(`${ctx.store.repoFs.dbName('stray')}_lock`);

    const report = await repairStores(ctx.store);
    expect(report.removed).toEqual(
      expect.arrayContaining([
        `basic: ${idxPath} was missing its contents; rebuilt it from its pack.`,
        `basic: removed pack-${orphan} (a pack without its .idx, left by an interrupted write).`,
        'Removed gone (http://example.invalid/gone) from the list: its stored data was gone (an interrupted delete). Clone it again to get it back.',
        `Deleted ${ctx.store.repoFs.dbName('stray')}_lock, left behind by a repository that is gone.`,
      ]),
    );
    expect(await ctx.store.registry.get('gone')).toBeUndefined();
    expect(await databaseNames()).not.toContain(`${ctx.store.repoFs.dbName('stray')}_lock`);
    // Rebuilt byte for byte as it was (our .idx is git index-pack's).
    expect(
      Buffer.from((await ctx.store.repoFs.open(repoId).promises.readFile(idxPath)) as Uint8Array),
    ).toEqual(Buffer.from(idxBytes));
    await expectWholePacks(repoId);
    await checkedExport(ctx, repoId, tmp(), `export-${exports++}`);
  });
});

function deleteKey(dbName: string, key: number): Promise<void> {
  return new Promise((resolve, reject) => {
    const req = indexedDB.open(dbName);
    req.onsuccess = () => {
      const db = req.result;
      const tx = db.transaction(`${dbName}_files`, 'readwrite');
      tx.objectStore(`${dbName}_files`).delete(key);
      tx.oncomplete = () => {
        db.close();
        resolve();
      };
      tx.onerror = () => reject(tx.error);
    };
    req.onerror = () => reject(req.error);
  });
}

function createDatabase(name: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const req = indexedDB.open(name);
    req.onupgradeneeded = () => req.result.createObjectStore(name);
    req.onsuccess = () => {
      req.result.close();
      resolve();
    };
    req.onerror = () => reject(req.error);
  });
}
