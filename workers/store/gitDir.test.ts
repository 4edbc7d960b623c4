import { afterAll, describe, expect, it } from 'vitest';
import { memoryStorage } from '../storage/memory.ts';
import { writeLooseRefs, writeNewGitDir, writePackedRefs, writeShallow } from './gitDir.ts';
import { GITDIR } from './repoFs.ts';
import { Store } from './store.ts';

const store = new Store(memoryStorage(), 'blobless');
const repoId = 'gitdir-ref-guard';
afterAll(() => store.repoFs.delete(repoId));

const base = {
  description: 'Cloned by Blobless',
  config: { remote: { url: 'https://h/r.git', fetchRefspec: '+refs/heads/*:refs/remotes/origin/*' } },
  head: { branch: 'main' },
  packedRefs: [],
  shallow: [],
  pack: { checksum: '0'.repeat(40), pack: new Uint8Array(32), idx: new Uint8Array(32) },
};

describe('writeNewGitDir refuses ref names git refuses, before writing anything', () => {
  it.each([
    ['a loose ref', { looseRefs: [{ name: 'refs/heads/../../config', value: '1'.repeat(40) }] }],
    ['a packed ref', { looseRefs: [], packedRefs: [{ name: 'refs/tags/a\nb', oid: '1'.repeat(40) }] }],
    ['the HEAD branch', { looseRefs: [], head: { branch: '../../config' } }],
  ])('%s', async (_, bad) => {
    const fs = store.repoFs.open(repoId).promises;
    await expect(writeNewGitDir(fs, { ...base, ...bad })).rejects.toMatchObject({ code: 'REF_NAME_INVALID' });
    await expect(fs.readdir(GITDIR)).rejects.toMatchObject({ code: 'ENOENT' });
  });
});

describe('writeShallow', () => {
  const A = 'a'.repeat(40);
  const B = 'b'.repeat(40);

  it('writes the commits sorted and once each, and removes the file when none is left', async () => {
    const fs = store.repoFs.open(repoId).promises;
    await fs.mkdir(GITDIR).catch(() => undefined);
    await writeShallow(fs, [B, A, B]);
    expect(await fs.readFile(`${GITDIR}/shallow`, 'utf8')).toBe(`${A}\n${B}\n`);
    await writeShallow(fs, []);
    await expect(fs.stat(`${GITDIR}/shallow`)).rejects.toMatchObject({ code: 'ENOENT' });
    // Nothing to remove is not an error: a clone that is not shallow writes no file.
    await writeShallow(fs, []);
  });
});

describe('writePackedRefs', () => {
  const A = 'a'.repeat(40);

  it('rewrites packed-refs and drops the loose refs that would hide an updated value', async () => {
    const fs = store.repoFs.open(repoId).promises;
    await writeLooseRefs(fs, [{ name: 'refs/remotes/origin/main', value: 'b'.repeat(40) }]);
    await writePackedRefs(
      fs,
      [{ name: 'refs/remotes/origin/main', oid: A }],
      ['refs/remotes/origin/main', 'refs/tags/none'],
    );
    expect(await fs.readFile(`${GITDIR}/packed-refs`, 'utf8')).toContain(`${A} refs/remotes/origin/main\n`);
    await expect(fs.stat(`${GITDIR}/refs/remotes/origin/main`)).rejects.toMatchObject({ code: 'ENOENT' });
  });

  it('refuses a name git refuses, before writing', async () => {
    const fs = store.repoFs.open(repoId).promises;
    await expect(writePackedRefs(fs, [], ['refs/heads/../../config'])).rejects.toMatchObject({
      code: 'REF_NAME_INVALID',
    });
    // The packed-refs of the test above, not the empty list this call would have written.
    expect(await fs.readFile(`${GITDIR}/packed-refs`, 'utf8')).toContain(`${A} refs/remotes/origin/main\n`);
  });
});
