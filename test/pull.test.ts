import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import git from 'isomorphic-git';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GITDIR } from '../workers/store/repoFs.ts';
import { exportCheckout } from './support/cloneOracle.ts';
import { testEngine } from './support/engine.ts';
import { git as gitCli } from './support/git.ts';
import { showRefs } from './support/refsOracle.ts';
import { failure } from './support/repoChecks.ts';
import { commitOnServer, gitOnServer, type ServedCopies, serveCopies } from './support/servedCopies.ts';
import { useTmpDir } from './support/tmpDir.ts';
import { twinClones } from './support/twinClones.ts';
import { gitCheckoutOf, readDiskWorktree, readLightningWorktree } from './support/worktree.ts';

let served: ServedCopies;
const { engine, ctx } = testEngine();
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
const exportAll = (repoId: string) => exportCheckout(ctx, repoId, tmp(), `export-${n++}`);

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

  /** A clone with three local commits and a remote commit that conflicts with one of them (src/greet.js). */
  async function conflicted(name: string) {
    const url = await served.copy('basic.git', name);
    const bare = served.path(name);
    const { repoId } = await engine.clone({ url });
    await engine.repo(repoId).checkout({ ref: 'HEAD' });
    await commitLocally(repoId, 'src/greet.js', 'ours\n', 'Local greeting');
    await commitLocally(repoId, 'README.md', '# mine\n', 'Local readme');
    const local = await commitLocally(repoId, 'docs/guide.txt', 'mine\n', 'Local guide');
    const theirs = await commitOnServer(bare, {
      branch: 'main',
      files: {
        'src/greet.js': 'theirs\n',
        'docs/guide.txt': 'mine\n',
        'other.txt': 'x\n',
        'src/main.js': null,
      },
      message: 'Remote greeting',
    });
    return { url, bare, repoId, local, theirs };
  }

  it('stops on a conflict as git does: MERGE_HEAD, stages 1-3, the clean part staged, markers in the file', async () => {
    const { repoId, local, theirs } = await conflicted('conflict.git');
    const result = await engine.repo(repoId).pull();
    expect(result.status).toBe('conflict');
    expect(result.merging).toBe(true);
    expect(result.conflicts).toEqual(['src/greet.js']);
    // The fetch itself is kept: origin/main moved; the branch has not moved yet.
    expect(result.fetch.updated.map((u) => u.new)).toEqual([theirs]);
    const status = await engine.repo(repoId).status();
    expect(status.merging).toMatchObject({ head: theirs, conflicts: ['src/greet.js'] });
    expect(status.entries.find((e) => e.path === 'src/greet.js')).toMatchObject({ conflict: true });

    // git's view of the exported repository is git's own merge state, stage for stage. Our local commits
    // are only here: git's merge runs on the export's objects.
    const dir = await exportAll(repoId);
    const oracle = join(tmp(), 'conflict-oracle');
    await gitCli(['clone', '-q', '--no-checkout', dir, oracle]);
    await gitCli(['checkout', '-q', local], { cwd: oracle });
    await gitCli(['merge', '--no-edit', theirs], { cwd: oracle }).catch(() => undefined);
    const same = async (args: string[]) =>
      expect(await gitCli(args, { cwd: dir }), args.join(' ')).toBe(await gitCli(args, { cwd: oracle }));
    await same(['ls-files', '--stage']);
    await same(['diff', '--cached', '--name-status']);
    await same(['status', '--porcelain', '--untracked-files=all']);
    expect((await gitCli(['rev-parse', 'HEAD', 'MERGE_HEAD'], { cwd: dir })).trim().split('\n')).toEqual([
      local,
      theirs,
    ]);
    const marked = await read(repoId, 'src/greet.js');
    expect(marked).toMatch(/^<<<<<<< .*\nours\n=======\ntheirs\n>>>>>>> .*\n$/);
    // Every other file is what git's merge left.
    for (const path of ['README.md', 'docs/guide.txt', 'other.txt']) {
      expect(await read(repoId, path), path).toBe(await readFile(join(oracle, path), 'utf8'));
    }
    expect(
      await ctx.store.repoFs
        .open(repoId)
        .promises.stat('/src/main.js')
        .catch(() => null),
    ).toBeNull();
  });

  it('commits the resolution as the merge commit git makes for it; refuses before it is resolved', async () => {
    const { repoId, local, theirs } = await conflicted('resolve.git');
    await engine.repo(repoId).pull();
    const author = { name: 'Local Person', email: 'local@example.test' };
    const early = await engine
      .repo(repoId)
      .commit({ message: 'Merge', author })
      .catch((e) => e);
    expect(early).toMatchObject({ code: 'UNRESOLVED_CONFLICTS' });

    await engine.repo(repoId).writeWorktreeFile({ path: 'src/greet.js', content: 'ours and theirs\n' });
    await engine.repo(repoId).stage({ paths: ['src/greet.js'] });
    const state = (await engine.repo(repoId).status()).merging!;
    expect(state.conflicts).toEqual([]);
    const made = await engine.repo(repoId).commit({ message: state.message, author });
    expect((await engine.repo(repoId).status()).merging).toBeNull();

    const dir = await exportAll(repoId);
    const oracle = join(tmp(), 'resolve-oracle');
    await gitCli(['clone', '-q', '--no-checkout', dir, oracle]);
    await gitCli(['checkout', '-q', local], { cwd: oracle });
    await gitCli(['merge', '--no-edit', theirs], { cwd: oracle }).catch(() => undefined);
    await writeFile(join(oracle, 'src/greet.js'), 'ours and theirs\n');
    await gitCli(['add', 'src/greet.js'], { cwd: oracle });
    await gitCli(['-c', 'user.name=Git', '-c', 'user.email=git@example.test', 'commit', '-q', '--no-edit'], {
      cwd: oracle,
    });
    // The same tree and parents (the messages differ: git's names the commit it was given).
    const show = (cwd: string, rev: string) => gitCli(['log', '-1', '--format=%T %P', rev], { cwd });
    expect(await show(dir, made.oid)).toBe(await show(oracle, 'HEAD'));
    expect((await gitCli(['log', '-1', '--format=%s', made.oid], { cwd: dir })).trim()).toMatch(
      /^Merge branch 'main' of .*resolve\.git into main$/,
    );
    expect(await gitCli(['status', '--porcelain'], { cwd: dir })).toBe('');
    await gitCli(['fsck', '--no-progress'], { cwd: dir });
  });

  it('aborts the merge: every file, the index and HEAD as before the pull', async () => {
    const { repoId, local } = await conflicted('abort.git');
    const worktree = await readLightningWorktree(ctx.store.repoFs.open(repoId));
    await engine.repo(repoId).pull();
    await engine.repo(repoId).writeWorktreeFile({ path: 'src/greet.js', content: 'half resolved\n' });
    await engine.repo(repoId).abortMerge();
    expect(await readLightningWorktree(ctx.store.repoFs.open(repoId))).toEqual(worktree);
    expect((await engine.repo(repoId).status()).merging).toBeNull();
    const dir = await exportAll(repoId);
    expect((await gitCli(['rev-parse', 'HEAD'], { cwd: dir })).trim()).toBe(local);
    expect(await gitCli(['status', '--porcelain'], { cwd: dir })).toBe('');
    expect(
      await engine
        .repo(repoId)
        .abortMerge()
        .catch((e) => e),
    ).toMatchObject({ code: 'NO_MERGE' });
  });

  it('with local changes in the way, changes nothing and names the conflicting files', async () => {
    const { repoId, local } = await conflicted('dirty.git');
    await engine.repo(repoId).writeWorktreeFile({ path: 'README.md', content: 'not committed\n' });
    const worktree = await readLightningWorktree(ctx.store.repoFs.open(repoId));
    const result = await engine.repo(repoId).pull();
    expect(result).toMatchObject({
      status: 'conflict',
      merging: false,
      conflicts: ['src/greet.js'],
      to: local,
    });
    expect(await readLightningWorktree(ctx.store.repoFs.open(repoId))).toEqual(worktree);
    expect((await engine.repo(repoId).status()).merging).toBeNull();
  });
});

