import { describe, expect, it } from 'vitest';
import { memoryStorage } from '../storage/memory.ts';
import { Registry, type RepoRecord } from './registry.ts';
import { StorageNames } from './storage.ts';
import { repoRecord } from './testing/repoRecord.ts';

const record = (id: string, over: Partial<RepoRecord> = {}) => repoRecord(id, { sizeBytes: 100, ...over });

const newRegistry = (storage = memoryStorage()) => new Registry(storage, new StorageNames('regtest'));

describe('Registry', () => {
  it('lists the records, the one fetched last first; put replaces, remove deletes', async () => {
    const storage = memoryStorage();
    const registry = newRegistry(storage);
    await registry.put(record('old', { lastFetchedAt: 10 }));
    await registry.put(record('new', { lastFetchedAt: 30 }));
    await registry.put(record('mid', { lastFetchedAt: 20 }));
    expect((await registry.list()).map((r) => r.id)).toEqual(['new', 'mid', 'old']);
    await registry.put(record('old', { lastFetchedAt: 40 }));
    expect((await registry.list()).map((r) => r.id)).toEqual(['old', 'new', 'mid']);
    await registry.remove('new');
    expect(await registry.get('new')).toBeUndefined();
    expect((await registry.list()).map((r) => r.id)).toEqual(['old', 'mid']);
    // Kept in the namespace's registry database.
    expect(await storage.listDatabases()).toEqual([]);
    expect(await storage.keyValue<RepoRecord>('regtest-registry', 'repos').get('mid')).toEqual(
      record('mid', { lastFetchedAt: 20 }),
    );
  });

  it('list skips a slot that holds no record', async () => {
    const storage = memoryStorage();
    const registry = newRegistry(storage);
    await registry.put(record('r'));
    await storage.keyValue<RepoRecord | null>('regtest-registry', 'repos').set('hole', null);
    expect((await registry.list()).map((r) => r.id)).toEqual(['r']);
  });

  it('update changes a record, and never revives a removed one', async () => {
    const registry = newRegistry();
    await registry.put(record('r'));
    await registry.update('r', (r) => ({ ...r, branch: 'dev' }));
    expect((await registry.get('r'))?.branch).toBe('dev');
    await registry.remove('r');
    await registry.update('r', (r) => ({ ...r, branch: 'x' }));
    expect(await registry.get('r')).toBeUndefined();
  });

  it('addFetched adds a fetch’s bytes and stored size, and stamps its time', async () => {
    const registry = newRegistry();
    await registry.put(record('r', { sizeBytes: 100, lastFetchedAt: 1 }));
    const before = Date.now();
    await registry.addFetched('r', 50, 30);
    await registry.addFetched('r', 5, 3);
    const r = await registry.get('r');
    expect(r).toMatchObject({ bytesFetched: 55, sizeBytes: 133 });
    expect(r?.lastFetchedAt).toBeGreaterThanOrEqual(before);
    await registry.put(record('s', { bytesFetched: 10 }));
    await registry.addFetched('s', 1, 0);
    expect((await registry.get('s'))?.bytesFetched).toBe(11);
    await registry.addFetched('gone', 1, 1);
    expect(await registry.get('gone')).toBeUndefined();
  });
});
