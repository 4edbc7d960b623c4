import { join } from 'node:path';
import { beforeAll, describe, expect, inject, it } from 'vitest';
import { openRepo } from '../workers/ops/common/repoAccess.ts';
import { maintenanceIdle } from '../workers/ops/maintenance/packMaintenance.ts';
import { diffCommits } from '../workers/ops/read/diff.ts';
import { readFile } from '../workers/ops/read/readFile.ts';
import { readTree } from '../workers/ops/read/tree.ts';
import { listPaths } from '../workers/ops/read/treePaths.ts';
import { ensureBlobs } from '../workers/ops/sync/lazyBlobs.ts';
import { checkout } from '../workers/ops/worktree/checkout.ts';
import { testEngine } from './support/engine.ts';
import { git as gitCli } from './support/git.ts';
import { failure, snapshotGitDir } from './support/repoChecks.ts';
import { readLightningWorktree } from './support/worktree.ts';

const { engine, ctx } = testEngine();

const serverUrl = inject('gitServerUrl');
const fixturesDir = inject('fixturesDir');
const bare = () => join(fixturesDir, 'hostile.git');

type Case = [branch: string, path: string, check: string, where: 'tree' | 'link', folder?: string];

// Each branch case/<name> of hostile.git (server/fixtures/hostile.sh): the entry refused and git's check.
const CASES: Case[] = [
  ['empty-name-link', 'x/', 'EMPTY_NAME', 'tree', 'x'],
  ['dot', '.', 'HAS_DOT', 'tree'],
  ['dotdot', '..', 'HAS_DOTDOT', 'tree'],
  ['ntfs-dot-alias', '...', 'NTFS_DOT_ALIAS', 'tree'],
  ['dotgit', '.git', 'HAS_DOTGIT', 'tree'],
  ['dotgit-case', '.GIT', 'HAS_DOTGIT', 'tree'],
  ['dotgit-hfs', '.g\u200cit', 'HAS_DOTGIT', 'tree'],
  ['dotgit-ntfs-short', 'git~1', 'HAS_DOTGIT', 'tree'],
  ['dotgit-ntfs-trailing', '.git . ', 'HAS_DOTGIT', 'tree'],
  ['dotgit-ntfs-stream', '.git::$INDEX_ALLOCATION', 'HAS_DOTGIT', 'tree'],
  ['full-pathname', '.git/config', 'FULL_PATHNAME', 'tree'],
  ['backslash', '.git\\config', 'HAS_BACKSLASH', 'tree'],
  ['duplicate', 'dup', 'DUPLICATE_ENTRIES', 'tree'],
  ['unsorted', 'README.md', 'TREE_NOT_SORTED', 'tree'],
  ['bad-filemode', 'unknown-mode', 'BAD_FILEMODE', 'tree'],
  ['gitmodules-symlink', '.gitmodules', 'GITMODULES_SYMLINK', 'tree'],
  ['bad-tree', 'broken', 'BAD_TREE', 'tree', 'broken'],
  ['symlink-absolute', 'etc', 'SYMLINK_ABSOLUTE', 'link'],
  ['symlink-leaves', 'up', 'SYMLINK_LEAVES_WORKTREE', 'link'],
  ['symlink-gitdir', 'zz-hooks', 'SYMLINK_POINTS_TO_GIT_DIR', 'link'],
  ['symlink-chain', 'out', 'SYMLINK_LEAVES_WORKTREE', 'link'],
];

/** The blob ids a case's tree names (git ls-tree walks the ones the link cases use). */
async function linkBlobs(branch: string): Promise<string[]> {
  const out = await gitCli(['ls-tree', '-r', `case/${branch}`], { cwd: bare() });
  return out
    .split('\n')
    .filter((l) => l.startsWith('120000 '))
    .map((l) => l.split(/\s+/)[2]);
}

async function everything(repoId: string) {
  await maintenanceIdle(ctx, repoId);
  const record = await ctx.store.registry.get(repoId);
  return {
    gitDir: await snapshotGitDir(ctx, repoId),
    worktree: await readLightningWorktree(ctx.store.repoFs.open(repoId)),
    record: { branch: record?.branch, headOid: record?.headOid },
  };
}

it('git http-backend serves hostile.git: the clone gets every case branch', async () => {
  const { repoId } = await engine.clone({ url: `${serverUrl}/hostile.git` });
  const refs = await engine.repo(repoId).listRefs();
  const names = JSON.stringify(refs);
  for (const [branch] of CASES) expect(names).toContain(`case/${branch}`);
  await checkout(ctx, repoId, 'HEAD');
  expect((await readLightningWorktree(ctx.store.repoFs.open(repoId))).map((e) => e.path)).toEqual([
    'README.md',
    'src',
    'src/a.txt',
  ]);
});