/**
 * The same repository twice: cloned and checked out by Blobless, and cloned by git. Local commits are made
 * in both with the same content, author and time, so they are the same commit; then both pull.
 */
async function twins(name: string) {
  const { url, bare, repoId, cli } = await twinClones(engine, served, 'basic.git', name, tmp(), []);
  await engine.repo(repoId).checkout({ ref: 'HEAD' });
  const identity = {
    GIT_AUTHOR_NAME: me.name,
    GIT_AUTHOR_EMAIL: me.email,
    GIT_AUTHOR_DATE: `${me.timestamp} +0000`,
    GIT_COMMITTER_NAME: me.name,
    GIT_COMMITTER_EMAIL: me.email,
    GIT_COMMITTER_DATE: `${me.timestamp} +0000`,
  };
  return {
    url,
    bare,
    repoId,
    cli,
    async commitInBoth(path: string, content: string, message: string): Promise<string> {
      const ours = await commitLocally(repoId, path, content, message);
      await writeFile(join(cli, path), content);
      await gitCli(['add', path], { cwd: cli });
      await gitCli(['commit', '-q', '-m', message], { cwd: cli, env: identity });
      expect((await gitCli(['rev-parse', 'HEAD'], { cwd: cli })).trim()).toBe(ours);
      return ours;
    },
    /** `git pull` (merging, as git's default for a diverged branch once asked): its exit and output. */
    gitPull(): Promise<{ ok: boolean; output: string }> {
      return gitCli(['-c', 'pull.rebase=false', 'pull'], { cwd: cli, env: identity }).then(
        (output) => ({ ok: true, output }),
        (err: Error & { stderr?: string }) => ({ ok: false, output: `${err.message}\n${err.stderr ?? ''}` }),
      );
    },
    /**
     * What the two repositories must agree on after the pull: the branch's commit (or, for a merge made at
     * another instant, its tree and parents), every other ref, the working tree, a clean status.
     */
    async expectAsGit(opts: { sameCommit: boolean }): Promise<void> {
      const dir = await exportAll(repoId);
      const commitOf = (d: string) => gitCli(['log', '-1', '--format=%T %P'], { cwd: d });
      if (opts.sameCommit)
        expect(await gitCli(['rev-parse', 'HEAD'], { cwd: dir })).toBe(
          await gitCli(['rev-parse', 'HEAD'], { cwd: cli }),
        );
      expect(await commitOf(dir)).toBe(await commitOf(cli));
      expect((await gitCli(['symbolic-ref', 'HEAD'], { cwd: dir })).trim()).toBe('refs/heads/main');
      const others = async (d: string) =>
        (await showRefs(join(d, '.git'))).filter((l) => opts.sameCommit || !l.endsWith(' refs/heads/main'));
      expect(await others(dir)).toEqual(await others(cli));
      expect(await readLightningWorktree(ctx.store.repoFs.open(repoId))).toEqual(await readDiskWorktree(cli));
      expect(await gitCli(['status', '--porcelain'], { cwd: dir })).toBe('');
      await gitCli(['fsck', '--connectivity-only', '--no-progress'], { cwd: dir });
    },
  };
}

