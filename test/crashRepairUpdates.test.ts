// A worker terminated at each named point of the operations that update a stored repo (crashPoints.ts):
// fetch, pull, commit and push. Then startup repair as a new worker runs it: nothing half-written is left,
// the record says what the git directory holds, git reads the export, and the operation run again finishes
// the job. (Clone, checkout and pack merge: test/crashRepair.test.ts.)

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { maintenanceIdle } from '../workers/ops/maintenance/packMaintenance.ts';
import { repairStores } from '../workers/store/repair.ts';
import { checkedExport, exportCheckout, exportRepo } from './support/cloneOracle.ts';
import { crashAt } from './support/crash.ts';
import { testEngine } from './support/engine.ts';
import { git as gitCli } from './support/git.ts';
import { snapshotGitDir } from './support/repoChecks.ts';
import { commitOnServer, gitOnServer, type ServedCopies, serveCopies } from './support/servedCopies.ts';
import { useTmpDir } from './support/tmpDir.ts';
import { gitCheckoutOf, readLightningWorktree } from './support/worktree.ts';

const { engine, ctx } = testEngine();
const tmp = useTmpDir('crash-updates');
const author = { name: 'Crash Test', email: 'crash@example.test' };
let served: ServedCopies;
let exports = 0;

beforeAll(async () => {
  served = await serveCopies({ receivePackRepos: ['crash-push.git'] });
});
afterAll(async () => {
  await served?.close();
});

/** What repair did about the repo named `name` (reports start with the repo's name). */
async function repairOf(name: string): Promise<string[]> {
  const report = await repairStores(ctx.store);
  return [...report.removed, ...report.reported].filter((r) => r.startsWith(`${name}:`));
}

const exportOf = (repoId: string) => exportRepo(ctx, repoId, tmp(), `export-${exports++}`);
const rev = async (dir: string, spec: string) => (await gitCli(['rev-parse', spec], { cwd: dir })).trim();

describe('a fetch', () => {
  it('terminated with its pack and refs written, not committed: nothing of it stays; the next fetch does it all', async () => {
    const url = await served.copy('basic.git', 'crash-fetch.git');
    const bare = served.path('crash-fetch.git');
    const { repoId } = await engine.clone({ url });
    // The clone's background commit-graph build writes after it returns: the snapshot waits for it.
    await maintenanceIdle(ctx, repoId);
    const before = await snapshotGitDir(ctx, repoId);
    const tip = await commitOnServer(bare, { branch: 'main', files: { 'a.txt': 'a\n' }, message: 'A' });
    await gitOnServer(bare, ['tag', '-a', '-m', 'Release', 'v9', 'main']);
    // The pack stored ahead of the batch's commit, as a large one is: repair must find it unnamed.
    ctx.store.repoFs.backend(repoId).stageBytes = 1;
    await crashAt(ctx, 'fetch:files-written', () => engine.repo(repoId).fetch());
    const repaired = await repairOf('crash-fetch');
    expect(repaired).toHaveLength(1);
    expect(repaired[0]).toMatch(/^crash-fetch: deleted [1-9]\d* stored file contents that no file names/);
    expect(await snapshotGitDir(ctx, repoId)).toEqual(before);

    const again = await engine.repo(repoId).fetch();
    expect(again.newCommits).toBe(1);
    expect(again.updated.map((u) => u.name).sort()).toEqual(['refs/remotes/origin/main', 'refs/tags/v9']);
    const dir = await exportOf(repoId);
    expect(await rev(dir, 'refs/remotes/origin/main')).toBe(tip);
    await checkedExport(ctx, repoId, tmp(), `export-${exports++}`);
  });

  it('terminated after its commit, before its record: repair makes the record say the history is whole', async () => {
    const url = await served.copy('basic.git', 'crash-unshallow.git');
    const bare = served.path('crash-unshallow.git');
    const { repoId } = await engine.clone({ url, depth: 1 });
    expect(await ctx.store.registry.get(repoId)).toMatchObject({ shallow: true });
    await crashAt(ctx, 'fetch:files-committed', () => engine.repo(repoId).fetch({ unshallow: true }));
    // The whole history is stored; the record still says shallow.
    expect(await ctx.store.registry.get(repoId)).toMatchObject({ shallow: true });
    expect(await repairOf('crash-unshallow')).toEqual([
      'crash-unshallow: the list now says the whole history is stored.',
    ]);
    expect(await ctx.store.registry.get(repoId)).toMatchObject({ shallow: false });
    expect(await repairOf('crash-unshallow')).toEqual([]);
    const dir = await exportOf(repoId);
    const count = (d: string) => gitCli(['rev-list', '--count', '--all'], { cwd: d });
    expect(await count(dir)).toBe(await count(bare));
    await gitCli(['fsck', '--connectivity-only', '--no-progress'], { cwd: dir });
    expect((await engine.repo(repoId).fetch()).updated).toEqual([]);
  });
});

