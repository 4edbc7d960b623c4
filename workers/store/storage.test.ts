import { describe, expect, it } from 'vitest';
import { StorageNames } from './storage.ts';

describe('StorageNames', () => {
  it('names every database, lock and channel under the namespace', () => {
    const names = new StorageNames('app.v2_x-1');
    expect(names.repoDatabase('r')).toBe('app.v2_x-1-repo-r');
    expect(names.registryDatabase).toBe('app.v2_x-1-registry');
    expect(names.writeLock('r')).toBe('app.v2_x-1-repo-r:write');
    expect(names.fillLock('r')).toBe('app.v2_x-1-repo-r:fill');
    expect(names.eventsChannel).toBe('app.v2_x-1-repos');
  });

  it('refuses a namespace with anything but letters, digits, ".", "_" and "-"', () => {
    for (const bad of ['', 'a b', 'a/b', 'ä', 'a\n', '\na']) {
      expect(() => new StorageNames(bad)).toThrow(
        `The namespace ${JSON.stringify(bad)} may hold only letters, digits, ".", "_" and "-".`,
      );
    }
  });

  it('tells a repo database and its lightning-fs lock companion from other databases', () => {
    const names = new StorageNames('ns');
    expect(names.parseRepoDatabase('ns-repo-abc')).toEqual({ repoId: 'abc', companion: false });
    expect(names.parseRepoDatabase('ns-repo-abc_lock')).toEqual({ repoId: 'abc', companion: true });
    expect(names.parseRepoDatabase(names.repoDatabase('x_lockless'))).toEqual({
      repoId: 'x_lockless',
      companion: false,
    });
    for (const other of ['ns-registry', 'other-repo-abc', 'xns-repo-abc', 'ns-repo-', 'ns-repo-_lock']) {
      expect(names.parseRepoDatabase(other)).toBeNull();
    }
  });
});