describe('pull, against git pull of the same repository', () => {
  it('fast-forward: the same commit, refs and working tree', async () => {
    const t = await twins('oracle-ff.git');
    await commitOnServer(t.bare, { branch: 'main', files: { 'src/greet.js': 'one\n' }, message: 'One' });
    await commitOnServer(t.bare, {
      branch: 'main',
      files: { 'docs/guide.txt': null, 'new/deep/file.txt': 'two\n' },
      message: 'Two',
    });
    expect((await engine.repo(t.repoId).pull()).status).toBe('fast-forward');
    expect((await t.gitPull()).output).toContain('Fast-forward');
    await t.expectAsGit({ sameCommit: true });
  });

  it('merge: a commit with git’s tree and parents; the commits that arrived; the working tree', async () => {
    const t = await twins('oracle-merge.git');
    await t.commitInBoth('README.md', '# basic\n\nChanged here.\n', 'Local change');
    await commitOnServer(t.bare, {
      branch: 'main',
      files: { 'src/greet.js': 'theirs\n' },
      message: 'Remote',
    });
    await commitOnServer(t.bare, { branch: 'main', files: { 'src/x/new.js': 'new\n' }, message: 'Remote 2' });
    const result = await engine.repo(t.repoId).pull();
    expect(result.status).toBe('merged');
    expect(result.newCommits).toBe(3);
    expect((await t.gitPull()).ok).toBe(true);
    await t.expectAsGit({ sameCommit: false });
    // Every commit git has, Blobless has: the two that arrived, the merge's parents.
    const dir = await exportAll(t.repoId);
    const commits = (d: string) => gitCli(['rev-list', '--count', 'HEAD'], { cwd: d });
    expect(await commits(dir)).toBe(await commits(t.cli));
  });

  it('up to date with the local branch ahead: nothing changes, as git says "Already up to date"', async () => {
    const t = await twins('oracle-ahead.git');
    const local = await t.commitInBoth('README.md', '# mine\n', 'Local only');
    const result = await engine.repo(t.repoId).pull();
    expect(result).toMatchObject({ status: 'up-to-date', from: local, to: local, newCommits: 0 });
    expect((await t.gitPull()).output).toContain('Already up to date');
    await t.expectAsGit({ sameCommit: true });
  });

  it('unrelated histories: refused as git refuses them, the fetch kept, the branch and files untouched', async () => {
    const t = await twins('oracle-unrelated.git');
    await t.commitInBoth('README.md', '# mine\n', 'Local only');
    // The server's main replaced by a history of its own (a new root commit).
    const blob = (await gitCli(['hash-object', '-w', '--stdin'], { cwd: t.bare, input: 'other\n' })).trim();
    const tree = (
      await gitCli(['mktree'], { cwd: t.bare, input: `100644 blob ${blob}\tother.txt\n` })
    ).trim();
    const root = (await gitOnServer(t.bare, ['commit-tree', tree, '-m', 'Unrelated root'])).trim();
    await gitOnServer(t.bare, ['update-ref', 'refs/heads/main', root]);

    const err = await failure(engine.repo(t.repoId).pull());
    expect(err.code).toBe('UNRELATED_HISTORIES');
    const theirs = await t.gitPull();
    expect(theirs.ok).toBe(false);
    expect(theirs.output).toContain('refusing to merge unrelated histories');
    await t.expectAsGit({ sameCommit: true });
    expect((await gitCli(['rev-parse', 'origin/main'], { cwd: t.cli })).trim()).toBe(root);
  });
});
