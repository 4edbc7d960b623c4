import { join } from 'node:path';
import git from 'isomorphic-git';
import { beforeAll, describe, expect, inject, it } from 'vitest';
import type { StatusEntry } from '../workers/engine/types.ts';
import { classify } from '../workers/ops/worktree/workingTree.ts';
import { GITDIR } from '../workers/store/repoFs.ts';
import { testEngine } from './support/engine.ts';
import { exportDir } from './support/exportGitDir.ts';
import { git as gitCli } from './support/git.ts';
import { failure } from './support/repoChecks.ts';
import { useTmpDir } from './support/tmpDir.ts';
import { exportWorktree, readLightningWorktree } from './support/worktree.ts';

const { engine, ctx } = testEngine();

const serverUrl = inject('gitServerUrl');
const tmp = useTmpDir('worktree');
let exports = 0;

/** The repo as git sees it on disk: the working tree with the git directory as its `.git`. */
async function exportRepo(repoId: string): Promise<string> {
  const dest = join(tmp(), `repo-${exports++}`);
  await exportWorktree(ctx.store.repoFs.open(repoId), dest);
  await exportDir(ctx.store.repoFs.open(repoId), GITDIR, join(dest, '.git'));
  return dest;
}

/** Our status in `git status --porcelain` form. */
function porcelain(entries: StatusEntry[]): string[] {
  const x = { added: 'A', modified: 'M', deleted: 'D' } as const;
  const y = { modified: 'M', deleted: 'D' } as const;
  const lines: string[] = [];
  for (const e of entries) {
    // git shows a staged deletion whose file is back as two lines: "D " and "??".
    if (e.unstaged === 'untracked') {
      if (e.staged) lines.push(`${x[e.staged]}  ${e.path}`);
      lines.push(`?? ${e.path}`);
    } else lines.push(`${e.staged ? x[e.staged] : ' '}${e.unstaged ? y[e.unstaged] : ' '} ${e.path}`);
  }
  return lines.sort();
}

async function gitPorcelain(dir: string): Promise<string[]> {
  const out = await gitCli(['status', '--porcelain', '--no-renames', '--untracked-files=all'], { cwd: dir });
  return out.split('\n').filter(Boolean).sort();
}

const author = { name: 'Ada Lovelace', email: 'ada@example.com' };

