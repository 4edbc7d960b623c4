import { join } from 'node:path';
import { beforeAll, describe, expect, inject, it } from 'vitest';
import { maintenanceIdle } from '../workers/ops/maintenance/packMaintenance.ts';
import { checkout } from '../workers/ops/worktree/checkout.ts';
import { GITDIR } from '../workers/store/repoFs.ts';
import { testEngine } from './support/engine.ts';
import { exportDir } from './support/exportGitDir.ts';
import { git as gitCli } from './support/git.ts';
import { failure } from './support/repoChecks.ts';
import { useTmpDir } from './support/tmpDir.ts';
import { exportWorktree, gitCheckoutOf, lsTree, readLightningWorktree } from './support/worktree.ts';

const { engine, ctx } = testEngine();

const serverUrl = inject('gitServerUrl');
const fixturesDir = inject('fixturesDir');
const bare = () => join(fixturesDir, 'typechange.git');
const tmp = useTmpDir('typechange');
let exports = 0;

async function revParse(rev: string): Promise<string> {
  return (await gitCli(['rev-parse', `${rev}^{commit}`], { cwd: bare() })).trim();
}

/** The checkout equals `git checkout` of the same commit: files, index, and a clean `git status` on a copy. */
async function expectLikeGit(repoId: string, rev: string): Promise<void> {
  const commit = await revParse(rev);
  const fs = ctx.store.repoFs.open(repoId);
  expect(await readLightningWorktree(fs)).toEqual(await gitCheckoutOf(bare(), commit, tmp()));
  await maintenanceIdle(ctx, repoId);
  const dest = join(tmp(), `worktree-${exports++}`);
  await exportWorktree(fs, dest);
  await exportDir(fs, GITDIR, join(dest, '.git'));
  const staged = (await gitCli(['ls-files', '--stage', '-z'], { cwd: dest })).split('\0').filter(Boolean);
  const tree = await lsTree(bare(), commit);
  expect(staged.sort()).toEqual([...tree].map(([path, e]) => `${e.mode} ${e.oid} 0\t${path}`).sort());
  expect(await gitCli(['status', '--porcelain', '--ignore-submodules=none'], { cwd: dest })).toBe('');
}

const SWITCHES = [
  'file-to-folder',
  'folder-to-file',
  'file-to-symlink',
  'symlink-to-folder',
  'folder-to-symlink',
  'submodule-to-file',
  'submodule-to-folder',
  'all',
];

describe.each(SWITCHES)('typechange.git: main <-> %s', (branch) => {
  /** A fresh clone with `from` checked out (a plain checkout, no switch), then switched to `to`. */
  async function switchBetween(from: string, to: string): Promise<string> {
    const { repoId } = await engine.clone({ url: `${serverUrl}/typechange.git`, ref: from });
    await checkout(ctx, repoId, 'HEAD');
    await expectLikeGit(repoId, from);
    await checkout(ctx, repoId, to);
    return repoId;
  }

  it(`main to ${branch}: what git checkout gives`, async () => {
    await expectLikeGit(await switchBetween('main', branch), branch);
  });

  it(`${branch} to main: what git checkout gives`, async () => {
    await expectLikeGit(await switchBetween(branch, 'main'), 'main');
  });
});

describe('typechange.git: local changes in the way of a type change', () => {
  let repoId: string;
  beforeAll(async () => {
    ({ repoId } = await engine.clone({ url: `${serverUrl}/typechange.git` }));
    await checkout(ctx, repoId, 'HEAD');
  });

  it('a modified file in a folder that becomes a file: WORKTREE_DIRTY naming it, nothing changes', async () => {
    const fs = ctx.store.repoFs.open(repoId).promises;
    await fs.writeFile('/d/x.txt', 'changed\n');
    const before = await readLightningWorktree(ctx.store.repoFs.open(repoId));
    const err = (await failure(checkout(ctx, repoId, 'folder-to-file'))) as Error & {
      code: string;
      paths: string[];
    };
    expect([err.code, err.paths]).toEqual(['WORKTREE_DIRTY', ['d/x.txt']]);
    expect(await readLightningWorktree(ctx.store.repoFs.open(repoId))).toEqual(before);
  });

  it('an untracked file in that folder: WORKTREE_DIRTY too (git would lose it)', async () => {
    const fs = ctx.store.repoFs.open(repoId).promises;
    await fs.writeFile('/d/x.txt', 'x\n');
    await fs.writeFile('/d/untracked.txt', 'mine\n');
    const err = (await failure(checkout(ctx, repoId, 'folder-to-file'))) as Error & {
      code: string;
      paths: string[];
    };
    expect([err.code, err.paths]).toEqual(['WORKTREE_DIRTY', ['d/untracked.txt']]);
  });

  it('with force, both go, as with git checkout -f', async () => {
    await ctx.store.repoFs.open(repoId).promises.writeFile('/d/x.txt', 'changed again\n');
    await checkout(ctx, repoId, 'folder-to-file', { force: true });
    await expectLikeGit(repoId, 'folder-to-file');
  });
});

describe('typechange.git: a sparse checkout of a path that changes kind', () => {
  it('clears and writes only that path; HEAD moves, the rest stays', async () => {
    const { repoId } = await engine.clone({ url: `${serverUrl}/typechange.git` });
    await checkout(ctx, repoId, 'HEAD');
    await checkout(ctx, repoId, 'all', { paths: ['a', 'ln'] });
    const listing = await readLightningWorktree(ctx.store.repoFs.open(repoId));
    const of = (p: string) => listing.find((e) => e.path === p)?.kind;
    expect([of('a'), of('a/inner.txt'), of('ln'), of('ln/file.txt')]).toEqual(['dir', 'file', 'dir', 'file']);
    // d is a file in `all`, but was not asked for: still main's folder, and nothing went through the old link.
    expect([of('d'), of('d/x.txt'), of('d/file.txt'), of('s')]).toEqual(['dir', 'file', undefined, 'dir']);
  });
});
