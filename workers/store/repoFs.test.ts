import { describe, expect, it } from 'vitest';
import { deleteRepoFs, openRepoFs, repoDbName } from './repoFs.ts';

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
  const fs = openRepoFs(repoId);
  await fs.promises.writeFile('/a', 'x');
  await fs.promises.flush();
}

describe('deleteRepoFs', () => {
  it('waits for another connection to close instead of taking "blocked" as done', async () => {
    const repoId = 'delete-waits';
    await storeOneFile(repoId);
    const other = await openStubborn(repoDbName(repoId));
    let settled = false;
    const deleting = deleteRepoFs(repoId, { blockedTimeoutMs: 5_000 }).finally(() => {
      settled = true;
    });
    await new Promise((r) => setTimeout(r, 200));
    expect(settled).toBe(false);
    expect(await databaseNames()).toContain(repoDbName(repoId));
    other.close();
    await deleting;
    expect(await databaseNames()).not.toContain(repoDbName(repoId));
  });

  it('gives STORAGE_BLOCKED when the other connection never closes', async () => {
    const repoId = 'delete-blocked';
    await storeOneFile(repoId);
    const other = await openStubborn(repoDbName(repoId));
    const err = await deleteRepoFs(repoId, { blockedTimeoutMs: 100 }).catch((e) => e);
    expect(err).toMatchObject({ name: 'StoreError', code: 'STORAGE_BLOCKED' });
    expect(err.message).toContain('Another tab');
    other.close();
  });
});
