import { afterEach, describe, expect, it } from 'vitest';
import { memoryStorage } from '../storage/memory.ts';
import { Store } from './store.ts';

const stores: Store[] = [];
afterEach(async () => {
  for (const s of stores.splice(0)) await s.close();
});

describe('Store', () => {
  it('forgetRepo drops the cached pack set: the next use reads the disk again', async () => {
    const store = new Store(memoryStorage(), 'storetest');
    stores.push(store);
    const first = store.packs.for('r');
    expect(store.packs.for('r')).toBe(first);
    await first;
    store.forgetRepo('r');
    expect(store.packs.for('r')).not.toBe(first);
  });
});
