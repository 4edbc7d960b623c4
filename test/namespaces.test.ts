// Two engines in one realm, with different namespaces, share nothing (issue 20): each keeps its repos in
// databases under its own prefix, lists only its own, locks only its own, and what one does to a repo
// (clone, read, delete) leaves the other's databases as they were, even for a repo of the same id.

import { afterAll, describe, expect, inject, it } from 'vitest';
import { maintenanceIdle } from '../workers/ops/maintenance/packMaintenance.ts';
import { indexedDbStorage } from '../workers/storage/indexedDb.ts';
import { testEngine } from './support/engine.ts';
import { FakeLockManager } from './support/fakeLocks.ts';
import { settledGitDir, snapshotGitDir } from './support/repoChecks.ts';

const url = `${inject('gitServerUrl')}/basic.git`;
// One IndexedDB and one lock space for both, as two engines of one origin have in a browser.
const locks = new FakeLockManager();
const a = testEngine({ namespace: 'ns-a', storage: indexedDbStorage({ locks }) });
const b = testEngine({ namespace: 'ns-b', storage: indexedDbStorage({ locks }) });

const databases = async () => (await indexedDB.databases()).map((d) => d.name ?? '').sort();

afterAll(async () => {
  for (const { engine } of [a, b]) {
    for (const r of await engine.listRepos({ includeMinimal: true })) await engine.repo(r.id).delete();
    await engine.close();
  }
});

describe('two engines with different namespaces', () => {
  it('clone the same repo at once into their own databases, each listing only its own', async () => {
    const before = await databases();
    const [cloneA, cloneB] = await Promise.all([a.engine.clone({ url }), b.engine.clone({ url })]);
    const made = (await databases()).filter((n) => !before.includes(n));
    // Each repo's database, lightning-fs's `_lock` beside it, and each namespace's registry.
    const repoDb = (ns: string, id: string) => [`${ns}-repo-${id}`, `${ns}-repo-${id}_lock`];
    expect(made.sort()).toEqual(
      [
        ...repoDb('ns-a', cloneA.repoId),
        'ns-a-registry',
        ...repoDb('ns-b', cloneB.repoId),
        'ns-b-registry',
      ].sort(),
    );
    expect((await a.engine.listRepos()).map((r) => r.id)).toEqual([cloneA.repoId]);
    expect((await b.engine.listRepos()).map((r) => r.id)).toEqual([cloneB.repoId]);
  });

  it("one's clone, read and delete leave the other's repo as it was", async () => {
    const [{ id: idA }] = await a.engine.listRepos();
    const [{ id: idB }] = await b.engine.listRepos();
    const readme = await b.engine.repo(idB).readFile({ ref: 'HEAD', path: 'README.md' });
    const snapshotB = await settledGitDir(b.ctx, idB);

    await a.engine.repo(idA).readFile({ ref: 'HEAD', path: 'README.md' });
    const { repoId: second } = await a.engine.clone({ url });
    await a.engine.repo(second).delete();
    await a.engine.repo(idA).delete();

    expect(await a.engine.listRepos()).toEqual([]);
    expect((await b.engine.listRepos()).map((r) => r.id)).toEqual([idB]);
    expect(await snapshotGitDir(b.ctx, idB)).toEqual(snapshotB);
    expect(await b.engine.repo(idB).readFile({ ref: 'HEAD', path: 'README.md' })).toEqual(readme);
    expect((await databases()).filter((n) => n.startsWith('ns-a-repo-'))).toEqual([]);
  });

  it('a repo of the same id in both (a minimal read of one URL) has two databases and two locks', async () => {
    const [readA, readB] = await Promise.all([
      a.engine.readFileMinimal({ url, path: 'README.md' }),
      b.engine.readFileMinimal({ url, path: 'README.md' }),
    ]);
    expect(readA.repoId).toBe(readB.repoId);
    const id = readA.repoId;
    expect(await databases()).toEqual(expect.arrayContaining([`ns-a-repo-${id}`, `ns-b-repo-${id}`]));

    // A's own background steps end first: they would write beside the snapshot compared below.
    await maintenanceIdle(a.ctx, id);
    // While A holds its write lock on the id, B writes its own repo of that id.
    let release!: () => void;
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    const holding = a.ctx.store.locks.withRepoLock(id, 'a test holding the lock', () => held);
    try {
      const snapshotA = await snapshotGitDir(a.ctx, id);
      // Bounded: were the lock names shared, the delete would wait for A's lock and be stopped.
      await b.engine.repo(id).delete({}, { signal: AbortSignal.timeout(5000) });
      expect(await snapshotGitDir(a.ctx, id)).toEqual(snapshotA);
    } finally {
      release();
      await holding;
    }
    expect((await a.engine.listRepos({ includeMinimal: true })).map((r) => r.id)).toContain(id);
  });
});