describe('working tree status, staging and commit', () => {
  let repoId: string;
  beforeAll(async () => {
    ({ repoId } = await engine.clone({ url: `${serverUrl}/basic.git` }));
  });

  it('checks out HEAD first when the clone has no working tree, and then reports nothing changed', async () => {
    expect(
      await ctx.store.repoFs
        .open(repoId)
        .promises.stat(`${GITDIR}/index`)
        .catch(() => null),
    ).toBeNull();
    const status = await engine.repo(repoId).status();
    expect(status.branch).toBe('main');
    expect(status.entries).toEqual([]);
    expect((await readLightningWorktree(ctx.store.repoFs.open(repoId))).map((e) => e.path)).toContain(
      'src/greet.js',
    );
  });

  it('reports every kind of change as git status --porcelain does', async () => {
    await engine
      .repo(repoId)
      .writeWorktreeFile({ path: 'src/greet.js', content: 'export const greet = (n) => "Hey " + n;\n' });
    await engine.repo(repoId).stage({ paths: ['src/greet.js'] });
    await engine.repo(repoId).writeWorktreeFile({ path: 'README.md', content: '# basic, edited\n' });
    await engine.repo(repoId).writeWorktreeFile({ path: 'notes/todo.txt', content: 'untracked\n' });
    await engine.repo(repoId).writeWorktreeFile({ path: 'docs/added.md', content: 'staged new file\n' });
    await engine.repo(repoId).stage({ paths: ['docs/added.md'] });
    await engine.repo(repoId).deleteWorktreeFile({ path: 'docs/guide.txt' });
    await engine.repo(repoId).deleteWorktreeFile({ path: 'src/main.js' });
    await engine.repo(repoId).stage({ paths: ['src/main.js'] });
    await engine.repo(repoId).writeWorktreeFile({ path: 'src/farewell.js', content: 'staged\n' });
    await engine.repo(repoId).stage({ paths: ['src/farewell.js'] });
    await engine
      .repo(repoId)
      .writeWorktreeFile({ path: 'src/farewell.js', content: 'staged, then changed again\n' });

    const ours = porcelain((await engine.repo(repoId).status()).entries);
    expect(ours).toEqual(await gitPorcelain(await exportRepo(repoId)));
    expect(ours).toHaveLength(7);
  });

  it('unstages back to HEAD and renames as a delete plus a new file', async () => {
    await engine.repo(repoId).unstage({ paths: ['src/main.js', 'docs/added.md'] });
    await engine.repo(repoId).renameWorktreeFile({ from: 'notes/todo.txt', to: 'todo.txt' });
    const ours = porcelain((await engine.repo(repoId).status()).entries);
    expect(ours).toContain(' D src/main.js');
    expect(ours).toContain('?? docs/added.md');
    expect(ours).toContain('?? todo.txt');
    // The emptied folder is gone, as with git mv.
    expect(
      await ctx.store.repoFs
        .open(repoId)
        .promises.stat('/notes')
        .catch(() => null),
    ).toBeNull();
    expect(ours).toEqual(await gitPorcelain(await exportRepo(repoId)));
  });

  it('shows the staged change of a file, HEAD against the index', async () => {
    const diff = await engine.repo(repoId).stagedDiff({ path: 'src/greet.js' });
    const added = diff.hunks.flatMap((h) => h.lines).filter((l) => l.kind === '+');
    expect(added.map((l) => l.text)).toEqual(['export const greet = (n) => "Hey " + n;']);
  });

  it('commits what is staged; git reads the commit and fsck passes', async () => {
    const before = await engine.repo(repoId).status();
    const { oid, branch } = await engine.repo(repoId).commit({ message: 'Greet briefly', author });
    expect(branch).toBe('main');
    const dir = await exportRepo(repoId);
    const raw = await gitCli(['cat-file', '-p', oid], { cwd: dir });
    expect(raw).toMatch(
      /^tree [0-9a-f]{40}\nparent [0-9a-f]{40}\nauthor Ada Lovelace <ada@example\.com> \d+ [+-]\d{4}\ncommitter Ada Lovelace <ada@example\.com> /,
    );
    expect(raw.endsWith('\n\nGreet briefly\n')).toBe(true);
    expect(await gitCli(['rev-parse', 'HEAD'], { cwd: dir })).toBe(`${oid}\n`);
    // The new blobs are the working files' bytes.
    expect(await gitCli(['rev-parse', `${oid}:src/greet.js`], { cwd: dir })).toBe(
      await gitCli(['hash-object', 'src/greet.js'], { cwd: dir }),
    );
    // What was staged is committed; the unstaged changes are still there, and nothing else is.
    expect(await gitCli(['diff', '--cached', '--name-status'], { cwd: dir })).toBe('');
    expect(await gitCli(['diff', '--name-status', 'HEAD~1', 'HEAD'], { cwd: dir })).toBe(
      'M\tsrc/farewell.js\nM\tsrc/greet.js\n',
    );
    const after = porcelain((await engine.repo(repoId).status()).entries);
    expect(after).toEqual(await gitPorcelain(dir));
    // src/greet.js is committed; src/farewell.js keeps only its unstaged change.
    expect(after).toHaveLength(before.entries.length - 1);
    await gitCli(['fsck', '--no-progress'], { cwd: dir });
  });

  it('amends HEAD: same parent, new message', async () => {
    const fs = ctx.store.repoFs.open(repoId);
    const head = await git.resolveRef({ fs, gitdir: GITDIR, ref: 'HEAD' });
    const parent = (await git.readCommit({ fs, gitdir: GITDIR, oid: head })).commit.parent;
    const { oid } = await engine
      .repo(repoId)
      .commit({ message: 'Greet briefly, and say bye', author, amend: true });
    const amended = (await git.readCommit({ fs, gitdir: GITDIR, oid })).commit;
    expect(amended.parent).toEqual(parent);
    expect(amended.message).toBe('Greet briefly, and say bye\n');
    await gitCli(['fsck', '--no-progress'], { cwd: await exportRepo(repoId) });
  });

  it('refuses a commit with nothing staged, an empty message or a bad author, keeping everything', async () => {
    const head = await git.resolveRef({ fs: ctx.store.repoFs.open(repoId), gitdir: GITDIR, ref: 'HEAD' });
    expect((await failure(engine.repo(repoId).commit({ message: 'x', author }))).code).toBe(
      'NOTHING_TO_COMMIT',
    );
    await engine.repo(repoId).stage({ paths: ['README.md'] });
    expect((await failure(engine.repo(repoId).commit({ message: '  ', author }))).code).toBe('INVALID_INPUT');
    const bad = { name: 'Eve <e>', email: 'e@example.com' };
    expect((await failure(engine.repo(repoId).commit({ message: 'x', author: bad }))).code).toBe(
      'INVALID_INPUT',
    );
    expect(await git.resolveRef({ fs: ctx.store.repoFs.open(repoId), gitdir: GITDIR, ref: 'HEAD' })).toBe(
      head,
    );
  });

  it('refuses paths outside the working tree or inside .git', async () => {
    for (const path of ['../x', '.git/config', 'a//b', '/', 'src/../../x']) {
      expect((await failure(engine.repo(repoId).writeWorktreeFile({ path, content: 'x' }))).code).toBe(
        'INVALID_PATH',
      );
    }
  });

  it('creates, switches to and deletes branches', async () => {
    const head = await git.resolveRef({ fs: ctx.store.repoFs.open(repoId), gitdir: GITDIR, ref: 'HEAD' });
    await engine.repo(repoId).commit({ message: 'Readme', author });
    expect(await engine.repo(repoId).createBranch({ name: 'topic', start: head })).toBe(head);
    expect((await failure(engine.repo(repoId).createBranch({ name: 'topic' }))).code).toBe('BRANCH_EXISTS');
    expect((await failure(engine.repo(repoId).createBranch({ name: 'bad..name' }))).code).toBe(
      'INVALID_INPUT',
    );
    await engine.repo(repoId).checkout({ ref: 'topic', force: true });
    expect((await engine.repo(repoId).status()).branch).toBe('topic');
    expect((await failure(engine.repo(repoId).deleteBranch({ name: 'topic' }))).code).toBe('INVALID_INPUT');
    await engine.repo(repoId).checkout({ ref: 'main', force: true });
    await engine.repo(repoId).deleteBranch({ name: 'topic' });
    expect((await engine.repo(repoId).listRefs()).branches).not.toContain('topic');
  });
});

