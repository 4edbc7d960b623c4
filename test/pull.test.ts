import { join } from 'node:path';
import git from 'isomorphic-git';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GITDIR } from '../workers/store/repoFs.ts';
import { testEngine } from './support/engine.ts';
import { exportDir } from './support/exportGitDir.ts';
import { git as gitCli } from './support/git.ts';
import { commitOnServer, type ServedCopies, serveCopies } from './support/servedCopies.ts';
import { useTmpDir } from './support/tmpDir.ts';
import {
  exportWorktree,
  gitCheckoutOf,
  readDiskWorktree,
  readLightningWorktree,
} from './support/worktree.ts';

const { engine, ctx } = testEngine();

let served: ServedCopies;
const tmp = useTmpDir('pull');

beforeAll(async () => {
  served = await serveCopies();
});
afterAll(async () => {
  await served?.close();
});

const me = { name: 'Local Person', email: 'local@example.test', timestamp: 1_900_000_000, timezoneOffset: 0 };

/** A commit made in the clone, as the editor will make them: file written, staged, committed. */
async function commitLocally(
  repoId: string,
  path: string,
  content: string,
  message: string,
): Promise<string> {
  const fs = ctx.store.repoFs.open(repoId);
  await fs.promises.writeFile(`/${path}`, content, 'utf8');
  await git.add({ fs, dir: '/', gitdir: GITDIR, filepath: path });
  const oid = await git.commit({ fs, dir: '/', gitdir: GITDIR, message, author: me, committer: me });
  await fs.promises.flush();
  return oid;
}

const read = async (repoId: string, path: string) =>
  (await ctx.store.repoFs.open(repoId).promises.readFile(`/${path}`, 'utf8')) as string;

let n = 0;
/** The repo exported with its working tree: git's own view of it. */
async function exportAll(repoId: string): Promise<string> {
  const dir = join(tmp(), `export-${n++}`);
  await exportWorktree(ctx.store.repoFs.open(repoId), dir);
  await exportDir(ctx.store.repoFs.open(repoId), GITDIR, join(dir, '.git'));
  return dir;
}

describe('pull', () => {
  it('fast-forwards the branch and its working tree to the remote', async () => {
    const url = await served.copy('basic.git', 'ff.git');
    const bare = served.path('ff.git');
    const { repoId } = await engine.clone({ url });
    await engine.repo(repoId).checkout({ ref: 'HEAD' });
    const before = (await engine.repo(repoId).readCommit({ ref: 'HEAD' })).oid;
    await commitOnServer(bare, { branch: 'main', files: { 'src/greet.js': 'one\n' }, message: 'One' });
    const tip = await commitOnServer(bare, {
      branch: 'main',
      files: { 'docs/guide.txt': null, 'new/file.txt': 'two\n' },
      message: 'Two',
    });

    const result = await engine.repo(repoId).pull();
    expect(result.status).toBe('fast-forward');
    expect(result).toMatchObject({ branch: 'main', from: before, to: tip, newCommits: 2, conflicts: [] });
    expect(result.checkout?.filesWritten).toBe(2);
    expect(result.checkout?.filesDeleted).toBe(1);
    // The working tree is git's checkout of the new tip, and git sees nothing to commit.
    expect(await readLightningWorktree(ctx.store.repoFs.open(repoId))).toEqual(
      await gitCheckoutOf(bare, tip, join(tmp(), 'ff-oracle')),
    );
    const dir = await exportAll(repoId);
    expect((await gitCli(['symbolic-ref', 'HEAD'], { cwd: dir })).trim()).toBe('refs/heads/main');
    expect((await gitCli(['rev-parse', 'HEAD'], { cwd: dir })).trim()).toBe(tip);
    expect(await gitCli(['status', '--porcelain'], { cwd: dir })).toBe('');
    expect((await engine.repo(repoId).pull()).status).toBe('up-to-date');
  });

  it('merges when both sides moved: a merge commit with both parents, its tree checked out', async () => {
    const url = await served.copy('basic.git', 'merge.git');
    const bare = served.path('merge.git');
    const { repoId } = await engine.clone({ url });
    await engine.repo(repoId).checkout({ ref: 'HEAD' });
    const ours = await commitLocally(repoId, 'README.md', '# basic\n\nChanged here.\n', 'Local change');
    const theirs = await commitOnServer(bare, {
      branch: 'main',
      files: { 'src/greet.js': 'theirs\n' },
      message: 'Remote change',
    });

    const result = await engine
      .repo(repoId)
      .pull({ author: { name: 'Local Person', email: 'local@example.test' } });
    expect(result.status).toBe('merged');
    expect(result.conflicts).toEqual([]);
    expect(await read(repoId, 'README.md')).toBe('# basic\n\nChanged here.\n');
    expect(await read(repoId, 'src/greet.js')).toBe('theirs\n');
    const dir = await exportAll(repoId);
    expect((await gitCli(['log', '-1', '--format=%P%n%an <%ae>'], { cwd: dir })).trim()).toBe(
      `${ours} ${theirs}\nLocal Person <local@example.test>`,
    );
    expect(await gitCli(['status', '--porcelain'], { cwd: dir })).toBe('');
    await gitCli(['fsck', '--connectivity-only', '--no-progress'], { cwd: dir });
  });

  it('shows a conflict and leaves the branch and working tree exactly as they were', async () => {
    const url = await served.copy('basic.git', 'conflict.git');
    const bare = served.path('conflict.git');
    const { repoId } = await engine.clone({ url });
    await engine.repo(repoId).checkout({ ref: 'HEAD' });
    const ours = await commitLocally(repoId, 'src/greet.js', 'ours\n', 'Local greeting');
    await commitLocally(repoId, 'README.md', '# mine\n', 'Local readme');
    const local = await commitLocally(repoId, 'docs/guide.txt', 'mine\n', 'Local guide');
    const theirs = await commitOnServer(bare, {
      branch: 'main',
      files: { 'src/greet.js': 'theirs\n', 'docs/guide.txt': 'mine\n', 'other.txt': 'x\n' },
      message: 'Remote greeting',
    });
    const worktree = await readLightningWorktree(ctx.store.repoFs.open(repoId));

    const result = await engine.repo(repoId).pull();
    expect(result.status).toBe('conflict');
    expect(result.conflicts).toEqual(['src/greet.js']);
    expect(result.to).toBe(local);
    expect(ours).not.toBe(local);
    // The fetch itself is kept: origin/main moved.
    expect(result.fetch.updated.map((u) => u.new)).toEqual([theirs]);
    // Nothing else changed: no markers, no half-merged index, HEAD on main at the local commit.
    expect(await readLightningWorktree(ctx.store.repoFs.open(repoId))).toEqual(worktree);
    const dir = await exportAll(repoId);
    expect((await gitCli(['rev-parse', 'HEAD', 'origin/main'], { cwd: dir })).trim().split('\n')).toEqual([
      local,
      theirs,
    ]);
    expect(await gitCli(['status', '--porcelain'], { cwd: dir })).toBe('');
    expect(await readDiskWorktree(dir)).toEqual(worktree);
  });
});
