// One writer per repository: the lock's semantics (in-process stand-in for navigator.locks), how
// operations nest under it without deadlock, and a tab that never writes on a stale tree.

import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { describe, expect, inject, it } from 'vitest';
import { openRepo } from '../workers/ops/common/repoAccess.ts';
import { maintenanceIdle, scheduleRepack } from '../workers/ops/maintenance/packMaintenance.ts';
import { readFile } from '../workers/ops/read/readFile.ts';
import { ensureBlobs } from '../workers/ops/sync/lazyBlobs.ts';
import { PackIngester } from '../workers/pack/packIngester.ts';
import { writePack } from '../workers/store/gitDir.ts';
import { createBatchedFs, type PromiseFs } from '../workers/store/repoFs.ts';
import { InProcessLocks, type LockWait } from '../workers/store/repoLock.ts';
import { testEngine } from './support/engine.ts';
import { git as gitCli } from './support/git.ts';
import { failure, packFiles } from './support/repoChecks.ts';

const { engine, ctx } = testEngine();

const serverUrl = inject('gitServerUrl');
const fixturesDir = inject('fixturesDir');

function deferred(): { promise: Promise<void>; resolve: () => void } {
  let resolve!: () => void;
  const promise = new Promise<void>((r) => {
    resolve = r;
  });
  return { promise, resolve };
}

describe('InProcessLocks, as navigator.locks in exclusive mode', () => {
  it('grants one holder at a time, in request order; ifAvailable gets null; a signal gives up the wait', async () => {
    const locks = new InProcessLocks();
    const order: string[] = [];
    const first = deferred();
    const a = locks.request('x', {}, async () => {
      order.push('a');
      await first.promise;
    });
    const b = locks.request('x', {}, async () => {
      order.push('b');
    });
    const controller = new AbortController();
    const c = locks.request('x', { signal: controller.signal }, async () => order.push('c'));
    expect(await locks.request('x', { ifAvailable: true }, async (lock) => lock)).toBeNull();
    expect(await locks.request('y', { ifAvailable: true }, async (lock) => lock)).not.toBeNull();
    expect((await locks.query()).held).toEqual([{ name: 'x' }]);
    controller.abort();
    await expect(c).rejects.toMatchObject({ name: 'AbortError' });
    first.resolve();
    await Promise.all([a, b]);
    expect(order).toEqual(['a', 'b']);
    expect((await locks.query()).held).toEqual([]);
  });
});

describe('the repo lock', () => {
  it('makes a second writer wait, tells it what runs, and lets it give up', async () => {
    const id = `lock-test-${Math.random()}`;
    const release = deferred();
    const holding = ctx.store.locks.withRepoLock(id, 'checkout of main', () => release.promise);
    const waits: LockWait[] = [];
    const controller = new AbortController();
    const waiting = ctx.store.locks.withRepoLock(id, 'delete', async () => 'ran', {
      signal: controller.signal,
      onWait: (w) => waits.push(w),
    });
    await new Promise((r) => setTimeout(r, 0));
    expect(waits[0]).toEqual({ what: 'checkout of main' });
    controller.abort();
    expect(await failure(waiting)).toMatchObject({ name: 'StoreError', code: 'ABORTED' });
    // A write on behalf of the holder joins it instead of waiting (a checkout's own blob fetch).
    expect(await ctx.store.locks.underRepoLock(id, 'fetching blobs', async () => 'joined')).toBe('joined');
    // Background work never waits for it.
    expect(await ctx.store.locks.tryRepoLock(id, 'merging packs', async () => 'merged')).toBe('busy');
    release.resolve();
    await holding;
    expect(await ctx.store.locks.withRepoLock(id, 'delete', async () => 'ran')).toBe('ran');
  });

  it('a checkout under the lock fetches blobs, and the merge they set off runs after it, not inside', async () => {
    const { repoId } = await engine.clone({ url: `${serverUrl}/small-sized.git` });
    // 17 small promisor packs: the next fetch sets off a merge.
    const oids = (
      await gitCli(['ls-tree', '-r', '--format=%(objectname)', 'HEAD'], {
        cwd: `${fixturesDir}/small-sized.git`,
      })
    )
      .trim()
      .split('\n');
    await ctx.store.locks.withRepoLock(repoId, 'test', async () => {
      for (const oid of oids.slice(0, 17)) await ensureBlobs(ctx, repoId, [oid]);
    });
    expect((await ctx.store.packs.for(repoId)).packs.length).toBe(18);
    const result = await engine.repo(repoId).checkout({ ref: 'HEAD' });
    expect(result.blobsFetched).toBe(oids.length - 17);
    await maintenanceIdle(ctx, repoId);
    expect((await ctx.store.packs.for(repoId)).packs.length).toBeLessThan(8);
    expect((await ctx.store.packs.for(repoId)).missing(oids)).toEqual([]);
  });
});