describe('a commit', () => {
  let repoId: string;
  beforeAll(async () => {
    repoId = (await engine.clone({ url: await served.copy('basic.git', 'crash-commit.git') })).repoId;
    await engine.repo(repoId).checkout({ ref: 'HEAD' });
  });

  it('terminated with the commit written, not committed: HEAD as it was, the change still staged', async () => {
    const head = (await ctx.store.registry.get(repoId))!.headOid;
    await engine.repo(repoId).writeWorktreeFile({ path: 'notes.txt', content: 'staged\n' });
    await engine.repo(repoId).stage({ paths: ['notes.txt'] });
    await crashAt(ctx, 'commit:files-written', () =>
      engine.repo(repoId).commit({ message: 'Notes', author }),
    );
    expect(await repairOf('crash-commit')).toEqual([]);
    expect(await rev(await exportOf(repoId), 'refs/heads/main')).toBe(head);
    expect((await engine.repo(repoId).status()).entries).toContainEqual(
      expect.objectContaining({ path: 'notes.txt', staged: 'added' }),
    );
    const { oid } = await engine.repo(repoId).commit({ message: 'Notes', author });
    expect(await ctx.store.registry.get(repoId)).toMatchObject({ branch: 'main', headOid: oid });
    await checkedExport(ctx, repoId, tmp(), `export-${exports++}`);
  });

  it('terminated after its commit, before its record: repair brings the record to HEAD', async () => {
    await engine.repo(repoId).writeWorktreeFile({ path: 'more.txt', content: 'more\n' });
    await engine.repo(repoId).stage({ paths: ['more.txt'] });
    const before = (await ctx.store.registry.get(repoId))!.headOid;
    await crashAt(ctx, 'commit:files-committed', () =>
      engine.repo(repoId).commit({ message: 'More', author }),
    );
    expect((await ctx.store.registry.get(repoId))!.headOid).toBe(before);
    expect(await repairOf('crash-commit')).toEqual(['crash-commit: the list now shows main, where HEAD is.']);
    const dir = await exportCheckout(ctx, repoId, tmp(), `export-${exports++}`);
    expect((await gitCli(['log', '-1', '--format=%s%n%P'], { cwd: dir })).trim()).toBe(`More\n${before}`);
    expect(await ctx.store.registry.get(repoId)).toMatchObject({
      branch: 'main',
      headOid: await rev(dir, 'HEAD'),
    });
    expect(await gitCli(['status', '--porcelain'], { cwd: dir })).toBe('');
  });
});

describe('a push', () => {
  it.each(['push:remote-updated', 'push:tracking-written'] as const)(
    'terminated at %s: the server has the commit, the tracking ref is as before; pushing again moves it',
    async (point) => {
      const name = `crash-push-${point.split(':')[1]}`;
      const url = await served.copy('basic.git', 'crash-push.git');
      const bare = served.path('crash-push.git');
      const { repoId } = await engine.clone({ url });
      await engine.repo(repoId).checkout({ ref: 'HEAD' });
      const before = (await ctx.store.registry.get(repoId))!.headOid;
      await engine.repo(repoId).writeWorktreeFile({ path: `${name}.txt`, content: 'pushed\n' });
      await engine.repo(repoId).stage({ paths: [`${name}.txt`] });
      const { oid } = await engine.repo(repoId).commit({ message: name, author });
      await crashAt(ctx, point, () => engine.repo(repoId).push());
      expect(await repairOf('crash-push')).toEqual([]);
      expect(await rev(bare, 'refs/heads/main')).toBe(oid);
      expect(await rev(await exportOf(repoId), 'refs/remotes/origin/main')).toBe(before);

      const again = await engine.repo(repoId).push();
      expect(again).toMatchObject({ upToDate: true, newOid: oid });
      expect(await rev(await exportOf(repoId), 'refs/remotes/origin/main')).toBe(oid);
      await checkedExport(ctx, repoId, tmp(), `export-${exports++}`);
      await engine.repo(repoId).delete();
    },
  );
});