describe.each(CASES)('hostile.git case/%s', (branch, path, check, where, folder) => {
  let repoId: string;
  beforeAll(async () => {
    // Clone with the case as HEAD: the checkout that follows is the one a deep link would run.
    ({ repoId } = await engine.clone({ url: `${serverUrl}/hostile.git`, ref: `case/${branch}` }));
    // A link's target is a blob: fetched first here, so the checkout below has nothing to fetch and the
    // git directory can be compared byte for byte (the test after this one lets the checkout fetch it).
    if (where === 'link') await ensureBlobs(ctx, repoId, await linkBlobs(branch));
  });

  it(`clone then checkout: HOSTILE_TREE naming ${JSON.stringify(path)} (${check}); /.git and the working tree unchanged`, async () => {
    const before = await everything(repoId);
    const err = (await failure(checkout(ctx, repoId, 'HEAD'))) as Error & {
      code: string;
      path: string;
      check: string;
    };
    expect(err.name).toBe('HostileTreeError');
    expect({ code: err.code, path: err.path, check: err.check }).toEqual({
      code: 'HOSTILE_TREE',
      path,
      check,
    });
    expect(err.message).toContain(check);
    expect(await everything(repoId)).toEqual(before);
    expect(before.worktree).toEqual([]);
  });

  it('switching to it from a harmless checkout: refused, nothing changes', async () => {
    await checkout(ctx, repoId, 'main');
    const before = await everything(repoId);
    const err = (await failure(checkout(ctx, repoId, `case/${branch}`))) as Error & {
      code: string;
      path: string;
    };
    expect([err.code, err.path]).toEqual(['HOSTILE_TREE', path]);
    expect(await everything(repoId)).toEqual(before);
  });

  if (where === 'tree') {
    it('readTree, readFile, listPaths and diff of it are refused too', async () => {
      expect((await failure(listPaths(ctx, repoId, `case/${branch}`))).code).toBe('HOSTILE_TREE');
      const err = await failure(readTree(ctx, repoId, `case/${branch}`, folder ?? ''));
      expect([err.code, (err as unknown as { path: string }).path]).toEqual(['HOSTILE_TREE', path]);
      expect((await failure(diffCommits(ctx, repoId, 'main', `case/${branch}`))).code).toBe('HOSTILE_TREE');
      expect((await failure(readFile(ctx, repoId, `case/${branch}`, `${folder ?? 'src'}/a.txt`))).code).toBe(
        'HOSTILE_TREE',
      );
    });
  }
});

it('a checked tree id is remembered per repo, a refused one never', async () => {
  const { repoId } = await engine.clone({ url: `${serverUrl}/hostile.git` });
  const rev = async (r: string) => (await gitCli(['rev-parse', r], { cwd: bare() })).trim();
  await readTree(ctx, repoId, 'main');
  const repo = await openRepo(ctx, repoId);
  expect(repo.checkedTrees.has(await rev('main^{tree}'))).toBe(true);
  await failure(readTree(ctx, repoId, 'case/dotgit'));
  expect(repo.checkedTrees.has(await rev('case/dotgit^{tree}'))).toBe(false);
  // Forgotten with the repo's other caches (after a discarded batch, or a delete).
  ctx.repos.forget(repoId);
  expect((await openRepo(ctx, repoId)).checkedTrees.size).toBe(0);
});

describe('a refused link case that had to fetch its target', () => {
  it('keeps the fetched blob as a promisor pack; every other file of /.git is byte for byte as it was', async () => {
    const { repoId } = await engine.clone({ url: `${serverUrl}/hostile.git`, ref: 'case/symlink-gitdir' });
    const before = await snapshotGitDir(ctx, repoId);
    expect((await failure(checkout(ctx, repoId, 'HEAD'))).code).toBe('HOSTILE_TREE');
    await maintenanceIdle(ctx, repoId);
    const after = await snapshotGitDir(ctx, repoId);
    const added = Object.keys(after).filter((p) => !(p in before));
    for (const p of added)
      expect(p).toMatch(/^\/\.git\/objects\/pack\/pack-[0-9a-f]{40}\.(pack|idx|promisor)$/);
    expect(added.length).toBeGreaterThan(0);
    for (const [p, sha] of Object.entries(before)) expect([p, after[p]]).toEqual([p, sha]);
    expect(await readLightningWorktree(ctx.store.repoFs.open(repoId))).toEqual([]);
  });
});