describe('two tabs on one repo', () => {
  /** "Another tab": its own lightning-fs on the repo's database, writing under the repo's lock. */
  async function otherTabWrites(repoId: string, write: (fs: PromiseFs) => Promise<void>): Promise<void> {
    await ctx.store.locks.withRepoLock(repoId, 'the other tab', async () => {
      const other = createBatchedFs(ctx.store.storage, ctx.store.repoFs.dbName(repoId));
      await write(other.fs.promises);
      await other.fs.promises.flush();
      await (other.fs.promises as unknown as { _deactivate(): Promise<void> })._deactivate();
    });
  }

  async function storedTree(repoId: string, dir: string): Promise<string[]> {
    const fresh = createBatchedFs(ctx.store.storage, ctx.store.repoFs.dbName(repoId));
    const names = await fresh.fs.promises.readdir(dir);
    await (fresh.fs.promises as unknown as { _deactivate(): Promise<void> })._deactivate();
    return names.sort();
  }

  it("an operation held past lightning-fs's idle timeout does not erase what the other tab writes", async () => {
    const { repoId } = await engine.clone({ url: `${serverUrl}/basic.git` });
    // The operation holds its batch longer than lightning-fs's 500 ms idle timeout, which lets go of
    // lightning-fs's own activation lock: without the repo's lock the other tab would write then, and
    // this operation's commit (of the tree it held) would drop the other tab's file.
    const operation = ctx.store.locks.withRepoLock(repoId, 'checkout of main', () =>
      ctx.store.repoFs.writeAllOrNothing(repoId, async () => {
        const fs = ctx.store.repoFs.open(repoId).promises;
        await fs.writeFile('/first.txt', 'first\n', 'utf8');
        await new Promise((r) => setTimeout(r, 800));
        await fs.writeFile('/second.txt', 'second\n', 'utf8');
      }),
    );
    await new Promise((r) => setTimeout(r, 50));
    const other = otherTabWrites(repoId, (fs) => fs.writeFile('/other.txt', 'other\n', 'utf8'));
    await Promise.all([operation, other]);
    expect(await storedTree(repoId, '/')).toEqual(
      expect.arrayContaining(['first.txt', 'other.txt', 'second.txt']),
    );
  });

  it('a pack the other tab stored is seen here at once: no fetch for what it holds', async () => {
    const { repoId } = await engine.clone({ url: `${serverUrl}/features.git` });
    await readFile(ctx, repoId, 'HEAD', 'README.md');
    const bare = join(fixturesDir, 'features.git');
    const oid = (await gitCli(['rev-parse', 'HEAD:src/new-name.js'], { cwd: bare })).trim();
    expect((await ctx.store.packs.for(repoId)).has(oid)).toBe(false);
    const packBytes = execFileSync('git', ['pack-objects', '--stdout'], { cwd: bare, input: `${oid}\n` });
    const ingester = await PackIngester.create();
    ingester.push(new Uint8Array(packBytes));
    const pack = await ingester.finish();
    await otherTabWrites(repoId, (fs) =>
      writePack(fs, { checksum: pack.checksum, pack: pack.pack, idx: pack.idx, promisor: '' }),
    );
    // This tab's next read looks at the stored generation and reads the packs again.
    await openRepo(ctx, repoId);
    expect((await ctx.store.packs.for(repoId)).has(oid)).toBe(true);
    const file = await readFile(ctx, repoId, 'HEAD', 'src/new-name.js');
    expect(file.oid).toBe(oid);
    expect((await packFiles(ctx, repoId)).filter((f) => f.startsWith(`pack-${pack.checksum}`))).toHaveLength(
      3,
    );
  });

  it('scheduleRepack defers while another holds the lock, then merges', async () => {
    const { repoId } = await engine.clone({ url: `${serverUrl}/features.git` });
    for (const path of ['README.md', 'src/new-name.js', 'scripts/build.sh'])
      await readFile(ctx, repoId, 'HEAD', path);
    const release = deferred();
    const holding = ctx.store.locks.withRepoLock(repoId, 'the other tab', () => release.promise);
    scheduleRepack(ctx, repoId);
    const idle = maintenanceIdle(ctx, repoId);
    let done = false;
    void idle.then(() => {
      done = true;
    });
    await new Promise((r) => setTimeout(r, 50));
    expect(done).toBe(false);
    release.resolve();
    await holding;
    await idle;
  });
});
