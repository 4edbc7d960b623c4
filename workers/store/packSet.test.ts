import { describe, expect, it } from 'vitest';
import { writePackIndexV2 } from '../pack/packIndexWriter.ts';
import { PACK_DIR, PackSet, PackSets } from './packSet.ts';
import type { RepoFileSystems } from './repoFs.ts';

const oid = (c: string) => c.repeat(40);
const checksum = (c: string) => c.repeat(40);
/** A .idx for a pack named `sum` holding `oids` (the pack itself is never read). */
const idxOf = (sum: string, oids: string[]) =>
  writePackIndexV2(
    oids.map((o, i) => ({ oid: o, offset: 12 + i, crc32: 0 })),
    sum,
  );

describe('PackSet', () => {
  it('knows the objects of every pack it was given, until one is removed', () => {
    const set = new PackSet();
    set.add(checksum('1'), idxOf(checksum('1'), [oid('a')]), true);
    set.add(checksum('2'), idxOf(checksum('2'), [oid('b'), oid('c')]), false);
    expect(set.has(oid('a'))).toBe(true);
    expect(set.has(oid('c'))).toBe(true);
    expect(set.has(oid('d'))).toBe(false);
    // Largest first.
    expect(set.packs).toEqual([
      { checksum: checksum('2'), promisor: false, objectCount: 2 },
      { checksum: checksum('1'), promisor: true, objectCount: 1 },
    ]);
    expect(Object.isFrozen(set.packs)).toBe(true);
    expect(set.index(checksum('2'))?.count).toBe(2);
    expect(set.index(checksum('3'))).toBeUndefined();

    set.remove(checksum('2'));
    expect(set.has(oid('b'))).toBe(false);
    expect(set.packs).toEqual([{ checksum: checksum('1'), promisor: true, objectCount: 1 }]);
    set.remove(checksum('9'));
    expect(set.packs.length).toBe(1);
  });

  it('lists the missing ids once each, lower-cased, in first-seen order', () => {
    const set = new PackSet();
    set.add(checksum('1'), idxOf(checksum('1'), [oid('a')]), true);
    expect(set.missing([oid('e'), oid('a'), oid('D'), oid('e'), oid('d'), oid('A')])).toEqual([
      oid('e'),
      oid('d'),
    ]);
  });

  it('trusts an index it wrote: its own checksum is not hashed again', () => {
    const idx = idxOf(checksum('1'), [oid('a')]);
    idx[idx.length - 1] ^= 0xff;
    const set = new PackSet();
    set.add(checksum('1'), idx, false);
    expect(set.has(oid('a'))).toBe(true);
  });

  it('refuses an index of another pack, and an id that is not one', () => {
    const set = new PackSet();
    expect(() => set.add(checksum('1'), idxOf(checksum('2'), [oid('a')]), false)).toThrow(
      `The index given for pack ${checksum('1')} describes pack ${checksum('2')}`,
    );
    expect(set.packs).toEqual([]);
    expect(() => set.has('abc')).toThrow(new TypeError('"abc" is not a full hexadecimal SHA-1 object id'));
    expect(() => set.missing(['xyz'])).toThrow(TypeError);
  });
});

/** RepoFileSystems whose repos hold the files given; a folder listing of `fail` fails with that error. */
function fakeRepoFs(files: Map<string, Uint8Array | string>, fail?: { error: Error }) {
  const reloaded: ((repoId: string) => void)[] = [];
  let reads = 0;
  const promises = {
    readdir: async (dir: string) => {
      reads++;
      if (fail) throw fail.error;
      const names = [...files.keys()]
        .filter((p) => p.startsWith(`${dir}/`))
        .map((p) => p.slice(dir.length + 1));
      if (names.length === 0) throw Object.assign(new Error('ENOENT'), { code: 'ENOENT' });
      return names;
    },
    readFile: async (path: string) => files.get(path),
  };
  const repoFs = {
    open: () => ({ promises }),
    onReloaded: (listener: (repoId: string) => void) => void reloaded.push(listener),
  } as unknown as RepoFileSystems;
  return { repoFs, reloaded, reads: () => reads };
}

describe('PackSets', () => {
  it("reads a repo's packs through their .idx once, marks the promisor ones, and shares the set", async () => {
    const files = new Map<string, Uint8Array | string>([
      [`${PACK_DIR}/pack-${checksum('1')}.idx`, idxOf(checksum('1'), [oid('a')])],
      [`${PACK_DIR}/pack-${checksum('1')}.pack`, ''],
      [`${PACK_DIR}/pack-${checksum('1')}.promisor`, ''],
      [`${PACK_DIR}/pack-${checksum('2')}.idx`, idxOf(checksum('2'), [oid('b'), oid('c')])],
      [`${PACK_DIR}/pack-${checksum('2')}.pack`, ''],
      // Not a pack's index: skipped, as git skips it.
      [`${PACK_DIR}/pack-${checksum('3')}.idx.tmp`, ''],
      [`${PACK_DIR}/xpack-${checksum('4')}.idx`, ''],
      [`${PACK_DIR}/pack-${checksum('4')}.idxx`, ''],
    ]);
    const { repoFs, reloaded, reads } = fakeRepoFs(files);
    const sets = new PackSets(repoFs);
    const [set, again] = await Promise.all([sets.for('r'), sets.for('r')]);
    expect(again).toBe(set);
    expect(reads()).toBe(1);
    expect(set.packs).toEqual([
      { checksum: checksum('2'), promisor: false, objectCount: 2 },
      { checksum: checksum('1'), promisor: true, objectCount: 1 },
    ]);
    expect(set.has(oid('a'))).toBe(true);

    sets.forget('r');
    expect(await sets.for('r')).not.toBe(set);
    expect(reads()).toBe(2);
    // Another tab changed the repo: the next use reads it again.
    const current = await sets.for('r');
    for (const listener of reloaded) listener('r');
    expect(await sets.for('r')).not.toBe(current);
    expect(reads()).toBe(3);
  });

  it('a failed load forgotten and started again does not drop the new one', async () => {
    let reads = 0;
    let failFirst: (err: Error) => void = () => undefined;
    const promises = {
      readdir: () => {
        reads++;
        if (reads === 1) return new Promise((_, reject) => (failFirst = reject));
        return Promise.resolve([]);
      },
    };
    const repoFs = { open: () => ({ promises }), onReloaded: () => undefined } as unknown as RepoFileSystems;
    const sets = new PackSets(repoFs);
    const first = sets.for('r');
    sets.forget('r');
    const second = await sets.for('r');
    failFirst(new Error('late'));
    await expect(first).rejects.toMatchObject({ code: 'STORAGE_FAILED' });
    expect(await sets.for('r')).toBe(second);
    expect(reads).toBe(2);
  });

  it('an empty set for a repo without packs; a failed read is a storage error, not kept', async () => {
    expect((await new PackSets(fakeRepoFs(new Map()).repoFs).for('r')).packs).toEqual([]);

    const fail = { error: Object.assign(new Error('disk gone'), { code: 'EIO' }) };
    const { repoFs, reads } = fakeRepoFs(new Map(), fail);
    const sets = new PackSets(repoFs);
    await expect(sets.for('r')).rejects.toMatchObject({
      code: 'STORAGE_FAILED',
      message: 'Could not store the list of packs: disk gone',
    });
    await expect(sets.for('r')).rejects.toMatchObject({ code: 'STORAGE_FAILED' });
    expect(reads()).toBe(2);
  });
});
