// pull.ts case by case against `git pull` itself, fast enough to mutate: each case builds a small remote with
// the git CLI, served through a scripted fetch of real `git upload-pack` answers (test/support/uploadPackFetch.ts,
// no HTTP server), clones it with the engine on memory storage, and clones it with git too. Local commits are
// made in both with the same content, author and time (so they are the same commits), the remote moves, both
// pull, and git's clone is the oracle: the branch's commit (a merge's tree, parents and identity), every ref,
// the working tree byte for byte, the index's entries (`git ls-files --stage`: the index file itself holds
// stat data that differs), the conflict stages, and the count of commits that arrived. Pull over HTTP in the
// browser, with a conflict resolved in the editor: e2e/push.spec.ts.
import { execFileSync } from 'node:child_process';
import * as nodeFs from 'node:fs';
import {
  chmodSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  symlinkSync,
  unlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import git from 'isomorphic-git';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { exportCheckout } from '../../../test/support/cloneOracle.ts';
import { crashAt } from '../../../test/support/crash.ts';
import { testEngine } from '../../../test/support/engine.ts';
import { showRefs } from '../../../test/support/refsOracle.ts';
import { failure, settledGitDir, snapshotGitDir } from '../../../test/support/repoChecks.ts';
import { uploadPackFetch } from '../../../test/support/uploadPackFetch.ts';
import { readDiskWorktree, readLightningWorktree } from '../../../test/support/worktree.ts';
import { memoryStorage } from '../../storage/memory.ts';
import { GITDIR } from '../../store/repoFs.ts';
import { OperationError } from '../common/errors.ts';
import type { RepoHandle } from '../common/repoAccess.ts';
import { countCommits, type PullProgress, pull } from './pull.ts';

let root: string;
const served = uploadPackFetch((name) => join(root, name));
const { engine, ctx } = testEngine({ storage: memoryStorage(), fetch: served.fetch });

beforeAll(() => {
  root = mkdtempSync(join(tmpdir(), 'blobless-pull-'));
});
afterAll(async () => {
  await engine.close();
  if (root) rmSync(root, { recursive: true, force: true });
});
afterEach(() => {
  vi.restoreAllMocks();
});

const ME = { name: 'Local Person', email: 'local@example.test' };
let clock = 1_800_000_000;

/** git in `cwd` as ME, at `time` (the next second of the clock when absent). */
function gitAt(cwd: string, args: string[], time?: number): string {
  const when = `${time ?? ++clock} +0000`;
  return execFileSync('git', args, {
    cwd,
    env: {
      ...process.env,
      GIT_CONFIG_GLOBAL: '/dev/null',
      GIT_CONFIG_NOSYSTEM: '1',
      GIT_AUTHOR_NAME: ME.name,
      GIT_AUTHOR_EMAIL: ME.email,
      GIT_COMMITTER_NAME: ME.name,
      GIT_COMMITTER_EMAIL: ME.email,
      GIT_AUTHOR_DATE: when,
      GIT_COMMITTER_DATE: when,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
    .toString()
    .trim();
}

/** Writes `files` (null deletes) in the work tree `dir` and commits them; returns the commit. */
function commitFiles(
  dir: string,
  files: Record<string, string | Uint8Array | null>,
  message: string,
  time?: number,
): string {
  for (const [path, text] of Object.entries(files)) {
    if (text === null) gitAt(dir, ['rm', '-q', path]);
    else {
      mkdirSync(join(dir, dirname(path)), { recursive: true });
      writeFileSync(join(dir, path), text);
      gitAt(dir, ['add', path]);
    }
  }
  gitAt(dir, ['commit', '-q', '--allow-empty', '-m', message], time);
  return gitAt(dir, ['rev-parse', 'HEAD']);
}

const lines = (n: number, tag = '') => Array.from({ length: n }, (_, i) => `line ${i + 1}${tag}\n`).join('');

/** The starting files of every remote: a folder two deep, and a text long enough for two clean edits. */
const START = {
  'a.txt': lines(12),
  'dir/b.txt': 'b\n',
  'dir/sub/c.txt': lines(6, ' c'),
  'dir/sub/d.txt': 'd\n',
  'e.txt': 'e\n',
  // Before dir/ in git's order (by bytes, '-' < '/'), after it in a walk that sorts names alone.
  'dir-e.txt': 'dir-e\n',
};

let cases = 0;

/**
 * A remote `name` with START (and `links`, path to target) committed on main; the engine's clone of it
 * (checked out unless `checkout` is false) and git's (`cli`); `up`, a clone where the remote's next commits
 * are made and pushed.
 */
async function remote(
  opts: {
    checkout?: boolean;
    start?: Record<string, string>;
    links?: Record<string, string>;
    limits?: { maxTreeDepth: number };
  } = {},
) {
  const name = `r${cases++}.git`;
  const work = join(root, `${name}-work`);
  execFileSync('git', ['init', '-q', '-b', 'main', work]);
  for (const [path, target] of Object.entries(opts.links ?? {})) {
    symlinkSync(target, join(work, path));
    gitAt(work, ['add', path]);
  }
  const first = commitFiles(work, opts.start ?? START, 'start');
  const bare = join(root, name);
  execFileSync('git', ['clone', '-q', '--bare', work, bare]);
  gitAt(bare, ['config', 'uploadpack.allowFilter', 'true']);
  gitAt(bare, ['config', 'uploadpack.allowAnySHA1InWant', 'true']);
  const url = `${served.base}/${name}`;
  const { repoId } = await engine.clone({ url, limits: opts.limits });
  if (opts.checkout !== false) await engine.repo(repoId).checkout({ ref: 'HEAD' });
  const cli = join(root, `${name}-cli`);
  execFileSync('git', ['clone', '-q', bare, cli]);
  const fs = () => ctx.store.repoFs.open(repoId);
  return {
    name,
    url,
    bare,
    first,
    repoId,
    cli,
    fs,
    /** A commit on the remote's `branch` (main), as someone else pushes it. */
    pushed(
      files: Record<string, string | Uint8Array | null>,
      message: string,
      o: { time?: number; branch?: string } = {},
    ) {
      const branch = o.branch ?? 'main';
      const tip = commitFiles(work, files, message, o.time);
      gitAt(work, ['push', '-q', bare, `+HEAD:refs/heads/${branch}`]);
      return tip;
    },
    work: (args: string[]) => gitAt(work, args),
    /** Points the link `path` of the remote's next commit at `target`. */
    relink(path: string, target: string) {
      unlinkSync(join(work, path));
      symlinkSync(target, join(work, path));
      gitAt(work, ['add', path]);
    },
    /** The same commit made here (isomorphic-git, as the editor makes them) and in git's clone. */
    async local(files: Record<string, string | null>, message: string, time?: number): Promise<string> {
      const when = time ?? ++clock;
      const dir = '/';
      for (const [path, text] of Object.entries(files)) {
        if (text === null) await git.remove({ fs: fs(), dir, gitdir: GITDIR, filepath: path });
        else {
          await engine.repo(repoId).writeWorktreeFile({ path, content: text });
          await git.add({ fs: fs(), dir, gitdir: GITDIR, filepath: path });
        }
        if (text === null) await fs().promises.unlink(`/${path}`);
      }
      return this.commitStaged(message, files, when);
    },
    /**
     * Commits what the engine's index holds (isomorphic-git) and the same commit in git's clone, where
     * `files` are written first (null deletes).
     */
    async commitStaged(
      message: string,
      files: Record<string, string | null>,
      time?: number,
    ): Promise<string> {
      const when = time ?? ++clock;
      const who = { ...ME, timestamp: when, timezoneOffset: 0 };
      const ours = await git.commit({
        fs: fs(),
        dir: '/',
        gitdir: GITDIR,
        message,
        author: who,
        committer: who,
      });
      await fs().promises.flush();
      expect(commitFiles(cli, files, message, when)).toBe(ours);
      return ours;
    },
    /** `git pull` in git's clone, merging (git's default once asked), at `time`: its exit and output. */
    gitPull(time?: number): { ok: boolean; output: string } {
      try {
        return { ok: true, output: gitAt(cli, ['-c', 'pull.rebase=false', 'pull', '--no-edit'], time) };
      } catch (err) {
        const e = err as { stdout?: Buffer; stderr?: Buffer };
        return { ok: false, output: `${e.stdout ?? ''}${e.stderr ?? ''}` };
      }
    },
    /** The engine's repository, working tree and all, exported for git to read. */
    exported: () => exportCheckout(ctx, repoId, root, `${name}-export-${cases++}`),
    head: () => git.resolveRef({ fs: fs(), gitdir: GITDIR, ref: 'HEAD' }),
    pull: (o = {}, hooks = {}) => pull(ctx, repoId, o, hooks),
  };
}
type Remote = Awaited<ReturnType<typeof remote>>;

/** What `git` prints in `dir`. */
const inDir = (dir: string, args: string[]) => gitAt(dir, args);

/**
 * What the engine's repository and git's clone must agree on after both pulled: HEAD's commit (or, for a
 * merge made with another message, its tree, parents, author and committer), every ref, the working tree, the
 * index's entries, and git's status of each.
 */
async function expectAsGit(r: Remote, o: { sameCommit: boolean }): Promise<string> {
  const dir = await r.exported();
  if (o.sameCommit) expect(inDir(dir, ['rev-parse', 'HEAD'])).toBe(inDir(r.cli, ['rev-parse', 'HEAD']));
  const commitOf = (d: string) => inDir(d, ['log', '-1', '--format=%T %P%n%an <%ae> %ad%n%cn <%ce> %cd']);
  expect(commitOf(dir)).toBe(commitOf(r.cli));
  expect(inDir(dir, ['symbolic-ref', 'HEAD'])).toBe('refs/heads/main');
  const refs = async (d: string) =>
    (await showRefs(join(d, '.git'))).filter((l) => o.sameCommit || !l.endsWith(' refs/heads/main'));
  expect(await refs(dir)).toEqual(await refs(r.cli));
  expect(await readLightningWorktree(r.fs())).toEqual(await readDiskWorktree(r.cli));
  expect(inDir(dir, ['ls-files', '--stage'])).toBe(inDir(r.cli, ['ls-files', '--stage']));
  expect(inDir(dir, ['status', '--porcelain', '--untracked-files=all'])).toBe(
    inDir(r.cli, ['status', '--porcelain', '--untracked-files=all']),
  );
  inDir(dir, ['fsck', '--connectivity-only', '--no-progress']);
  return dir;
}

/** `git rev-list --count from..to` in git's clone. */
const countIn = (r: Remote, from: string, to: string) =>
  Number(inDir(r.cli, ['rev-list', '--count', `${from}..${to}`]));

/** The objects each fetch without a filter (the blob fetches) asked upload-pack for, since request `since`. */
const blobRequestsSince = (since: number) =>
  served.requests
    .slice(since)
    .filter((q) => q.what === 'git-upload-pack' && q.body.includes('want ') && !q.body.includes('filter'))
    .map((q) => [...q.body.matchAll(/want ([0-9a-f]{40})/g)].map((m) => m[1]).sort());

describe('pull against git pull of the same repository', () => {
  it('fast-forward: the same commit, refs, working tree and index; the commits that arrived counted', async () => {
    const r = await remote();
    r.pushed({ 'a.txt': lines(12, ' one') }, 'one');
    const tip = r.pushed({ 'dir/sub/c.txt': null, 'new/deep/f.txt': 'f\n', 'e.txt': 'e2\n' }, 'two');
    const seen: PullProgress[] = [];
    const result = await r.pull({}, { onProgress: (p: PullProgress) => seen.push(p) });
    expect(result).toMatchObject({
      status: 'fast-forward',
      branch: 'main',
      from: r.first,
      to: tip,
      newCommits: 2,
      conflicts: [],
    });
    expect(result.merging).toBeUndefined();
    expect(result.fetch.updated.map((u) => u.new)).toEqual([tip]);
    expect(result.checkout).toMatchObject({ filesWritten: 3, filesDeleted: 1 });
    // The fetch's progress reaches the caller; a fast-forward merges nothing.
    expect(seen.map((p) => p.phase)).toContain('connecting');
    expect(seen.some((p) => p.phase === 'merging')).toBe(false);
    expect(r.gitPull().output).toContain('Fast-forward');
    await expectAsGit(r, { sameCommit: true });
    expect(countIn(r, r.first, tip)).toBe(2);
  });

  it('up to date: the same commit; nothing fetched, moved or checked out', async () => {
    const r = await remote();
    const result = await r.pull();
    expect(result).toEqual({
      fetch: result.fetch,
      branch: 'main',
      status: 'up-to-date',
      from: r.first,
      to: r.first,
      newCommits: 0,
      conflicts: [],
      checkout: null,
    });
    expect(result.fetch.updated).toEqual([]);
    expect(r.gitPull().output).toContain('Already up to date');
    await expectAsGit(r, { sameCommit: true });
  });

  it('up to date with the local branch ahead: nothing changes, as git says "Already up to date"', async () => {
    const r = await remote();
    await r.local({ 'a.txt': lines(12, ' mine') }, 'mine');
    const ahead = await r.local({ 'dir/sub/new.txt': 'new\n' }, 'mine 2');
    const result = await r.pull();
    expect(result).toMatchObject({
      status: 'up-to-date',
      from: ahead,
      to: ahead,
      newCommits: 0,
      checkout: null,
    });
    expect(r.gitPull().output).toContain('Already up to date');
    await expectAsGit(r, { sameCommit: true });
  });

  it('merge: a commit with git’s tree, parents and identity; the commits that arrived; the working tree', async () => {
    const r = await remote();
    const ours = await r.local(
      { 'a.txt': lines(12).replace('line 2\n', 'line 2 ours\n'), 'ours.txt': 'o\n' },
      'ours',
    );
    r.pushed(
      { 'a.txt': lines(12).replace('line 11\n', 'line 11 theirs\n'), 'dir/sub/c.txt': 'c2\n' },
      'theirs',
    );
    const theirs = r.pushed({ 'dir/b.txt': null, 'dir/new.txt': 'n\n' }, 'theirs 2');
    const now = ++clock;
    vi.spyOn(Date, 'now').mockReturnValue(now * 1000 + 999);
    const progress: PullProgress[] = [];
    const result = await r.pull({ author: ME }, { onProgress: (p: PullProgress) => progress.push(p) });
    const seen = progress.map((p) => p.phase);
    expect(result).toMatchObject({
      status: 'merged',
      branch: 'main',
      from: ours,
      conflicts: [],
      newCommits: 3,
    });
    expect(result.merging).toBeUndefined();
    expect(seen).toContain('merging');
    expect(seen.indexOf('merging')).toBeLessThan(seen.lastIndexOf('writing-files'));
    // The blob fetches report too: the merge's three-way read (theirs of a.txt), then the checkout's (c.txt
    // and new.txt; the merged a.txt was written here).
    const blobTotals = progress
      .slice(seen.indexOf('merging'))
      .flatMap((p) => (p.phase === 'fetching-blobs' ? [p.totalObjects] : []));
    expect([...new Set(blobTotals)]).toEqual([1, 2]);
    expect(r.gitPull(now).ok).toBe(true);
    const dir = await expectAsGit(r, { sameCommit: false });
    expect(inDir(dir, ['rev-parse', 'HEAD'])).toBe(result.to);
    expect(inDir(dir, ['log', '-1', '--format=%P'])).toBe(`${ours} ${theirs}`);
    expect(inDir(dir, ['log', '-1', '--format=%B'])).toBe(`Merge branch 'main' of ${r.url} into main`);
    expect(countIn(r, ours, 'HEAD')).toBe(3);
    expect(result.checkout).toMatchObject({ filesWritten: 3, filesDeleted: 1 });
  });

  it('merge without an author given: EngineOptions’ mergeAuthor signs it', async () => {
    const r = await remote();
    await r.local({ 'e.txt': 'ours\n' }, 'ours');
    r.pushed({ 'dir/b.txt': 'theirs\n' }, 'theirs');
    const result = await r.pull();
    expect(result.status).toBe('merged');
    const dir = await r.exported();
    const { name, email } = ctx.settings.mergeAuthor;
    expect(inDir(dir, ['log', '-1', '--format=%an <%ae>%n%cn <%ce>'])).toBe(
      `${name} <${email}>\n${name} <${email}>`,
    );
  });

  it('merge: fetches first only the blobs of files both sides changed, deep in folders', async () => {
    const r = await remote();
    await r.local({ 'dir/sub/c.txt': lines(6, ' c').replace('line 1 c', 'line 1 c ours') }, 'ours');
    await r.local({ 'e.txt': 'only ours\n' }, 'ours 2');
    r.pushed(
      { 'dir/sub/c.txt': lines(6, ' c').replace('line 6 c', 'line 6 c theirs'), 'a.txt': 'theirs\n' },
      't',
    );
    const since = served.requests.length;
    const now = ++clock;
    vi.spyOn(Date, 'now').mockReturnValue(now * 1000);
    const result = await r.pull({ author: ME });
    expect(result.status).toBe('merged');
    expect(r.gitPull(now).ok).toBe(true);
    await expectAsGit(r, { sameCommit: false });
    // The base's and ours' versions are stored (the checkout wrote them): the merge asks for theirs alone, and
    // not for a.txt (only theirs changed it: the checkout after the merge fetches it).
    const [mergeBlobs, checkoutBlobs] = blobRequestsSince(since);
    expect(mergeBlobs).toEqual([inDir(r.cli, ['rev-parse', 'origin/main:dir/sub/c.txt'])]);
    expect(checkoutBlobs).toEqual([inDir(r.cli, ['rev-parse', 'origin/main:a.txt'])]);
  });
});

describe('pull refuses', () => {
  it('unrelated histories, as git does: the fetch kept, the branch and files untouched', async () => {
    const r = await remote();
    await r.local({ 'a.txt': 'mine\n' }, 'mine');
    r.work(['checkout', '-q', '--orphan', 'other']);
    r.work(['rm', '-rqf', '.']);
    const root2 = r.pushed({ 'other.txt': 'other\n' }, 'unrelated root');
    const before = await readLightningWorktree(r.fs());
    const err = await failure(r.pull());
    expect(err.code).toBe('UNRELATED_HISTORIES');
    expect(err.message).toBe(
      'main and origin/main share no history (or a shallow clone stops before it): fetch more of it, then pull again.',
    );
    const theirs = r.gitPull();
    expect(theirs.ok).toBe(false);
    expect(theirs.output).toContain('refusing to merge unrelated histories');
    await expectAsGit(r, { sameCommit: true });
    expect(await readLightningWorktree(r.fs())).toEqual(before);
    expect(inDir(r.cli, ['rev-parse', 'origin/main'])).toBe(root2);
  });

  it('a detached HEAD: nothing to pull into, nothing fetched', async () => {
    const r = await remote();
    await engine.repo(r.repoId).checkout({ ref: r.first });
    const since = served.requests.length;
    const err = await failure(r.pull());
    expect(err.code).toBe('DETACHED_HEAD');
    expect(err.message).toBe(
      'HEAD is not on a branch, so there is nothing to pull into. Switch to a branch first.',
    );
    expect(served.requests.length).toBe(since);
    inDir(r.cli, ['checkout', '-q', '--detach']);
    expect(r.gitPull().output).toContain('You are not currently on a branch');
  });

  it('a branch whose upstream the remote does not have', async () => {
    const r = await remote();
    const fs = r.fs();
    await git.branch({ fs, gitdir: GITDIR, ref: 'topic', checkout: true });
    const err = await failure(r.pull());
    expect(err.code).toBe('REF_NOT_FOUND');
    expect(err.message).toBe('The remote has no branch "topic" to pull into topic.');
  });
});

describe('pull follows branch.<name>.merge', () => {
  it('merges the upstream the config names, as git does', async () => {
    const r = await remote();
    const tip = r.pushed({ 'e.txt': 'feature\n' }, 'feature', { branch: 'feature' });
    const fs = r.fs();
    await git.branch({ fs, gitdir: GITDIR, ref: 'topic', checkout: true });
    await git.setConfig({ fs, gitdir: GITDIR, path: 'branch.topic.remote', value: 'origin' });
    await git.setConfig({ fs, gitdir: GITDIR, path: 'branch.topic.merge', value: 'refs/heads/feature' });
    const result = await r.pull();
    expect(result).toMatchObject({
      status: 'fast-forward',
      branch: 'topic',
      from: r.first,
      to: tip,
      newCommits: 1,
    });
    inDir(r.cli, ['checkout', '-q', '-b', 'topic']);
    inDir(r.cli, ['config', 'branch.topic.remote', 'origin']);
    inDir(r.cli, ['config', 'branch.topic.merge', 'refs/heads/feature']);
    expect(r.gitPull().output).toContain('Fast-forward');
    const dir = await r.exported();
    expect(inDir(dir, ['rev-parse', 'topic', 'main'])).toBe(inDir(r.cli, ['rev-parse', 'topic', 'main']));
    expect(await readLightningWorktree(r.fs())).toEqual(await readDiskWorktree(r.cli));
  });
});

/**
 * A clone on `topic`, a branch started at the remote's commit F1 (it adds `path` as `x0`) and never checked
 * out there: the blob of x.txt at F1 was never fetched, and F1 is the merge base of what both sides then
 * commit (`ours`, here and in git's clone; `theirs`, on the remote's feature branch, which topic follows).
 * isomorphic-git's merge reads the base's version of a file both sides changed, even where it then needs
 * neither side's: a missing base there failed the pull with NotFoundError.
 */
async function unfetchedBase(
  ours: Record<string, string>,
  theirs: (r: Remote) => string,
  path = 'x.txt',
): Promise<{ r: Remote; ours: string; theirs: string; base: string }> {
  const r = await remote();
  const base = r.pushed({ [path]: 'x0\n' }, 'F1', { branch: 'feature' });
  await engine.repo(r.repoId).fetch();
  const fs = r.fs();
  await git.branch({ fs, gitdir: GITDIR, ref: 'topic', object: base, checkout: true });
  await git.setConfig({ fs, gitdir: GITDIR, path: 'branch.topic.remote', value: 'origin' });
  await git.setConfig({ fs, gitdir: GITDIR, path: 'branch.topic.merge', value: 'refs/heads/feature' });
  inDir(r.cli, ['fetch', '-q']);
  inDir(r.cli, ['checkout', '-q', '-b', 'topic', base]);
  inDir(r.cli, ['config', 'branch.topic.remote', 'origin']);
  inDir(r.cli, ['config', 'branch.topic.merge', 'refs/heads/feature']);
  const oursOid = await r.local(ours, 'ours');
  return { r, ours: oursOid, theirs: theirs(r), base };
}

/** The merge both made on topic: its tree and parents, the working tree, the index, as git's. */
async function expectMergedAsGit(r: Remote, ours: string, theirs: string): Promise<void> {
  const dir = await r.exported();
  const commitOf = (d: string) => inDir(d, ['log', '-1', '--format=%T %P%n%an <%ae> %ad%n%cn <%ce> %cd']);
  expect(commitOf(dir)).toBe(commitOf(r.cli));
  expect(inDir(dir, ['log', '-1', '--format=%P'])).toBe(`${ours} ${theirs}`);
  expect(inDir(dir, ['symbolic-ref', 'HEAD'])).toBe('refs/heads/topic');
  expect(await readLightningWorktree(r.fs())).toEqual(await readDiskWorktree(r.cli));
  expect(inDir(dir, ['ls-files', '--stage'])).toBe(inDir(r.cli, ['ls-files', '--stage']));
  expect(inDir(dir, ['status', '--porcelain'])).toBe('');
}

describe('pull merging where the base version was never fetched', () => {
  it('both sides made the same change: merged as git merges it, the base blob fetched first', async () => {
    const { r, ours, theirs, base } = await unfetchedBase({ 'x.txt': 'same\n', 'e.txt': 'ours\n' }, (r) =>
      r.pushed({ 'x.txt': 'same\n', 'dir/b.txt': 'theirs\n' }, 'F2', { branch: 'feature' }),
    );
    const since = served.requests.length;
    const now = ++clock;
    vi.spyOn(Date, 'now').mockReturnValue(now * 1000);
    const result = await r.pull({ author: ME });
    expect(result).toMatchObject({ status: 'merged', branch: 'topic', from: ours, conflicts: [] });
    expect(r.gitPull(now).ok).toBe(true);
    await expectMergedAsGit(r, ours, theirs);
    // The merge asks for x.txt's base version alone: it reads neither side's, which are one blob (stored).
    const [mergeBlobs] = blobRequestsSince(since);
    expect(mergeBlobs).toEqual([inDir(r.cli, ['rev-parse', `${base}:x.txt`])]);
  });

  it('both sides made the same change in a folder, so both hold one tree there: the same, from inside it', async () => {
    const path = 'deep/er/x.txt';
    const { r, ours, theirs, base } = await unfetchedBase(
      { [path]: 'same\n' },
      (r) => r.pushed({ [path]: 'same\n', 'e.txt': 'theirs\n' }, 'F2', { branch: 'feature' }),
      path,
    );
    const since = served.requests.length;
    const now = ++clock;
    vi.spyOn(Date, 'now').mockReturnValue(now * 1000);
    expect(await r.pull({ author: ME })).toMatchObject({ status: 'merged', from: ours, conflicts: [] });
    expect(r.gitPull(now).ok).toBe(true);
    await expectMergedAsGit(r, ours, theirs);
    const [mergeBlobs] = blobRequestsSince(since);
    expect(mergeBlobs).toEqual([inDir(r.cli, ['rev-parse', `${base}:${path}`])]);
  });

  it('one side changed the text, the other only the mode: merged as git merges it', async () => {
    const { r, ours, theirs, base } = await unfetchedBase({ 'x.txt': 'x1\n' }, (r) => {
      r.work(['update-index', '--chmod=+x', 'x.txt']);
      return r.pushed({}, 'F2: x.txt executable', { branch: 'feature' });
    });
    const since = served.requests.length;
    const now = ++clock;
    vi.spyOn(Date, 'now').mockReturnValue(now * 1000);
    const result = await r.pull({ author: ME });
    expect(result).toMatchObject({ status: 'merged', branch: 'topic', from: ours, conflicts: [] });
    expect(r.gitPull(now).ok).toBe(true);
    await expectMergedAsGit(r, ours, theirs);
    expect(inDir(r.cli, ['ls-files', '--stage', 'x.txt'])).toMatch(/^100755 /);
    const [mergeBlobs] = blobRequestsSince(since);
    expect(mergeBlobs).toEqual([inDir(r.cli, ['rev-parse', `${base}:x.txt`])]);
  });
});

/** A clone whose commit and the remote's both change the first line of dir/sub/c.txt; the rest merges cleanly. */
async function conflicted() {
  const r = await remote();
  await r.local(
    { 'dir/sub/c.txt': lines(6, ' c').replace('line 1 c', 'line 1 ours'), 'e.txt': 'e ours\n' },
    'ours',
  );
  const ours = await r.local({ 'a.txt': lines(12).replace('line 1\n', 'line 1 ours\n') }, 'ours 2');
  const theirs = r.pushed(
    {
      'dir/sub/c.txt': lines(6, ' c').replace('line 1 c', 'line 1 theirs'),
      'a.txt': lines(12).replace('line 12\n', 'line 12 theirs\n'),
      'dir/sub/d.txt': null,
      'dir/new/f.txt': 'f\n',
    },
    'theirs',
  );
  return { r, ours, theirs };
}

describe('pull with conflicts', () => {
  it('stops as git does: MERGE_HEAD, stages 1-3, the clean part staged and written, markers in the file', async () => {
    const { r, ours, theirs } = await conflicted();
    const result = await r.pull();
    expect(result).toEqual({
      fetch: result.fetch,
      branch: 'main',
      status: 'conflict',
      merging: true,
      from: ours,
      to: ours,
      newCommits: 0,
      conflicts: ['dir/sub/c.txt'],
      checkout: null,
    });
    expect(result.fetch.updated.map((u) => u.new)).toEqual([theirs]);
    expect(r.gitPull().ok).toBe(false);
    const dir = await r.exported();
    for (const args of [
      ['ls-files', '--stage'],
      ['status', '--porcelain', '--untracked-files=all'],
      ['rev-parse', 'HEAD', 'MERGE_HEAD', 'ORIG_HEAD'],
      ['diff', '--cached', '--name-status'],
    ])
      expect(inDir(dir, args), args.join(' ')).toBe(inDir(r.cli, args));
    // Every file but the conflicted one is git's, byte for byte; that one has both sides between markers.
    const notConflicted = (w: { path: string }[]) => w.filter((e) => e.path !== 'dir/sub/c.txt');
    expect(notConflicted(await readLightningWorktree(r.fs()))).toEqual(
      notConflicted(await readDiskWorktree(r.cli)),
    );
    const marked = String(await r.fs().promises.readFile('/dir/sub/c.txt', 'utf8'));
    expect(marked).toMatch(/^<<<<<<< .*\nline 1 ours\n=======\nline 1 theirs\n>>>>>>> .*\nline 2 c\n/);
    expect(String(await r.fs().promises.readFile(`${GITDIR}/MERGE_MSG`, 'utf8'))).toBe(
      `Merge branch 'main' of ${r.url} into main\n`,
    );
  });

  it('two conflicted files are named in order; the blobs of what theirs changed are fetched before', async () => {
    const r = await remote();
    const ours = await r.local({ 'dir-e.txt': 'e ours\n', 'dir/b.txt': 'b ours\n' }, 'ours');
    r.pushed(
      { 'dir/b.txt': 'b theirs\n', 'dir-e.txt': 'e theirs\n', 'dir/sub/d.txt': 'd theirs\n' },
      'theirs',
    );
    const since = served.requests.length;
    const progress: PullProgress[] = [];
    const result = await r.pull({}, { onProgress: (p: PullProgress) => progress.push(p) });
    expect(result).toMatchObject({
      status: 'conflict',
      merging: true,
      conflicts: ['dir-e.txt', 'dir/b.txt'],
      to: ours,
    });
    // Both blob fetches report: the merge's (theirs of the two files), then the conflicted merge's (d.txt).
    const blobTotals = progress.flatMap((p) => (p.phase === 'fetching-blobs' ? [p.totalObjects] : []));
    expect([...new Set(blobTotals)]).toEqual([2, 1]);
    // The merge's three-way read, then the conflicted merge's: theirs of every file it changed.
    const at = (path: string) => inDir(r.cli, ['rev-parse', `origin/main:${path}`]);
    inDir(r.cli, ['fetch', '-q']);
    const asked = blobRequestsSince(since);
    expect(asked.flat().sort()).toEqual([at('dir/b.txt'), at('dir/sub/d.txt'), at('dir-e.txt')].sort());
    expect(r.gitPull().ok).toBe(false);
    const dir = await r.exported();
    expect(inDir(dir, ['ls-files', '--stage'])).toBe(inDir(r.cli, ['ls-files', '--stage']));
  });

  it('names conflicts, and status lists paths, in git’s order: bytes, where JS sorts names past U+FFFF first', async () => {
    // U+FF21 is EF BC A1 in UTF-8 and U+1F600 F0 9F 98 80: git puts the first first; JS's UTF-16 order (FF21
    // against D83D) the second.
    const [wide, emoji] = ['\u{ff21}.txt', '\u{1f600}.txt'];
    const r = await remote({ start: { ...START, [wide]: 'w\n', [emoji]: 's\n' } });
    await r.local({ [wide]: 'w ours\n', [emoji]: 's ours\n' }, 'ours');
    r.pushed({ [wide]: 'w theirs\n', [emoji]: 's theirs\n', 'e.txt': 'e theirs\n' }, 'theirs');
    const result = await r.pull();
    expect(r.gitPull().ok).toBe(false);
    const unmerged = inDir(r.cli, ['-c', 'core.quotePath=false', 'diff', '--name-only', '--diff-filter=U']);
    expect(unmerged.split('\n')).toEqual([wide, emoji]);
    expect(result).toMatchObject({ status: 'conflict', merging: true, conflicts: [wide, emoji] });
    const porcelain = inDir(r.cli, ['-c', 'core.quotePath=false', 'status', '--porcelain']);
    const gitOrder = porcelain.split('\n').map((line) => line.slice(3));
    const ours = (await engine.repo(r.repoId).status()).entries.map((e) => e.path);
    expect(ours).toEqual(gitOrder);
    // With a local change in the way nothing starts, and the files that would conflict are named as git names them.
    const again = await remote({ start: { ...START, [wide]: 'w\n', [emoji]: 's\n' } });
    await again.local({ [wide]: 'w ours\n', [emoji]: 's ours\n' }, 'ours');
    again.pushed({ [wide]: 'w theirs\n', [emoji]: 's theirs\n' }, 'theirs');
    await engine.repo(again.repoId).writeWorktreeFile({ path: 'e.txt', content: 'not committed\n' });
    expect(await again.pull()).toMatchObject({
      status: 'conflict',
      merging: false,
      conflicts: [wide, emoji],
    });
  });

  it('names conflicts in git’s order also where isomorphic-git’s merges of the files end in another order', async () => {
    // isomorphic-git lists a conflict as its file's merge ends, and those run at once: a large file's may end
    // last. Here its list comes reversed, for both merges a pull runs (the trial one and the conflicted one).
    const merge = git.merge;
    vi.spyOn(git, 'merge').mockImplementation(async (args) => {
      try {
        return await merge(args);
      } catch (err) {
        (err as { data?: { filepaths?: string[] } }).data?.filepaths?.reverse();
        throw err;
      }
    });
    const r = await remote();
    await r.local({ 'a.txt': 'a ours\n', 'dir-e.txt': 'e ours\n', 'dir/b.txt': 'b ours\n' }, 'ours');
    r.pushed({ 'a.txt': 'a theirs\n', 'dir-e.txt': 'e theirs\n', 'dir/b.txt': 'b theirs\n' }, 'theirs');
    const conflicts = ['a.txt', 'dir-e.txt', 'dir/b.txt'];
    await engine.repo(r.repoId).writeWorktreeFile({ path: 'e.txt', content: 'in the way\n' });
    expect(await r.pull()).toMatchObject({ status: 'conflict', merging: false, conflicts });
    await engine.repo(r.repoId).writeWorktreeFile({ path: 'e.txt', content: 'e\n' });
    expect(await r.pull()).toMatchObject({ status: 'conflict', merging: true, conflicts });
  });

  it('with local changes in the way, changes nothing and names the conflicting files', async () => {
    const { r, ours } = await conflicted();
    await engine.repo(r.repoId).writeWorktreeFile({ path: 'e.txt', content: 'not committed\n' });
    const before = await readLightningWorktree(r.fs());
    const result = await r.pull();
    expect(result).toMatchObject({
      status: 'conflict',
      merging: false,
      conflicts: ['dir/sub/c.txt'],
      to: ours,
    });
    expect(result.checkout).toBeNull();
    expect(await readLightningWorktree(r.fs())).toEqual(before);
    expect(await r.head()).toBe(ours);
    expect(
      await r
        .fs()
        .promises.stat(`${GITDIR}/MERGE_HEAD`)
        .catch(() => null),
    ).toBeNull();
  });
});

describe('after a conflicted pull', () => {
  it('the resolution commits as the merge git makes; refused before it is resolved', async () => {
    const { r, ours, theirs } = await conflicted();
    await r.pull();
    expect(r.gitPull().ok).toBe(false);
    const early = await failure(engine.repo(r.repoId).commit({ message: 'Merge', author: ME }));
    expect(early.code).toBe('UNRESOLVED_CONFLICTS');
    await engine.repo(r.repoId).writeWorktreeFile({ path: 'dir/sub/c.txt', content: 'both\n' });
    await engine.repo(r.repoId).stage({ paths: ['dir/sub/c.txt'] });
    const state = (await engine.repo(r.repoId).status()).merging;
    expect(state).toEqual({
      head: theirs,
      message: `Merge branch 'main' of ${r.url} into main\n`,
      conflicts: [],
    });
    await engine.repo(r.repoId).commit({ message: state!.message, author: ME });
    expect((await engine.repo(r.repoId).status()).merging).toBeNull();
    writeFileSync(join(r.cli, 'dir/sub/c.txt'), 'both\n');
    inDir(r.cli, ['add', 'dir/sub/c.txt']);
    inDir(r.cli, ['commit', '-q', '--no-edit']);
    const dir = await r.exported();
    const show = (d: string) => inDir(d, ['log', '-1', '--format=%T %P']);
    expect(show(dir)).toBe(show(r.cli));
    expect(inDir(dir, ['log', '-1', '--format=%P'])).toBe(`${ours} ${theirs}`);
    expect(await readLightningWorktree(r.fs())).toEqual(await readDiskWorktree(r.cli));
    expect(inDir(dir, ['status', '--porcelain'])).toBe('');
    expect(inDir(dir, ['ls-files', '--stage'])).toBe(inDir(r.cli, ['ls-files', '--stage']));
  });

  it('aborting it is git merge --abort: every file, the index and HEAD as before the pull', async () => {
    const { r, ours, theirs } = await conflicted();
    const before = await readLightningWorktree(r.fs());
    await r.pull();
    expect(r.gitPull().ok).toBe(false);
    await engine.repo(r.repoId).writeWorktreeFile({ path: 'dir/sub/c.txt', content: 'half resolved\n' });
    // Without MERGE_MSG the merge says what git's merge of the commit itself (`git merge <id>`) says.
    await r.fs().promises.unlink(`${GITDIR}/MERGE_MSG`);
    const { merging } = await engine.repo(r.repoId).status();
    inDir(r.cli, ['merge', '--abort']);
    expect(() => inDir(r.cli, ['merge', theirs])).toThrow();
    const gitsMessage = readFileSync(join(r.cli, '.git', 'MERGE_MSG'), 'utf8').split('\n')[0];
    expect(merging).toEqual({ head: theirs, message: `${gitsMessage}\n`, conflicts: ['dir/sub/c.txt'] });
    await engine.repo(r.repoId).abortMerge();
    inDir(r.cli, ['merge', '--abort']);
    expect(await readLightningWorktree(r.fs())).toEqual(before);
    expect(await readLightningWorktree(r.fs())).toEqual(await readDiskWorktree(r.cli));
    expect((await engine.repo(r.repoId).status()).merging).toBeNull();
    const dir = await r.exported();
    expect(inDir(dir, ['rev-parse', 'HEAD'])).toBe(ours);
    expect(inDir(dir, ['ls-files', '--stage'])).toBe(inDir(r.cli, ['ls-files', '--stage']));
    expect(inDir(dir, ['status', '--porcelain'])).toBe('');
    expect((await failure(engine.repo(r.repoId).abortMerge())).code).toBe('NO_MERGE');
  });
});

describe('a conflicted pull with links and submodules', () => {
  it('takes their link as git does and fetches no blob for their submodule; abort puts the link back', async () => {
    const r = await remote({ links: { link: 'a.txt' } });
    const ours = await r.local(
      { 'dir/sub/c.txt': lines(6, ' c').replace('line 1 c', 'line 1 ours') },
      'ours',
    );
    const before = await readLightningWorktree(r.fs());
    expect(before).toContainEqual({ path: 'link', kind: 'symlink', target: 'a.txt' });
    // Theirs points the link elsewhere and adds a submodule (a commit of another repository) beside the conflict.
    r.relink('link', 'e.txt');
    const module = 'e'.repeat(40);
    r.work(['update-index', '--add', '--cacheinfo', `160000,${module},mod`]);
    const theirs = r.pushed(
      { 'dir/sub/c.txt': lines(6, ' c').replace('line 1 c', 'line 1 theirs') },
      'theirs',
    );
    const since = served.requests.length;
    const result = await r.pull();
    expect(result).toMatchObject({
      status: 'conflict',
      merging: true,
      conflicts: ['dir/sub/c.txt'],
      to: ours,
    });
    expect(blobRequestsSince(since).flat()).not.toContain(module);
    expect(r.gitPull().ok).toBe(false);
    expect(inDir(r.cli, ['rev-parse', 'MERGE_HEAD'])).toBe(theirs);
    // Their gitlink is staged and checked out as an empty folder, as git does.
    const dir = await r.exported();
    expect(inDir(dir, ['ls-files', '--stage'])).toBe(inDir(r.cli, ['ls-files', '--stage']));
    expect(inDir(dir, ['ls-files', '--stage', 'mod'])).toBe(`160000 ${module} 0\tmod`);
    const merging = await readLightningWorktree(r.fs());
    expect(merging).toContainEqual({ path: 'link', kind: 'symlink', target: 'e.txt' });
    expect(merging).toContainEqual({ path: 'mod', kind: 'dir' });
    expect((await readDiskWorktree(r.cli)).filter((e) => e.path === 'mod')).toEqual([
      { path: 'mod', kind: 'dir' },
    ]);
    await engine.repo(r.repoId).abortMerge();
    inDir(r.cli, ['merge', '--abort']);
    expect(await readLightningWorktree(r.fs())).toEqual(before);
    expect(await readLightningWorktree(r.fs())).toEqual(await readDiskWorktree(r.cli));
  });
});

describe('a conflicted pull that removes a submodule', () => {
  it('unstages it and removes its empty folder as git does; abort brings both back', async () => {
    const r = await remote();
    const module = 'f'.repeat(40);
    r.work(['update-index', '--add', '--cacheinfo', `160000,${module},lead11-mod`]);
    r.pushed({ 'e.txt': 'e\n' }, 'a submodule');
    expect((await r.pull()).status).toBe('fast-forward');
    expect(r.gitPull().ok).toBe(true);
    const ours = await r.local(
      { 'dir/sub/c.txt': lines(6, ' c').replace('line 1 c', 'line 1 ours') },
      'ours',
    );
    const before = await readLightningWorktree(r.fs());
    expect(before).toContainEqual({ path: 'lead11-mod', kind: 'dir' });
    r.work(['rm', '-q', '--cached', 'lead11-mod']);
    r.pushed({ 'dir/sub/c.txt': lines(6, ' c').replace('line 1 c', 'line 1 theirs') }, 'theirs');
    expect(await r.pull()).toMatchObject({ status: 'conflict', merging: true, to: ours });
    expect(r.gitPull().ok).toBe(false);
    const dir = await r.exported();
    expect(inDir(dir, ['ls-files', '--stage'])).toBe(inDir(r.cli, ['ls-files', '--stage']));
    const gone = (w: { path: string }[]) => w.filter((e) => e.path === 'lead11-mod');
    expect(gone(await readLightningWorktree(r.fs()))).toEqual(gone(await readDiskWorktree(r.cli)));
    expect(gone(await readDiskWorktree(r.cli))).toEqual([]);
    await engine.repo(r.repoId).abortMerge();
    inDir(r.cli, ['merge', '--abort']);
    expect(await readLightningWorktree(r.fs())).toEqual(before);
    expect(await readLightningWorktree(r.fs())).toEqual(await readDiskWorktree(r.cli));
    const after = await r.exported();
    expect(inDir(after, ['ls-files', '--stage'])).toBe(inDir(r.cli, ['ls-files', '--stage']));
  });
});

describe('a conflicted pull of a tree too deep', () => {
  it('refuses their folder past maxTreeDepth (HOSTILE_TREE, named) before the conflicted merge writes', async () => {
    const r = await remote({ limits: { maxTreeDepth: 3 } });
    const ours = await r.local(
      { 'dir/sub/c.txt': lines(6, ' c').replace('line 1 c', 'line 1 ours') },
      'ours',
    );
    // Only theirs has deep/: the merge's three-way read does not walk it, the conflicted merge's does.
    r.pushed(
      { 'dir/sub/c.txt': lines(6, ' c').replace('line 1 c', 'line 1 theirs'), 'deep/a/b/c/f.txt': 'f\n' },
      'theirs',
    );
    const before = await readLightningWorktree(r.fs());
    const err = await failure(r.pull());
    expect(err).toMatchObject({ code: 'HOSTILE_TREE', path: 'deep/a/b/c', check: 'TREE_TOO_DEEP' });
    expect(await r.head()).toBe(ours);
    expect(await readLightningWorktree(r.fs())).toEqual(before);
    expect(await engine.repo(r.repoId).status()).toMatchObject({ merging: null });
  });
});

describe('pull stopped mid-way', () => {
  it('cancelled while merging: ABORTED, the branch, files and index as before', async () => {
    const r = await remote();
    const ours = await r.local({ 'e.txt': 'ours\n' }, 'ours');
    r.pushed({ 'a.txt': lines(12, ' theirs'), 'dir/b.txt': 'b2\n' }, 'theirs');
    const before = await readLightningWorktree(r.fs());
    const stop = new AbortController();
    const err = await failure(
      r.pull(
        {},
        { signal: stop.signal, onProgress: (p: PullProgress) => p.phase === 'merging' && stop.abort() },
      ),
    );
    expect(err.code).toBe('ABORTED');
    expect(await r.head()).toBe(ours);
    expect(await readLightningWorktree(r.fs())).toEqual(before);
    const dir = await r.exported();
    expect(inDir(dir, ['status', '--porcelain'])).toBe('');
    // Pulled again, it merges.
    expect((await r.pull()).status).toBe('merged');
  });

  it('cancelled as the conflicted merge’s blobs arrive: ABORTED, no merge left in progress', async () => {
    const { r, ours } = await conflicted();
    const before = await readLightningWorktree(r.fs());
    const stop = new AbortController();
    let fetches = 0;
    // The merge's fetch (theirs of c.txt and a.txt), then the conflicted merge's (dir/new/f.txt): cancelled
    // as the last of the second arrives, just before the conflicted merge would write.
    const onProgress = (p: PullProgress) => {
      if (p.phase !== 'fetching-blobs' || p.objects !== p.totalObjects) return;
      if (++fetches === 2) stop.abort();
    };
    const err = await failure(r.pull({}, { signal: stop.signal, onProgress }));
    expect(err.code).toBe('ABORTED');
    expect(fetches).toBe(2);
    expect(await r.head()).toBe(ours);
    expect(await readLightningWorktree(r.fs())).toEqual(before);
    expect(await engine.repo(r.repoId).status()).toMatchObject({ merging: null });
  });

  it('cancelled as its fetch commits: ABORTED, the fetch kept, the branch not pulled', async () => {
    const r = await remote();
    const other = r.pushed({ 'e.txt': 'other\n' }, 'other', { branch: 'other' });
    const stop = new AbortController();
    ctx.store.crash.setHook((point) => {
      if (point === 'fetch:files-committed') stop.abort();
    });
    const err = await failure(r.pull({}, { signal: stop.signal })).finally(() =>
      ctx.store.crash.setHook(undefined),
    );
    expect(err.code).toBe('ABORTED');
    const refs = await git.listBranches({ fs: r.fs(), gitdir: GITDIR, remote: 'origin' });
    expect(refs).toContain('other');
    expect(await git.resolveRef({ fs: r.fs(), gitdir: GITDIR, ref: 'refs/remotes/origin/other' })).toBe(
      other,
    );
    expect(await r.head()).toBe(r.first);
  });

  it('a crash after the merge commit is written: nothing names it, the branch and files have not moved', async () => {
    const r = await remote();
    const ours = await r.local({ 'e.txt': 'ours\n' }, 'ours');
    r.pushed({ 'dir/b.txt': 'b2\n' }, 'theirs');
    const before = await readLightningWorktree(r.fs());
    await crashAt(ctx, 'pull:merge-committed', () => r.pull());
    ctx.repos.forget(r.repoId);
    expect(await r.head()).toBe(ours);
    expect(await readLightningWorktree(r.fs())).toEqual(before);
    const result = await r.pull();
    expect(result.status).toBe('merged');
    expect(await r.head()).toBe(result.to);
  });
});

/** Both pull, at one time: the engine's merge is git's (expectAsGit). */
async function expectMergesAsGit(r: Remote): Promise<void> {
  const now = ++clock;
  vi.spyOn(Date, 'now').mockReturnValue(now * 1000);
  expect((await r.pull({ author: ME })).status).toBe('merged');
  expect(r.gitPull(now).ok).toBe(true);
  await expectAsGit(r, { sameCommit: false });
}

/** Both pull and stop on `conflicts`: the engine's index holds git's stages. */
async function expectConflictsAsGit(r: Remote, conflicts: string[]): Promise<void> {
  expect(await r.pull()).toMatchObject({ status: 'conflict', merging: true, conflicts });
  expect(r.gitPull().ok).toBe(false);
  const dir = await r.exported();
  expect(inDir(dir, ['ls-files', '--stage'])).toBe(inDir(r.cli, ['ls-files', '--stage']));
}

describe('what a merge fetches first, and what it leaves to the checkout', () => {
  it('a file only we changed: its base version is not fetched (the merge takes ours whole)', async () => {
    const { r, ours, theirs } = await unfetchedBase({ 'x.txt': 'x ours\n' }, (r) =>
      r.pushed({ 'e.txt': 'e theirs\n' }, 'F2', { branch: 'feature' }),
    );
    const since = served.requests.length;
    const now = ++clock;
    vi.spyOn(Date, 'now').mockReturnValue(now * 1000);
    expect(await r.pull({ author: ME })).toMatchObject({ status: 'merged', from: ours });
    expect(r.gitPull(now).ok).toBe(true);
    await expectMergedAsGit(r, ours, theirs);
    // One request, the checkout's, for theirs of e.txt: x0 (x.txt's base version) is read by neither.
    expect(blobRequestsSince(since)).toEqual([[inDir(r.cli, ['rev-parse', `${theirs}:e.txt`])]]);
  });

  it('both sides add a folder of one name, each with its own files: merged as git merges it', async () => {
    const r = await remote();
    await r.local({ 'new/ours.txt': 'o\n' }, 'ours');
    r.pushed({ 'new/theirs.txt': 't\n' }, 'theirs');
    await expectMergesAsGit(r);
  });

  it('both add one file with different text: a conflict with no base, stages 2 and 3 as git’s', async () => {
    const r = await remote();
    await r.local({ 'new.txt': 'ours\n' }, 'ours');
    r.pushed({ 'new.txt': 'theirs\n' }, 'theirs');
    await expectConflictsAsGit(r, ['new.txt']);
  });

  it('we change a file of a folder they delete whole: a conflict, as git’s', async () => {
    const r = await remote();
    await r.local({ 'dir/sub/c.txt': 'c ours\n' }, 'ours');
    r.pushed({ 'dir/sub/c.txt': null, 'dir/sub/d.txt': null }, 'theirs');
    await expectConflictsAsGit(r, ['dir/sub/c.txt']);
  });
});

describe('pull merges what isomorphic-git can, as git does: no refusal', () => {
  it('they make a file of a folder we left as it was', async () => {
    const r = await remote();
    await r.local({ 'e.txt': 'e ours\n' }, 'ours');
    r.pushed({ 'dir/b.txt': null, 'dir/sub/c.txt': null, 'dir/sub/d.txt': null, dir: 'a file\n' }, 'theirs');
    await expectMergesAsGit(r);
  });

  it('both delete one file', async () => {
    const r = await remote();
    await r.local({ 'dir/b.txt': null, 'e.txt': 'e ours\n' }, 'ours');
    r.pushed({ 'dir/b.txt': null, 'a.txt': 'theirs\n' }, 'theirs');
    await expectMergesAsGit(r);
  });

  it('we delete a file they change: a conflict, stages 1 and 3 as git’s', async () => {
    const r = await remote();
    await r.local({ 'e.txt': null }, 'ours');
    r.pushed({ 'e.txt': 'e theirs\n' }, 'theirs');
    await expectConflictsAsGit(r, ['e.txt']);
  });
});

/** Writes `text` to `path` of the remote's next commit (and stages it). */
function bytesOfPath(r: Remote, path: string, text: Uint8Array | string): void {
  writeFileSync(join(`${r.bare}-work`, path), text);
  r.work(['add', path]);
}

/**
 * A clone never checked out, its branch `topic` at `mine`'s commit (x.txt changed by `ours` from F1's x0),
 * merging `feature` (F1, then `theirs`): git's clone the same. No blob of x.txt is stored before the pull.
 */
async function neverCheckedOut(
  ours: (r: Remote) => void,
  theirs: (r: Remote) => void,
  o: { base?: Record<string, string | Uint8Array>; limits?: { maxTreeDepth: number } } = {},
) {
  const r = await remote({ checkout: false, limits: o.limits });
  const base = r.pushed(o.base ?? { 'x.txt': 'x0\n' }, 'F1', { branch: 'feature' });
  ours(r);
  const oursOid = r.pushed({}, 'ours', { branch: 'mine' });
  r.work(['reset', '-q', '--hard', base]);
  theirs(r);
  const theirsOid = r.pushed({}, 'theirs', { branch: 'feature' });
  await engine.repo(r.repoId).fetch();
  const fs = r.fs();
  await git.writeRef({ fs, gitdir: GITDIR, ref: 'refs/heads/topic', value: oursOid });
  await git.writeRef({
    fs,
    gitdir: GITDIR,
    ref: 'HEAD',
    value: 'refs/heads/topic',
    symbolic: true,
    force: true,
  });
  await git.setConfig({ fs, gitdir: GITDIR, path: 'branch.topic.remote', value: 'origin' });
  await git.setConfig({ fs, gitdir: GITDIR, path: 'branch.topic.merge', value: 'refs/heads/feature' });
  inDir(r.cli, ['fetch', '-q']);
  inDir(r.cli, ['checkout', '-q', '-b', 'topic', 'origin/mine']);
  inDir(r.cli, ['config', 'branch.topic.merge', 'refs/heads/feature']);
  return { r, base, ours: oursOid, theirs: theirsOid };
}

describe('what a merge fetches first, where no version of the file is stored', () => {
  const text = (label: string) => (r: Remote) => {
    writeFileSync(join(`${r.bare}-work`, 'x.txt'), label);
    r.work(['add', 'x.txt']);
  };
  const executable = (r: Remote) => r.work(['update-index', '--chmod=+x', 'x.txt']);

  it.each([
    [
      'we changed the mode alone, they the text: the base alone (their text is what the merge takes)',
      executable,
      text('x1\n'),
    ],
    [
      'we changed the text, they the mode alone: the base alone (our text is what the merge takes)',
      text('x1\n'),
      executable,
    ],
    ['both made the same change: the base alone (either side is the merge)', text('same\n'), text('same\n')],
  ])('%s', async (_, ours, theirs) => {
    const { r, base, ours: oursOid, theirs: theirsOid } = await neverCheckedOut(ours, theirs);
    const since = served.requests.length;
    const now = ++clock;
    vi.spyOn(Date, 'now').mockReturnValue(now * 1000);
    expect(await r.pull({ author: ME })).toMatchObject({ status: 'merged', from: oursOid, conflicts: [] });
    expect(r.gitPull(now).ok).toBe(true);
    await expectMergedAsGit(r, oursOid, theirsOid);
    // The merge reads the base's text alone; the merged x.txt is fetched by the checkout after it.
    const [mergeBlobs] = blobRequestsSince(since);
    expect(mergeBlobs).toEqual([inDir(r.cli, ['rev-parse', `${base}:x.txt`])]);
  });

  it('both make a file of one folder, with different texts: its texts fetched, a conflict as git’s', async () => {
    const folderToFile = (label: string) => (r: Remote) => {
      r.work(['rm', '-q', '-r', 'p']);
      bytesOfPath(r, 'p', `${label}\n`);
    };
    const { r } = await neverCheckedOut(folderToFile('ours'), folderToFile('theirs'), {
      base: { 'p/a.txt': 'a\n', 'p/b.txt': 'b\n' },
    });
    await expectConflictsAsGit(r, ['p']);
  });

  it('a folder they kept as the base’s is not walked: one too deep inside it, which we deleted, is never read', async () => {
    // Past maxTreeDepth (3) in the base and theirs only: walking keep/ would refuse it (HOSTILE_TREE).
    const { r, ours, theirs } = await neverCheckedOut(
      (r) => {
        r.work(['rm', '-q', '-r', 'keep/deep']);
        commitFiles(`${r.bare}-work`, { 'keep/o.txt': 'o\n' }, 'ours, before the push');
      },
      (r) => commitFiles(`${r.bare}-work`, { 'e.txt': 'e theirs\n' }, 'theirs, before the push'),
      { base: { 'keep/k.txt': 'k\n', 'keep/deep/a/b/c/f.txt': 'f\n' }, limits: { maxTreeDepth: 3 } },
    );
    const now = ++clock;
    vi.spyOn(Date, 'now').mockReturnValue(now * 1000);
    expect(await r.pull({ author: ME })).toMatchObject({ status: 'merged', from: ours, conflicts: [] });
    expect(r.gitPull(now).ok).toBe(true);
    await expectMergedAsGit(r, ours, theirs);
  });
});

/**
 * Pulls `r` (its fetch made first, so that the pull's own changes nothing) expecting MERGE_NOT_SUPPORTED for
 * `heads` naming `paths` and `why`: the git directory and the working tree as they were, blobs fetched only
 * where the refusal needed their bytes (`blobsRead`); git's own pull of the same stops on a conflict, or
 * merges. Returns what git's pull printed.
 */
async function expectMergeRefused(
  r: Remote,
  o: { heads: string; paths: string; why: string; gits: 'conflict' | 'merged'; blobsRead: boolean },
): Promise<string> {
  await engine.repo(r.repoId).fetch();
  const before = await settledGitDir(ctx, r.repoId);
  const files = await readLightningWorktree(r.fs());
  const since = served.requests.length;
  const err = await failure(r.pull());
  expect(err).toBeInstanceOf(OperationError);
  expect(err.code).toBe('MERGE_NOT_SUPPORTED');
  expect(err.message).toBe(
    `${o.heads} both changed ${o.paths} in a way Blobless cannot merge (${o.why}): merge them with git (git pull), push the merge, then pull again.`,
  );
  expect(blobRequestsSince(since).length > 0).toBe(o.blobsRead);
  // Blobs fetched to read them are stored (a promisor pack); nothing else changed.
  const kept = (s: Record<string, unknown>) =>
    Object.fromEntries(
      Object.entries(s).filter(([p]) => !o.blobsRead || !p.startsWith('/.git/objects/pack/')),
    );
  expect(kept(await snapshotGitDir(ctx, r.repoId))).toEqual(kept(before));
  expect(await readLightningWorktree(r.fs())).toEqual(files);
  const git = r.gitPull();
  expect(git.ok, git.output).toBe(o.gits === 'merged');
  if (o.gits === 'conflict') expect(git.output).toContain('CONFLICT');
  return git.output;
}

describe('pull refuses a merge isomorphic-git cannot make, where git merges or reports a conflict', () => {
  /** A refusal of the shape of what both changed on main: nothing fetched. */
  const expectRefused = (r: Remote, paths: string, gits: 'conflict' | 'merged') =>
    expectMergeRefused(r, {
      heads: 'main and origin/main',
      paths,
      why: 'a file on one side where the other has a folder, or a submodule both changed',
      gits,
      blobsRead: false,
    });

  it('a file on our side where theirs adds a folder of that name, here and in folders both add', async () => {
    const r = await remote();
    await r.local({ thing: 'a file\n', 'p/thing': 'p\n', 'q/thing': 'q\n' }, 'ours');
    r.pushed({ 'thing/x.txt': 'x\n', 'p/thing/x.txt': 'x\n', 'q/thing/x.txt': 'x\n' }, 'theirs');
    // In git's order, whatever order the walk met them in.
    await expectRefused(r, 'p/thing, q/thing, thing', 'conflict');
  });

  it('they make a folder of a file we changed', async () => {
    const r = await remote();
    await r.local({ 'e.txt': 'e ours\n' }, 'ours');
    r.pushed({ 'e.txt': null, 'e.txt/f.txt': 'f\n' }, 'theirs');
    await expectRefused(r, 'e.txt', 'conflict');
  });

  it('we make a file of a folder they deleted', async () => {
    const r = await remote();
    await r.local({ 'dir/sub/c.txt': null, 'dir/sub/d.txt': null }, 'ours');
    await r.fs().promises.rmdir('/dir/sub');
    await r.local({ 'dir/sub': 'a file\n' }, 'ours 2');
    r.pushed({ 'dir/sub/c.txt': null, 'dir/sub/d.txt': null, 'e.txt': 'e theirs\n' }, 'theirs');
    await expectRefused(r, 'dir/sub', 'merged');
  });

  it('they make a file of a folder we deleted', async () => {
    const r = await remote();
    await r.local({ 'dir/sub/c.txt': null, 'dir/sub/d.txt': null }, 'ours');
    r.pushed({ 'dir/sub/c.txt': null, 'dir/sub/d.txt': null, 'dir/sub': 'a file\n' }, 'theirs');
    await expectRefused(r, 'dir/sub', 'merged');
  });

  it('we make a folder of a file they changed', async () => {
    const r = await remote();
    await r.local({ 'e.txt': null }, 'ours');
    await r.local({ 'e.txt/f.txt': 'f\n' }, 'ours 2');
    r.pushed({ 'e.txt': 'e theirs\n' }, 'theirs');
    await expectRefused(r, 'e.txt', 'conflict');
  });

  it('a submodule both sides delete (isomorphic-git takes a deletion by both of files and folders only)', async () => {
    const r = await remote();
    r.work(['update-index', '--add', '--cacheinfo', `160000,${'a'.repeat(40)},mod`]);
    r.pushed({}, 'a submodule');
    expect((await r.pull()).status).toBe('fast-forward');
    expect(r.gitPull().ok).toBe(true);
    const fs = r.fs();
    await git.remove({ fs, dir: '/', gitdir: GITDIR, filepath: 'mod' });
    await fs.promises.rmdir('/mod');
    await r.commitStaged('ours', { mod: null });
    r.work(['update-index', '--force-remove', 'mod']);
    r.pushed({ 'e.txt': 'e theirs\n' }, 'theirs');
    await expectRefused(r, 'mod', 'merged');
  });

  it('deep in folders: we delete a folder, they make one of its files a folder (git merges it)', async () => {
    const r = await remote();
    await r.local({ 'dir/sub/c.txt': null, 'dir/sub/d.txt': null }, 'ours');
    r.pushed({ 'dir/sub/d.txt': null, 'dir/sub/d.txt/y.txt': 'y\n', 'e.txt': 'e theirs\n' }, 'theirs');
    await expectRefused(r, 'dir/sub/d.txt', 'merged');
  });

  it.each([
    [7, 'm1, m2, m3, m4, m5 and 2 more'],
    [5, 'm1, m2, m3, m4, m5'],
  ])(
    'submodules both sides added, at different commits (%i: the list is cut at five)',
    async (count, named) => {
      const r = await remote();
      const fs = r.fs();
      const names = ['m1', 'm2', 'm3', 'm4', 'm5', 'm6', 'm7'].slice(0, count);
      for (const name of names) {
        await git.updateIndex({
          fs,
          dir: '/',
          gitdir: GITDIR,
          filepath: name,
          oid: 'a'.repeat(40),
          mode: 0o160000,
          add: true,
        });
        inDir(r.cli, ['update-index', '--add', '--cacheinfo', `160000,${'a'.repeat(40)},${name}`]);
      }
      await r.commitStaged('ours', {});
      for (const name of names)
        r.work(['update-index', '--add', '--cacheinfo', `160000,${'b'.repeat(40)},${name}`]);
      r.pushed({}, 'theirs');
      await expectRefused(r, named, 'conflict');
    },
  );
});

describe('pull where both changed a file that isomorphic-git’s text merge would damage', () => {
  /** Writes `bytes` to the remote's next x.txt (and stages it). */
  const bytesOf = (bytes: Uint8Array | string) => (r: Remote) => bytesOfPath(r, 'x.txt', bytes);
  /** Makes the remote's next x.txt a link to `target`. */
  const linkTo = (target: string) => (r: Remote) => {
    unlinkSync(join(`${r.bare}-work`, 'x.txt'));
    symlinkSync(target, join(`${r.bare}-work`, 'x.txt'));
    r.work(['add', 'x.txt']);
  };
  /** Twelve lines, line 6 holding `odd`; `first` and `last` change lines 1 and 12 (git merges both). */
  const text = (odd: string, first = 'line 1', last = 'line 12') =>
    Buffer.from(
      `${first}\n${lines(12).split('\n').slice(1, 11).join('\n').replace('line 6', `li${odd}ne 6`)}\n${last}\n`,
      'latin1',
    );

  /** A refusal of x.txt on topic, for `why`. */
  const expectRefused = (r: Remote, why: string, o: { gits: 'conflict' | 'merged'; blobsRead: boolean }) =>
    expectMergeRefused(r, { heads: 'topic and origin/feature', paths: 'x.txt', why, ...o });

  it('binary on both sides, changed where a text merge would see no clash: refused (git stops, “Cannot merge binary files”)', async () => {
    const { r } = await neverCheckedOut(
      bytesOf(text('\0', 'line 1 ours')),
      bytesOf(text('\0', 'line 1', 'line 12 theirs')),
      { base: { 'x.txt': text('\0') } },
    );
    const gits = await expectRefused(r, 'binary content', { gits: 'conflict', blobsRead: true });
    expect(gits).toContain('Cannot merge binary files');
  });

  it('text that is not UTF-8, changed on different lines: refused (git merges the bytes)', async () => {
    const { r } = await neverCheckedOut(
      bytesOf(text('\xe9', 'line 1 ours')),
      bytesOf(text('\xe9', 'line 1', 'line 12 theirs')),
      { base: { 'x.txt': text('\xe9') } },
    );
    await expectRefused(r, 'text that is not UTF-8', { gits: 'merged', blobsRead: true });
  });

  it.each([
    ['a carriage return alone', '\r'],
    ['U+2028', '\u2028'],
    ['U+2029', '\u2029'],
  ])('a line holding %s, the others changed on each side: refused (git merges the bytes)', async (_, odd) => {
    const utf8 = (first: string, last: string) =>
      Buffer.from(
        text(odd === '\r' ? odd : '@', first, last)
          .toString('latin1')
          .replace('@', odd),
        'utf8',
      );
    const { r } = await neverCheckedOut(
      bytesOf(utf8('line 1 ours', 'line 12')),
      bytesOf(utf8('line 1', 'line 12 theirs')),
      { base: { 'x.txt': utf8('line 1', 'line 12') } },
    );
    await expectRefused(r, 'lines ended by a carriage return alone, U+2028 or U+2029', {
      gits: 'merged',
      blobsRead: true,
    });
  });

  it('two binary files, one in a folder: named in git’s order, not the walk’s (files before folders)', async () => {
    const binary = (label: string) => (r: Remote) => {
      bytesOfPath(r, 'a/x.bin', text('\0', label));
      bytesOfPath(r, 'z.bin', text('\0', label));
    };
    const { r } = await neverCheckedOut(binary('ours'), binary('theirs'), {
      base: { 'a/x.bin': text('\0'), 'z.bin': text('\0') },
    });
    await expectMergeRefused(r, {
      heads: 'topic and origin/feature',
      paths: 'a/x.bin, z.bin',
      why: 'binary content',
      gits: 'conflict',
      blobsRead: true,
    });
  });

  it('both make it the same link: merged as git merges it (one side’s link, no text merge)', async () => {
    const { r, ours, theirs } = await neverCheckedOut(linkTo('same-target'), linkTo('same-target'));
    const now = ++clock;
    vi.spyOn(Date, 'now').mockReturnValue(now * 1000);
    expect(await r.pull({ author: ME })).toMatchObject({ status: 'merged', from: ours });
    expect(r.gitPull(now).ok).toBe(true);
    await expectMergedAsGit(r, ours, theirs);
  });

  it.each([
    ['both make it a link, to different targets', linkTo('ours-target'), linkTo('theirs-target')],
    ['we make it a link, they change its text', linkTo('ours-target'), bytesOf('x theirs\n')],
    // One blob on both sides: a link to "abc" against a file holding "abc".
    ['we make it a link, they a file of the same bytes', linkTo('abc'), bytesOf('abc')],
  ])('%s: refused before any blob is fetched (git stops on a conflict)', async (_, ours, theirs) => {
    const { r } = await neverCheckedOut(ours, theirs);
    await expectRefused(r, 'a symbolic link on one side', { gits: 'conflict', blobsRead: false });
  });
});

describe('a conflicted pull keeps each file’s mode, as git does', () => {
  it('stages 1-3 of an executable both changed, 1 and 3 of one we deleted; clean merges’ modes; abort restores', async () => {
    const sh = {
      'x.sh': 'x\n',
      'y.sh': lines(12),
      'z.sh': 'z\n',
      'v.sh': 'v\n',
      'w.sh': 'w\n',
      'u.sh': lines(12),
    };
    const r = await remote({ start: { ...START, ...sh } });
    const work = `${r.bare}-work`;
    for (const f of ['x.sh', 'y.sh', 'z.sh']) chmodSync(join(work, f), 0o755);
    r.work(['add', '.']);
    r.pushed({}, 'executables');
    expect((await r.pull()).status).toBe('fast-forward');
    expect(r.gitPull().ok).toBe(true);
    // We make u.sh executable and change its first line; they change its last.
    await r.fs().promises.writeFile('/u.sh', lines(12), { mode: 0o777 });
    chmodSync(join(r.cli, 'u.sh'), 0o755);
    const ours = {
      'x.sh': 'x ours\n',
      'y.sh': lines(12).replace('line 1\n', 'line 1 ours\n'),
      'z.sh': null,
      'v.sh': 'v ours\n',
      'u.sh': lines(12).replace('line 1\n', 'line 1 ours\n'),
    };
    await r.local(ours, 'ours');
    // Theirs makes v.sh (which we changed) and w.sh executable, changing nothing else in them.
    for (const f of ['v.sh', 'w.sh']) chmodSync(join(work, f), 0o755);
    r.work(['add', 'v.sh', 'w.sh']);
    const theirs = {
      'x.sh': 'x theirs\n',
      'y.sh': lines(12).replace('line 12\n', 'line 12 theirs\n'),
      'z.sh': 'z theirs\n',
      'u.sh': lines(12).replace('line 12\n', 'line 12 theirs\n'),
    };
    r.pushed(theirs, 'theirs');
    await expectConflictsAsGit(r, ['x.sh', 'z.sh']);
    const executables = (w: { path: string; kind: string }[]) =>
      w.filter((e) => e.path.endsWith('.sh')).map((e) => `${e.path} ${e.kind}`);
    const expectAsGitsFiles = async () => {
      const dir = await r.exported();
      expect(inDir(dir, ['ls-files', '--stage'])).toBe(inDir(r.cli, ['ls-files', '--stage']));
      expect(inDir(dir, ['status', '--porcelain'])).toBe(inDir(r.cli, ['status', '--porcelain']));
      expect(executables(await readLightningWorktree(r.fs()))).toEqual(
        executables(await readDiskWorktree(r.cli)),
      );
    };
    await expectAsGitsFiles();
    expect(inDir(await r.exported(), ['ls-files', '--stage', 'u.sh', 'v.sh', 'w.sh', 'y.sh'])).toMatch(
      /^100755 \S+ 0\tu\.sh\n100755 \S+ 0\tv\.sh\n100755 \S+ 0\tw\.sh\n100755 \S+ 0\ty\.sh$/,
    );
    await engine.repo(r.repoId).abortMerge();
    inDir(r.cli, ['merge', '--abort']);
    await expectAsGitsFiles();
  });
});

describe('pull of a criss-cross history (two merge bases)', () => {
  it('git merges it (a virtual base); Blobless refuses (MULTIPLE_MERGE_BASES), changing nothing', async () => {
    const r = await remote();
    // Y on a side branch and X on main, each merged into the other: M_side and M_main have bases X and Y.
    r.work(['checkout', '-q', '-b', 'side']);
    r.pushed({ 'e.txt': 'e side\n' }, 'Y', { branch: 'side' });
    r.work(['checkout', '-q', 'main']);
    r.pushed({ 'a.txt': lines(12, ' x') }, 'X');
    r.work(['checkout', '-q', 'side']);
    r.work(['merge', '-q', '--no-edit', 'main']);
    const mSide = r.work(['rev-parse', 'HEAD']);
    r.work(['checkout', '-q', 'main']);
    r.work(['merge', '-q', '--no-edit', 'side~1']);
    r.work(['push', '-q', r.bare, `+${mSide}:refs/heads/main`]);
    expect((await r.pull()).status).toBe('fast-forward');
    expect(r.gitPull().output).toContain('Fast-forward');
    const mMain = r.pushed({ 'dir/b.txt': 'b main\n' }, 'after M_main');
    inDir(r.cli, ['fetch', '-q']);
    expect(inDir(r.cli, ['merge-base', '--all', 'HEAD', mMain]).split('\n')).toHaveLength(2);
    const before = await readLightningWorktree(r.fs());
    const since = served.requests.length;
    const err = await failure(r.pull());
    // No blob is fetched for it: the fetch alone (filtered) went out.
    expect(blobRequestsSince(since)).toEqual([]);
    expect(err).toBeInstanceOf(OperationError);
    expect(err.code).toBe('MULTIPLE_MERGE_BASES');
    expect(err.message).toBe(
      'main and origin/main have 2 merge bases (each was merged into the other), and Blobless merges from one base only: merge them with git (git pull), push the merge, then pull again.',
    );
    expect(await r.head()).toBe(mSide);
    expect(await readLightningWorktree(r.fs())).toEqual(before);
    expect(r.gitPull().ok).toBe(true);
  });
});

describe('countCommits against git rev-list', () => {
  /** Commits made with `git commit-tree` (one empty tree): name, seconds after a fixed date, parents' names. */
  type Spec = [name: string, time: number, parents: string[]][];
  /**
   * A repository of `spec`'s commits. `shallow` names commits made a shallow boundary as a shallow clone
   * makes one: listed in .git/shallow, and their parents (which nothing else may reach) not held.
   */
  function history(spec: Spec, shallow: string[] = []) {
    const dir = mkdtempSync(join(root, 'count-'));
    execFileSync('git', ['init', '-q', dir]);
    const tree = gitAt(dir, ['write-tree']);
    const oid = new Map<string, string>();
    for (const [name, time, parents] of spec) {
      const args = ['commit-tree', tree, '-m', name, ...parents.flatMap((p) => ['-p', oid.get(p)!])];
      oid.set(name, gitAt(dir, args, 1_800_000_000 + time));
    }
    writeFileSync(join(dir, '.git', 'shallow'), shallow.map((n) => `${oid.get(n)}\n`).join(''));
    for (const [name, , parents] of spec) {
      if (!shallow.includes(name)) continue;
      for (const p of parents)
        rmSync(join(dir, '.git', 'objects', oid.get(p)!.slice(0, 2), oid.get(p)!.slice(2)));
    }
    // isomorphic-git reads the loose objects git wrote; nothing else of a RepoHandle is used.
    const repo = { fs: nodeFs, gitdir: join(dir, '.git'), cache: {} } as unknown as RepoHandle;
    return { dir, oid, repo };
  }

  /** For every ordered pair of `names` (all of `spec`'s by default): countCommits and git's count. */
  async function everyPair(spec: Spec, o: { names?: string[]; shallow?: string[] } = {}) {
    const { dir, oid, repo } = history(spec, o.shallow);
    const names = o.names ?? spec.map(([n]) => n);
    const ours: string[] = [];
    const gits: string[] = [];
    for (const from of names) {
      for (const tip of names) {
        if (from === tip) continue;
        const [f, t] = [oid.get(from)!, oid.get(tip)!];
        const byGit = execFileSync('git', ['-C', dir, 'rev-list', '--count', `${f}..${t}`])
          .toString()
          .trim();
        gits.push(`${from}..${tip} ${byGit}`);
        ours.push(`${from}..${tip} ${await countCommits(repo, t, f)}`);
      }
    }
    expect(ours).toEqual(gits);
    return gits;
  }

  it('a parent dated after its child, on the side already had', async () => {
    // P is F's: git counts T alone for F..T, though P was taken (newest first) before F was.
    const counts = await everyPair([
      ['P', 200, []],
      ['F', 100, ['P']],
      ['T', 300, ['P']],
    ]);
    expect(counts).toContain('F..T 1');
  });

  it('a fast-forward whose tip reaches, by another line, a commit the old tip reaches with its clock behind', async () => {
    const counts = await everyPair([
      ['P', 200, []],
      ['Q', 50, ['P']],
      ['F', 100, ['Q']],
      ['X', 250, ['P']],
      ['T', 300, ['X', 'F']],
    ]);
    expect(counts).toContain('F..T 2');
  });

  it('every commit of the same date: merges, a diamond, a side only one has', async () => {
    await everyPair([
      ['A', 10, []],
      ['B', 10, ['A']],
      ['C', 10, ['A']],
      ['D', 10, ['B', 'C']],
      ['E', 10, ['C']],
      ['F', 10, ['D', 'E']],
      ['G', 10, ['B']],
    ]);
  });

  it('clocks that go backwards on both lines, and a branch worked on earlier merged in', async () => {
    await everyPair([
      ['A', 100, []],
      ['B', 90, ['A']],
      ['C', 80, ['B']],
      ['D', 200, ['A']],
      ['E', 60, ['D']],
      ['F', 70, ['C', 'E']],
      ['G', 20, ['A']],
      ['H', 30, ['G']],
      ['M', 300, ['F', 'H']],
      ['N', 95, ['B']],
    ]);
  });

  it('a skew longer than SLOP: git stops early and counts a commit the old tip reaches; so does this', async () => {
    // F's line runs 6 commits back in time to P, which T reached first: git walks 5 past the last counted.
    const spec: Spec = [['P', 200, []]];
    for (let i = 1; i <= 7; i++) spec.push([`Q${i}`, 60 - i, [i === 1 ? 'P' : `Q${i - 1}`]]);
    spec.push(['F', 100, ['Q7']], ['X', 250, ['P']], ['T', 300, ['X', 'F']]);
    const counts = await everyPair(spec, { names: ['F', 'T', 'Q7', 'Q3', 'X', 'P'] });
    // Not the 2 commits T has and F has not: git's own answer.
    expect(counts).toContain('F..T 3');
  });

  it('stops at a shallow boundary, as git does', async () => {
    await everyPair(
      [
        ['A', 10, []],
        ['B', 20, ['A']],
        ['C', 30, ['B']],
        ['D', 40, ['C']],
        ['E', 35, ['C']],
        ['M', 50, ['D', 'E']],
      ],
      { names: ['C', 'D', 'E', 'M'], shallow: ['C'] },
    );
  });

  it('an old tip this repository does not hold reaches nothing: every commit of the tip counts, as git counts the tip alone', async () => {
    const { dir, oid, repo } = history([
      ['A', 10, []],
      ['B', 20, ['A']],
      ['C', 30, ['B']],
    ]);
    const tip = oid.get('C')!;
    const byGit = execFileSync('git', ['-C', dir, 'rev-list', '--count', tip]).toString().trim();
    expect(byGit).toBe('3');
    // An object id no commit of this history has: a branch whose objects are gone.
    expect(await countCommits(repo, tip, 'e'.repeat(40))).toBe(Number(byGit));
  });

  it('histories where the order of equal dates, the marks and SLOP decide the count', async () => {
    // Found by running copies of this walk, each with one rule changed, on random histories until the copy
    // counted otherwise; the rule each history needs is named above it. git's count is still the answer.
    const cases: [Spec, string[]][] = [
      // Marks pass on through commits already read; a commit left to count keeps the walk going.
      [
        [
          ['c0', 2, []],
          ['c1', 4, ['c0']],
          ['c2', 4, ['c0']],
          ['c3', 2, ['c1']],
          ['c4', 0, ['c0']],
          ['c5', 2, ['c4', 'c3']],
          ['c6', 0, ['c5', 'c2']],
          ['c7', 2, ['c3', 'c5']],
          ['c8', 2, ['c7', 'c0']],
          ['c9', 4, ['c8', 'c3']],
          ['c10', 0, ['c6']],
        ],
        ['c5', 'c6', 'c10'],
      ],
      // SLOP is 5, not 4; from's parents are marked before the walk starts.
      [
        [
          ['c0', 34, []],
          ['c1', 34, ['c0']],
          ['c2', 30, ['c0']],
          ['c3', 18, ['c1', 'c0']],
          ['c4', 14, ['c3', 'c0']],
          ['c5', 2, ['c4']],
          ['c6', -10, ['c0', 'c4']],
          ['c7', -22, ['c6', 'c2']],
          ['c8', -34, ['c7', 'c0']],
          ['c9', -50, ['c3', 'c4']],
          ['c10', -62, ['c8']],
        ],
        ['c1', 'c3', 'c8'],
      ],
      // A parent of a commit from reaches is from's itself, not only its parents.
      [
        [
          ['c0', 50, []],
          ['c1', 46, ['c0']],
          ['c2', 38, ['c1', 'c0']],
          ['c3', 22, ['c2']],
          ['c4', 22, ['c3', 'c0']],
          ['c5', 18, ['c4', 'c0']],
          ['c6', 18, ['c0']],
          ['c7', 10, ['c6', 'c4']],
        ],
        ['c5', 'c7'],
      ],
      // A commit left newer than the last counted keeps the walk going, and SLOP starts again.
      [
        [
          ['c0', 50, []],
          ['c1', 42, []],
          ['c2', 38, ['c0']],
          ['c3', 26, ['c1', 'c0']],
          ['c4', 26, ['c3', 'c0']],
          ['c5', 18, ['c4', 'c2']],
          ['c6', 10, ['c4']],
          ['c7', 2, ['c6', 'c5']],
          ['c8', -2, ['c7', 'c0']],
          ['c9', -10, ['c5']],
          ['c10', -22, ['c0']],
          ['c11', -26, ['c10', 'c8']],
        ],
        ['c1', 'c8', 'c11'],
      ],
      // Equal dates: the commit reached first is taken first, from before tip.
      [
        [
          ['c0', 0, []],
          ['c1', 4, ['c0']],
          ['c2', 0, ['c1', 'c0']],
          ['c3', 0, ['c0', 'c2']],
          ['c4', 0, ['c3', 'c0']],
          ['c5', 2, ['c0']],
          ['c6', 2, ['c5', 'c4']],
          ['c7', 0, ['c6']],
          ['c8', 4, ['c7', 'c0']],
          ['c9', 0, ['c8', 'c7']],
        ],
        ['c1', 'c2', 'c9'],
      ],
      // A commit left as new as the last counted keeps the walk going.
      [
        [
          ['c0', 50, []],
          ['c1', 46, ['c0']],
          ['c2', 46, ['c1', 'c0']],
          ['c3', 46, ['c0', 'c2']],
          ['c4', 46, ['c0']],
          ['c5', 46, ['c3', 'c0']],
          ['c6', 46, ['c5', 'c4']],
          ['c7', 38, ['c6']],
          ['c8', 22, ['c0']],
          ['c9', 10, ['c8', 'c1']],
          ['c10', -2, ['c6']],
          ['c11', -6, ['c10']],
          ['c12', -18, ['c8']],
          ['c13', -30, ['c9', 'c11']],
        ],
        ['c2', 'c13'],
      ],
    ];
    for (const [spec, names] of cases) await everyPair(spec, { names });
  });

  it('random histories, dates in and out of order', async () => {
    let seed = 26;
    const random = (n: number) => {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      return seed % n;
    };
    for (let round = 0; round < 3; round++) {
      const spec: Spec = [];
      for (let i = 0; i < 9; i++) {
        const parents = i === 0 || random(8) === 0 ? [] : [`c${random(i)}`];
        if (i > 1 && random(3) === 0) parents.push(`c${random(i)}`);
        // Round 0: dates mostly in order, with ties; then any order.
        const time = round < 1 ? i * 2 + random(3) - 1 : random(12);
        spec.push([`c${i}`, 100 + time, [...new Set(parents)]]);
      }
      await everyPair(spec);
    }
  });
});