describe('status in git status --porcelain order', () => {
  it('tracked changes by path as bytes, then the untracked ones, where JS would sort all the paths together', async () => {
    const { repoId } = await engine.clone({ url: `${serverUrl}/basic.git` });
    const repo = engine.repo(repoId);
    // U+FF21 is EF BC A1 in UTF-8 and U+1F600 F0 9F 98 80: git puts the first first, JS's UTF-16 order the second.
    const [wide, emoji] = ['\u{ff21}.txt', '\u{1f600}.txt'];
    for (const path of [`${emoji}-staged`, `${wide}-staged`, 'a-staged.txt']) {
      await repo.writeWorktreeFile({ path, content: `${path}\n` });
    }
    await repo.stage({ paths: [`${emoji}-staged`, `${wide}-staged`, 'a-staged.txt'] });
    // Untracked names that sort before and among the tracked ones.
    for (const path of [emoji, wide, 'a-new.txt', 'src/zz.txt'])
      await repo.writeWorktreeFile({ path, content: 'u\n' });
    await repo.writeWorktreeFile({ path: 'README.md', content: '# basic, edited\n' });
    // A staged deletion whose file is back: git's "D " line among the tracked, its "??" among the untracked.
    await repo.deleteWorktreeFile({ path: 'src/main.js' });
    await repo.stage({ paths: ['src/main.js'] });
    await repo.writeWorktreeFile({ path: 'src/main.js', content: 'back\n' });

    const out = await gitCli(
      ['-c', 'core.quotePath=false', 'status', '--porcelain', '--no-renames', '--untracked-files=all'],
      { cwd: await exportRepo(repoId) },
    );
    const gitOrder = [
      ...new Set(
        out
          .split('\n')
          .filter(Boolean)
          .map((line) => line.slice(3)),
      ),
    ];
    const ours = (await repo.status()).entries.map((e) => e.path);
    expect(ours).toEqual(gitOrder);
    expect(ours).toEqual([
      'README.md',
      'a-staged.txt',
      'src/main.js',
      `${wide}-staged`,
      `${emoji}-staged`,
      'a-new.txt',
      'src/zz.txt',
      wide,
      emoji,
    ]);
  });
});

describe('classify', () => {
  it('maps every statusMatrix row git status can produce', () => {
    expect(classify(1, 1, 1)).toEqual({ staged: null, unstaged: null });
    expect(classify(0, 2, 0)).toEqual({ staged: null, unstaged: 'untracked' });
    expect(classify(0, 2, 2)).toEqual({ staged: 'added', unstaged: null });
    expect(classify(0, 2, 3)).toEqual({ staged: 'added', unstaged: 'modified' });
    expect(classify(1, 2, 1)).toEqual({ staged: null, unstaged: 'modified' });
    expect(classify(1, 2, 2)).toEqual({ staged: 'modified', unstaged: null });
    expect(classify(1, 2, 3)).toEqual({ staged: 'modified', unstaged: 'modified' });
    expect(classify(1, 0, 1)).toEqual({ staged: null, unstaged: 'deleted' });
    expect(classify(1, 0, 0)).toEqual({ staged: 'deleted', unstaged: null });
    expect(classify(1, 1, 0)).toEqual({ staged: 'deleted', unstaged: 'untracked' });
    expect(classify(1, 1, 3)).toEqual({ staged: 'modified', unstaged: 'modified' });
    expect(classify(0, 0, 3)).toEqual({ staged: 'added', unstaged: 'deleted' });
  });
});