describe('a pull', () => {
  /** A clone with its working tree, and the server's main moved on by a commit. */
  async function behind(name: string, local?: { path: string; content: string }) {
    const url = await served.copy('basic.git', `${name}.git`);
    const bare = served.path(`${name}.git`);
    const { repoId } = await engine.clone({ url });
    await engine.repo(repoId).checkout({ ref: 'HEAD' });
    if (local) {
      await engine.repo(repoId).writeWorktreeFile({ path: local.path, content: local.content });
      await engine.repo(repoId).stage({ paths: [local.path] });
      await engine.repo(repoId).commit({ message: 'Local', author });
    }
    const theirs = await commitOnServer(bare, {
      branch: 'main',
      files: { 'src/greet.js': 'theirs\n', 'new/file.txt': 'new\n' },
      message: 'Theirs',
    });
    const ours = (await ctx.store.registry.get(repoId))!.headOid;
    return {
      repoId,
      bare,
      theirs,
      ours,
      worktree: await readLightningWorktree(ctx.store.repoFs.open(repoId)),
    };
  }

  it('terminated with the merge commit stored, nothing moved: branch and files as they were; pulling again merges', async () => {
    const r = await behind('crash-pull-merge', { path: 'README.md', content: '# mine\n' });
    await crashAt(ctx, 'pull:merge-committed', () => engine.repo(r.repoId).pull());
    expect(await repairOf('crash-pull-merge')).toEqual([]);
    const dir = await exportOf(r.repoId);
    expect(await rev(dir, 'refs/heads/main')).toBe(r.ours);
    expect(await rev(dir, 'refs/remotes/origin/main')).toBe(r.theirs);
    expect(await readLightningWorktree(ctx.store.repoFs.open(r.repoId))).toEqual(r.worktree);
    const again = await engine.repo(r.repoId).pull();
    expect(again.status).toBe('merged');
    expect(again.newCommits).toBe(2);
    const after = await exportCheckout(ctx, r.repoId, tmp(), `export-${exports++}`);
    expect((await gitCli(['log', '-1', '--format=%P'], { cwd: after })).trim()).toBe(`${r.ours} ${r.theirs}`);
    expect(await gitCli(['status', '--porcelain'], { cwd: after })).toBe('');
  });

  it('terminated with its checkout written, not committed: the fetch kept, the branch and files as they were', async () => {
    const r = await behind('crash-pull-ff');
    await crashAt(ctx, 'checkout:files-written', () => engine.repo(r.repoId).pull());
    expect(await repairOf('crash-pull-ff')).toEqual([]);
    const dir = await exportOf(r.repoId);
    expect((await gitCli(['symbolic-ref', 'HEAD'], { cwd: dir })).trim()).toBe('refs/heads/main');
    expect(await rev(dir, 'refs/heads/main')).toBe(r.ours);
    expect(await rev(dir, 'refs/remotes/origin/main')).toBe(r.theirs);
    expect(await readLightningWorktree(ctx.store.repoFs.open(r.repoId))).toEqual(r.worktree);
    expect((await engine.repo(r.repoId).pull()).status).toBe('fast-forward');
    expect(await readLightningWorktree(ctx.store.repoFs.open(r.repoId))).toEqual(
      await gitCheckoutOf(r.bare, r.theirs, tmp()),
    );
  });

  it('terminated after its checkout committed: the branch moved with the files, HEAD on it; repair brings the record', async () => {
    const r = await behind('crash-pull-moved');
    await crashAt(ctx, 'checkout:files-committed', () => engine.repo(r.repoId).pull());
    expect(await repairOf('crash-pull-moved')).toEqual([
      'crash-pull-moved: the list now shows main, where HEAD is.',
    ]);
    expect(await ctx.store.registry.get(r.repoId)).toMatchObject({ branch: 'main', headOid: r.theirs });
    const dir = await exportOf(r.repoId);
    expect((await gitCli(['symbolic-ref', 'HEAD'], { cwd: dir })).trim()).toBe('refs/heads/main');
    expect(await rev(dir, 'refs/heads/main')).toBe(r.theirs);
    expect(await readLightningWorktree(ctx.store.repoFs.open(r.repoId))).toEqual(
      await gitCheckoutOf(r.bare, r.theirs, tmp()),
    );
    expect((await engine.repo(r.repoId).pull()).status).toBe('up-to-date');
  });
});
