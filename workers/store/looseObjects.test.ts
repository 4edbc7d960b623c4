import { describe, expect, it } from 'vitest';
import { looseObjects } from './looseObjects.ts';
import { GITDIR, type PromiseFs } from './repoFs.ts';

describe('looseObjects', () => {
  it('finds the ids stored loose, reading each objects/xx folder once, a missing one holding none', async () => {
    const folders = new Map([
      ['ab', ['cdef'.repeat(9) + 'cdef'.slice(0, 2), 'f'.repeat(38)]],
      ['12', ['3'.repeat(38)]],
    ]);
    const listed: string[] = [];
    const fs = {
      readdir: async (dir: string) => {
        listed.push(dir);
        const names = folders.get(dir.slice(`${GITDIR}/objects/`.length));
        if (!names) throw Object.assign(new Error('ENOENT'), { code: 'ENOENT' });
        return names;
      },
    } as unknown as PromiseFs;
    const inAb = `ab${'cdef'.repeat(9)}cd`;
    const notInAb = `ab${'e'.repeat(38)}`;
    const in12 = `12${'3'.repeat(38)}`;
    const elsewhere = `ff${'3'.repeat(38)}`;
    const found = await looseObjects(fs, [inAb, elsewhere, notInAb, in12, `ab${'f'.repeat(38)}`]);
    expect([...found].sort()).toEqual([in12, inAb, `ab${'f'.repeat(38)}`].sort());
    expect(listed.sort()).toEqual([`${GITDIR}/objects/12`, `${GITDIR}/objects/ab`, `${GITDIR}/objects/ff`]);
    expect(await looseObjects(fs, [])).toEqual(new Set());
  });
});
