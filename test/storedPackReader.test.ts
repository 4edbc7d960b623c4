import { join } from 'node:path';
import { afterEach, describe, expect, inject, it } from 'vitest';
import { forgetLoadedPacks, openRepo } from '../workers/ops/common/repoAccess.ts';
import { StoredPackReader } from '../workers/ops/common/storedPackReader.ts';
import { maintenanceIdle } from '../workers/ops/maintenance/packMaintenance.ts';
import { readFile } from '../workers/ops/read/readFile.ts';
import { checkout } from '../workers/ops/worktree/checkout.ts';
import { GITDIR } from '../workers/store/repoFs.ts';
import { testEngine } from './support/engine.ts';
import { exportDir } from './support/exportGitDir.ts';
import { git, gitBuffer } from './support/git.ts';
import { useTmpDir } from './support/tmpDir.ts';
import { gitCheckoutOf, readLightningWorktree } from './support/worktree.ts';

const { engine, ctx } = testEngine();
const serverUrl = inject('gitServerUrl');
const fixturesDir = inject('fixturesDir');
const tmp = useTmpDir('stored-pack-reader');

/** Every object's type and bytes as git reads them from `gitDir`: `git cat-file --batch-all-objects --batch`. */
async function catFile(gitDir: string): Promise<Map<string, { type: string; data: Buffer }>> {
  const out = await gitBuffer(['--git-dir', gitDir, 'cat-file', '--batch-all-objects', '--batch']);
  const objects = new Map<string, { type: string; data: Buffer }>();
  let at = 0;
  while (at < out.length) {
    const eol = out.indexOf(10, at);
    const [oid, type, size] = out.subarray(at, eol).toString().split(' ');
    objects.set(oid!, { type: type!, data: out.subarray(eol + 1, eol + 1 + Number(size)) });
    at = eol + 1 + Number(size) + 1;
  }
  return objects;
}

describe('StoredPackReader against git cat-file', () => {
  for (const repo of ['features.git', 'small-sized.git']) {
    it(`reads every object of ${repo}'s stored packs (a clone's and a lazy fetch's) as git reads them`, async () => {
      const { repoId } = await engine.clone({ url: `${serverUrl}/${repo}` });
      // A second pack, of blobs: the reader looks in each.
      const file = (await git(['--git-dir', join(fixturesDir, repo), 'ls-tree', '-r', 'HEAD']))
        .split('\n')
        .find((line) => line.startsWith('100644 blob '))!
        .split('\t')[1]!;
      await readFile(ctx, repoId, 'HEAD', file);
      await maintenanceIdle(ctx, repoId);
      const packSet = await ctx.store.packs.for(repoId);
      expect(packSet.packs.length).toBeGreaterThan(1);
      const oids = packSet.packs.flatMap((p) => packSet.index(p.checksum)!.oids());
      const gitDir = join(tmp(), repo);
      await exportDir(ctx.store.repoFs.open(repoId), GITDIR, gitDir);
      const expected = await catFile(gitDir);
      expect([...oids].sort()).toEqual([...expected.keys()].sort());
      // Deltas among them, ofs or ref: the reader resolves chains, not only whole objects.
      const verify = await git(['--git-dir', gitDir, 'verify-pack', '-v', ...packsOf(gitDir, packSet)]);
      expect(verify).toMatch(/^[0-9a-f]{40} (commit|tree) +\d+ \d+ \d+ \d+ [0-9a-f]{40}$/m);

      const reader = new StoredPackReader(ctx.store.repoFs.open(repoId).promises, packSet);
      // Last to first, then first to last: bases read after their deltas, then from the reader's cache.
      for (const oid of [...[...oids].reverse(), ...oids]) {
        const read = await reader.read(oid);
        expect(read?.type, oid).toBe(expected.get(oid)!.type);
        expect(Buffer.from(read!.object).equals(expected.get(oid)!.data), oid).toBe(true);
      }
      expect(await reader.read('0'.repeat(40))).toBeNull();
    });
  }
});

function packsOf(gitDir: string, packSet: Awaited<ReturnType<typeof ctx.store.packs.for>>): string[] {
  return packSet.packs.map((p) => join(gitDir, 'objects', 'pack', `pack-${p.checksum}.idx`));
}

describe('a first checkout lists its trees without isomorphic-git loading a pack', () => {
  const restore: (() => void)[] = [];
  afterEach(() => {
    for (const undo of restore.splice(0)) undo();
  });

  /** Paths of the .idx files read through the repo's file system from now on. */
  function idxReads(repoId: string): string[] {
    const fs = ctx.store.repoFs.open(repoId).promises as unknown as Record<
      string,
      (...a: unknown[]) => Promise<unknown>
    >;
    const original = fs.readFile;
    const reads: string[] = [];
    fs.readFile = (...args: unknown[]) => {
      if (String(args[0]).endsWith('.idx')) reads.push(String(args[0]));
      return original.apply(fs, args);
    };
    restore.push(() => {
      fs.readFile = original;
    });
    return reads;
  }

  it('of an annotated tag of a tag (features.git v0.1-approved): no .idx read, the working tree as git leaves it', async () => {
    const repo = 'features.git';
    const { repoId } = await engine.clone({ url: `${serverUrl}/${repo}` });
    // As after a page load: the clone's commit-graph build left isomorphic-git's packs loaded.
    forgetLoadedPacks(await openRepo(ctx, repoId));
    await maintenanceIdle(ctx, repoId);
    // Our reader's index bytes are the pack set's, read once per engine: loaded here, before counting.
    await ctx.store.packs.for(repoId);
    const reads = idxReads(repoId);
    const result = await checkout(ctx, repoId, 'v0.1-approved');
    expect(reads).toEqual([]);
    const commit = (
      await git(['--git-dir', join(fixturesDir, repo), 'rev-parse', 'v0.1-approved^{commit}'])
    ).trim();
    expect(result).toMatchObject({ commit, branch: null });
    expect(await readLightningWorktree(ctx.store.repoFs.open(repoId))).toEqual(
      await gitCheckoutOf(join(fixturesDir, repo), commit, join(tmp(), 'git')),
    );
  });
});
