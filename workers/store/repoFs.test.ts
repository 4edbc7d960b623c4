import { describe, expect, it } from 'vitest';
import { indexedDbStorage } from '../storage/indexedDb.ts';
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
