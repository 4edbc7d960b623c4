// indexUnmergedPaths against git's own index files: a merge git stopped on conflicts, read from the bytes git
// wrote, named as `git ls-files -u` names them. The pull tests (pull.test.ts) read only indexes isomorphic-git
// writes (version 2); git writes version 3 once an entry has extended flags (`git add -N`).

import * as nodeFs from 'node:fs';
import {
  chmodSync,
  cpSync,
  lstatSync,
  mkdirSync,
  readFileSync,
  readlinkSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { datedGitEnv } from '../../../test/support/datedGit.ts';
import { git } from '../../../test/support/git.ts';
import { useTmpDir } from '../../../test/support/tmpDir.ts';
import { sha1 } from '../../pack/objectHash.ts';
import { OperationError } from '../common/errors.ts';
import type { RepoHandle } from '../common/repoAccess.ts';
import {
  abortMergeState,
  indexUnmergedPaths,
  readMergeState,
  withEntryModes,
  writeConflictedMerge,
} from './mergeState.ts';

const tmp = useTmpDir('merge-state');

/** A repository where `git merge side` stopped with conflicts on `b.txt` and `dir/long-name-conflict.txt`. */
async function conflictedByGit(dir: string): Promise<void> {
  let t = 1_800_000_000;
  const g = (args: string[]) => git(args, { cwd: dir, env: datedGitEnv(++t) as Record<string, string> });
  const commit = async (tag: string) => {
    writeFileSync(join(dir, 'b.txt'), `b${tag}\n`);
    writeFileSync(join(dir, 'dir/long-name-conflict.txt'), `x${tag}\n`);
    await g(['add', '.']);
    await g(['commit', '-q', '-m', tag || 'base']);
  };
  mkdirSync(join(dir, 'dir'), { recursive: true });
  await g(['init', '-q', '-b', 'main']);
  writeFileSync(join(dir, 'c.txt'), 'c\n');
  await commit('');
  await g(['checkout', '-q', '-b', 'side']);
  await commit(' side');
  await g(['checkout', '-q', 'main']);
  await commit(' main');
  await g(['merge', '-q', 'side']).catch(() => undefined);
}

const unmergedByGit = async (dir: string) => [
  ...new Set(
    (await git(['-C', dir, 'ls-files', '-u']))
      .trim()
      .split('\n')
      .filter(Boolean)
      .map((l) => l.split('\t')[1]),
  ),
];

/** `bytes` with its trailing SHA-1 made again, as a writer that got the rest wrong would make it. */
const resummed = (bytes: Uint8Array) => {
  const out = bytes.slice();
  out.set(sha1(out.subarray(0, out.length - 20)), out.length - 20);
  return out;
};

/** What indexUnmergedPaths threw on `bytes`, or what it returned. */
const readOf = (bytes: Uint8Array) => {
  try {
    return indexUnmergedPaths(bytes);
  } catch (err) {
    expect(err).toBeInstanceOf(OperationError);
    return `${(err as OperationError).code}: ${(err as Error).message}`;
  }
};

describe('indexUnmergedPaths', () => {
  let dir: string;
  /** The index git wrote as the merge stopped (version 2; after the entries, a TREE extension and the SHA-1). */
  let stopped: Uint8Array;
  beforeAll(async () => {
    dir = join(tmp(), 'repo');
    await conflictedByGit(dir);
    stopped = new Uint8Array(readFileSync(join(dir, '.git', 'index')));
  });

  it("names the conflicted paths of git's own index, version 2 and version 3 with extended flags", async () => {
    const expected = await unmergedByGit(dir);
    expect(expected).toEqual(['b.txt', 'dir/long-name-conflict.txt']);
    const index = join(dir, '.git', 'index');
    expect(readFileSync(index).readUInt32BE(4)).toBe(2);
    expect(indexUnmergedPaths(new Uint8Array(readFileSync(index)))).toEqual(expected);
    // An intent-to-add entry (extended flags) sorted before the conflicts: git writes version 3.
    writeFileSync(join(dir, 'a-new.txt'), 'new\n');
    await git(['-C', dir, 'add', '-N', 'a-new.txt']);
    expect(readFileSync(index).readUInt32BE(4)).toBe(3);
    expect(await unmergedByGit(dir)).toEqual(expected);
    expect(indexUnmergedPaths(new Uint8Array(readFileSync(index)))).toEqual(expected);
    // One conflict resolved: git keeps its stages in a resolve-undo extension (REUC) after the entries.
    await git(['-C', dir, 'add', 'b.txt']);
    expect(readFileSync(index).includes('REUC')).toBe(true);
    expect(await unmergedByGit(dir)).toEqual(['dir/long-name-conflict.txt']);
    expect(indexUnmergedPaths(new Uint8Array(readFileSync(index)))).toEqual(['dir/long-name-conflict.txt']);
  });

  it('refuses an index cut short, or with a wrong entry count, with a typed error, as git does', () => {
    const damaged = (why: string) =>
      `INTERNAL: The index file (.git/index) is damaged: ${why}. git refuses it too.`;
    const view = () => new DataView(stopped.buffer, stopped.byteOffset, stopped.byteLength);
    const count = view().getUint32(8);
    // b.txt's three stages, c.txt, the long name's three stages: 7 entries, then a TREE extension, the SHA-1.
    expect(count).toBe(7);
    expect(readOf(stopped)).toEqual(['b.txt', 'dir/long-name-conflict.txt']);
    // Cut inside the header, at the end of it, inside an entry's fixed part, inside a name, before the SHA-1.
    expect(readOf(stopped.subarray(0, 0))).toBe(damaged('it has no index header'));
    expect(readOf(stopped.subarray(0, 31))).toBe(damaged('it has no index header'));
    for (const cut of [32, 12 + 40, 12 + 72 + 64, stopped.length - 20, stopped.length - 1]) {
      expect(readOf(stopped.subarray(0, cut)), `cut at ${cut}`).toBe(
        damaged('its checksum does not match (cut short?)'),
      );
    }
    // The same cuts with a checksum that matches: each entry is checked in turn.
    const withCount = (n: number, bytes = stopped) => {
      const out = bytes.slice();
      new DataView(out.buffer).setUint32(8, n);
      return resummed(out);
    };
    expect(readOf(withCount(8))).toBe(damaged('entry 8 of 8 is past its end'));
    expect(readOf(withCount(0xffffffff))).toBe(damaged('entry 8 of 4294967295 is past its end'));
    // One entry less: the paths of the first six (the last stage of the long name is still among them).
    expect(readOf(withCount(6))).toEqual(['b.txt', 'dir/long-name-conflict.txt']);
    expect(readOf(withCount(3))).toEqual(['b.txt']);
    expect(readOf(withCount(0))).toEqual([]);
    // The last entry's padding cut, the checksum made again: its name runs into the extension after it.
    const tree = Buffer.from(stopped).indexOf('TREE');
    const cutName = resummed(Uint8Array.of(...stopped.subarray(0, tree - 8), ...stopped.subarray(tree)));
    expect(readOf(cutName)).toBe(damaged('entry 7 of 7 has no name of the length it gives'));
    // An eighth entry's fixed part, zeros, where the TREE extension was: it ends where its name should start.
    const fixedOnly = withCount(8, Uint8Array.of(...stopped.subarray(0, tree), ...new Uint8Array(62 + 20)));
    expect(readOf(fixedOnly)).toBe(damaged('entry 8 of 8 has no name of the length it gives'));
    // A first entry whose length field says one byte more than its name.
    const longer = stopped.slice();
    new DataView(longer.buffer).setUint16(12 + 60, view().getUint16(12 + 60) + 1);
    expect(readOf(resummed(longer))).toBe(damaged('entry 1 of 7 has no name of the length it gives'));
    // Versions this does not read (4 compresses paths): refused, not misread.
    for (const version of [1, 4]) {
      const other = stopped.slice();
      new DataView(other.buffer).setUint32(4, version);
      expect(readOf(resummed(other))).toBe(damaged(`version ${version} is not read here`));
    }
    const notIndex = stopped.slice();
    notIndex[0] = 0x45;
    expect(readOf(resummed(notIndex))).toBe(damaged('it has no index header'));
  });
});

/**
 * The git repository in `dir` as a RepoHandle: its work tree at the root of the file system the engine's code
 * sees (the worktree at `/`, the git directory at `/.git`), as on the engine's own storage.
 */
function repoAt(dir: string): RepoHandle {
  const p = nodeFs.promises as unknown as Record<
    string,
    (path: string, ...rest: unknown[]) => Promise<unknown>
  >;
  const names = [
    'readFile',
    'writeFile',
    'unlink',
    'readdir',
    'mkdir',
    'rmdir',
    'stat',
    'lstat',
    'readlink',
    'chmod',
  ];
  const promises: Record<string, unknown> = Object.fromEntries(
    names.map((n) => [n, async (path: string, ...rest: unknown[]) => p[n](join(dir, path), ...rest)]),
  );
  // A link's target is its content, not a path of this file system. (Each returns a promise even when called
  // with nothing: isomorphic-git calls readFile() so to tell a promise API from callbacks.)
  promises.symlink = (target: string, path: string) => nodeFs.promises.symlink(target, join(dir, path));
  return { fs: { promises }, gitdir: '/.git', cache: {} } as unknown as RepoHandle;
}

/**
 * What `dir`'s work tree holds: each file's path, its mode bits or link target, its content; and each folder
 * with no file below it (git checks a submodule out as one), named with a `/`.
 */
function filesOf(dir: string): string[] {
  const out: string[] = [];
  const walk = (rel: string) => {
    for (const name of nodeFs.readdirSync(join(dir, rel)).sort()) {
      const path = rel ? `${rel}/${name}` : name;
      if (path === '.git') continue;
      const st = lstatSync(join(dir, path));
      if (st.isDirectory()) {
        const before = out.length;
        walk(path);
        if (out.length === before) out.push(`${path}/`);
      } else if (st.isSymbolicLink()) out.push(`${path} -> ${readlinkSync(join(dir, path))}`);
      else out.push(`${path} ${st.mode & 0o111 ? 'x' : '-'} ${readFileSync(join(dir, path), 'utf8')}`);
    }
  };
  walk('');
  return out;
}

describe('withEntryModes', () => {
  it("sets the modes asked for in git's own index, which git then reads; the bytes given are left alone", async () => {
    const dir = join(tmp(), 'modes');
    await git(['init', '-q', dir]);
    const blob = (await git(['-C', dir, 'hash-object', '-w', '--stdin'], { input: 'x\n' })).trim();
    // Stages as a conflict leaves them, written by git alone: no cache of trees.
    const lines = [`100644 ${blob} 0\ta.txt`, ...[1, 2, 3].map((k) => `100644 ${blob} ${k}\tc.txt`)];
    await git(['-C', dir, 'update-index', '--index-info'], { input: `${lines.join('\n')}\n` });
    const index = join(dir, '.git', 'index');
    const bytes = new Uint8Array(readFileSync(index));
    const before = bytes.slice();
    const staged = async (modes: Uint8Array) => {
      writeFileSync(index, modes);
      return (await git(['-C', dir, 'ls-files', '--stage'])).trim().split('\n');
    };
    const some = withEntryModes(bytes, (path, stage) =>
      path === 'c.txt' && stage > 1 ? 0o100755 : undefined,
    );
    expect(bytes).toEqual(before);
    expect(await staged(some)).toEqual([
      `100644 ${blob} 0\ta.txt`,
      `100644 ${blob} 1\tc.txt`,
      `100755 ${blob} 2\tc.txt`,
      `100755 ${blob} 3\tc.txt`,
    ]);
    const all = withEntryModes(bytes, () => 0o120000);
    expect(await staged(all)).toEqual(lines.map((l) => l.replace('100644', '120000')));
  });

  it('refuses an index with extensions (a cache of trees it would leave stale): INTERNAL, nothing returned', async () => {
    const dir = join(tmp(), 'stopped');
    await conflictedByGit(dir);
    const bytes = new Uint8Array(readFileSync(join(dir, '.git', 'index')));
    expect(Buffer.from(bytes).includes('TREE')).toBe(true);
    expect(() => withEntryModes(bytes, () => 0o100755)).toThrow(
      new OperationError(
        'INTERNAL',
        'The index has extensions after its entries, which Blobless does not rewrite.',
      ),
    );
  });
});

describe('abortMergeState where the merge has no base', () => {
  // git merge --allow-unrelated-histories: both sides added each file. A pull refuses such a merge, so no merge
  // base is found for the abort and every conflicted file is read back from HEAD's tree alone.
  it("puts back HEAD's files, links and modes, in the index and the work tree, as git merge --abort does", async () => {
    const dir = join(tmp(), 'unrelated');
    let t = 1_800_000_000;
    const g = (args: string[]) => git(args, { cwd: dir, env: datedGitEnv(++t) as Record<string, string> });
    mkdirSync(join(dir, 'dir', 'sub'), { recursive: true });
    await g(['init', '-q', '-b', 'main']);
    // a.sh and b.txt hold the same bytes: b.txt's mode is found by its name, not by its id.
    writeFileSync(join(dir, 'a.sh'), 'same\n');
    chmodSync(join(dir, 'a.sh'), 0o755);
    writeFileSync(join(dir, 'b.txt'), 'same\n');
    writeFileSync(join(dir, 'dir', 'sub', 'x.sh'), 'x ours\n');
    chmodSync(join(dir, 'dir', 'sub', 'x.sh'), 0o755);
    writeFileSync(join(dir, 'z.sh'), 'z ours\n');
    chmodSync(join(dir, 'z.sh'), 0o755);
    symlinkSync('a.sh', join(dir, 'link'));
    await g(['add', '.']);
    await g(['commit', '-q', '-m', 'ours']);
    await g(['checkout', '-q', '--orphan', 'other']);
    await g(['rm', '-rqf', '.']);
    mkdirSync(join(dir, 'dir', 'sub'), { recursive: true });
    for (const path of ['b.txt', 'dir/sub/x.sh', 'z.sh']) writeFileSync(join(dir, path), `${path} theirs\n`);
    symlinkSync('b.txt', join(dir, 'link'));
    await g(['add', '.']);
    await g(['commit', '-q', '-m', 'theirs']);
    await g(['checkout', '-q', 'main']);
    await g(['merge', '-q', '--allow-unrelated-histories', 'other']).catch(() => undefined);
    expect(await unmergedByGit(dir)).toEqual(['b.txt', 'dir/sub/x.sh', 'link', 'z.sh']);
    // The conflicted file's folder removed meanwhile: the abort makes it again, as git's does.
    rmSync(join(dir, 'dir'), { recursive: true });
    const twin = join(tmp(), 'unrelated-git');
    cpSync(dir, twin, { recursive: true, verbatimSymlinks: true });

    const repo = repoAt(dir);
    expect((await readMergeState(repo))?.conflicts).toEqual(['b.txt', 'dir/sub/x.sh', 'link', 'z.sh']);
    await abortMergeState(repo);
    await git(['merge', '--abort'], { cwd: twin });
    for (const args of [
      ['ls-files', '--stage'],
      ['status', '--porcelain=v2', '--untracked-files=all'],
    ]) {
      expect(await git(args, { cwd: dir }), args.join(' ')).toBe(await git(args, { cwd: twin }));
    }
    expect(filesOf(dir)).toEqual(filesOf(twin));
    expect(filesOf(dir)).toContain('dir/sub/x.sh x x ours\n');
    expect(await readMergeState(repo)).toBeNull();
    // Nothing left to abort: git refuses too ("There is no merge to abort").
    const again = await abortMergeState(repo).catch((err: unknown) => err);
    expect(again).toBeInstanceOf(OperationError);
    expect(`${(again as OperationError).code}: ${(again as Error).message}`).toBe(
      'NO_MERGE: No merge is in progress.',
    );
    expect(await git(['merge', '--abort'], { cwd: twin }).catch(() => 'refused')).toBe('refused');
  });

  it('with no index file, names no conflict, as git ls-files -u does', async () => {
    const dir = join(tmp(), 'no-index');
    await conflictedByGit(dir);
    rmSync(join(dir, '.git', 'index'));
    expect(await unmergedByGit(dir)).toEqual([]);
    expect(await readMergeState(repoAt(dir))).toMatchObject({ conflicts: [] });
  });
});

/** `git` in `dir` as one author, each command a second after the last. */
const datedGitIn = (dir: string) => {
  let t = 1_800_000_000;
  return (args: string[]) => git(args, { cwd: dir, env: datedGitEnv(++t) as Record<string, string> });
};

/** A repository `name` on main with one commit, its `base`: b.txt holding "b". */
async function baseRepo(name: string) {
  const dir = join(tmp(), name);
  mkdirSync(dir, { recursive: true });
  const g = datedGitIn(dir);
  await g(['init', '-q', '-b', 'main']);
  writeFileSync(join(dir, 'b.txt'), 'b\n');
  await g(['add', '.']);
  await g(['commit', '-q', '-m', 'base']);
  const base = (await g(['rev-parse', 'HEAD'])).trim();
  return { dir, g, base };
}

describe('abortMergeState of a merge that added their submodule', () => {
  it("removes the submodule's empty folder git made, and the folder above it, as git merge --abort does", async () => {
    const { dir, g, base } = await baseRepo('their-submodule');
    await g(['checkout', '-q', '-b', 'side']);
    // A gitlink staged as `git submodule add` stages one (any commit id will do: it is never read).
    await g(['update-index', '--add', '--cacheinfo', `160000,${base},lib/mod`]);
    writeFileSync(join(dir, 'b.txt'), 'b side\n');
    // Not `commit -a`: it would stage the gitlink's missing folder as a deletion.
    await g(['add', 'b.txt']);
    await g(['commit', '-q', '-m', 'side']);
    await g(['checkout', '-q', 'main']);
    writeFileSync(join(dir, 'b.txt'), 'b main\n');
    await g(['commit', '-q', '-am', 'main']);
    await g(['merge', '-q', 'side']).catch(() => undefined);
    expect(await unmergedByGit(dir)).toEqual(['b.txt']);
    // The submodule's folder: a path the file system will not unlink.
    expect(filesOf(dir)).toContain('lib/mod/');
    const twin = join(tmp(), 'their-submodule-git');
    cpSync(dir, twin, { recursive: true, verbatimSymlinks: true });

    await abortMergeState(repoAt(dir));
    await git(['merge', '--abort'], { cwd: twin });
    for (const args of [
      ['ls-files', '--stage'],
      ['status', '--porcelain=v2', '--untracked-files=all'],
    ]) {
      expect(await git(args, { cwd: dir }), args.join(' ')).toBe(await git(args, { cwd: twin }));
    }
    expect(filesOf(dir)).toEqual(filesOf(twin));
    expect(filesOf(dir)).toEqual(['b.txt - b main\n']);
  });
});

describe('writeConflictedMerge', () => {
  /** A repository at `main` with `side` to merge: each changed b.txt (`both`) or only its own file. */
  async function sides(name: string, both: boolean) {
    const { dir, g, base } = await baseRepo(name);
    await g(['checkout', '-q', '-b', 'side']);
    writeFileSync(join(dir, both ? 'b.txt' : 's.txt'), 'side\n');
    await g(['add', '.']);
    await g(['commit', '-q', '-m', 'side']);
    await g(['checkout', '-q', 'main']);
    writeFileSync(join(dir, both ? 'b.txt' : 'm.txt'), 'main\n');
    await g(['add', '.']);
    await g(['commit', '-q', '-m', 'main']);
    const [ours, theirs] = (await g(['rev-parse', 'main', 'side'])).trim().split('\n');
    const twin = join(tmp(), `${name}-git`);
    cpSync(dir, twin, { recursive: true });
    const opts = {
      ours,
      theirs,
      base,
      oursRef: 'refs/heads/main',
      theirsRef: 'refs/heads/side',
      message: 'm',
    };
    /** What writeConflictedMerge threw, as its type, code and message. */
    const refusal = () =>
      writeConflictedMerge(repoAt(dir), opts).then(
        (conflicts) => `returned ${conflicts.join(', ')}`,
        (err: { code?: string; message?: string }) =>
          `${err instanceof OperationError ? 'OperationError' : 'other'} ${err.code}: ${err.message}`,
      );
    return { dir, twin, ours, theirs, refusal };
  }

  it('refuses a merge that does not stop on conflicts (git merges it): no merge left in progress', async () => {
    const { dir, twin, ours, refusal } = await sides('clean-merge', false);
    await git(['merge', '-q', '--no-edit', 'side'], { cwd: twin });
    expect(await refusal()).toBe(
      'OperationError INTERNAL: The merge was expected to stop on conflicts, and did not.',
    );
    expect(nodeFs.existsSync(join(dir, '.git', 'MERGE_HEAD'))).toBe(false);
    expect((await git(['rev-parse', 'main'], { cwd: dir })).trim()).toBe(ours);
  });

  it("a merge that fails otherwise throws that failure, as git's fails: here a blob it reads is not stored", async () => {
    const { dir, twin, theirs, refusal } = await sides('blob-missing', true);
    const blob = (await git(['rev-parse', `${theirs}:b.txt`], { cwd: dir })).trim();
    for (const d of [dir, twin]) rmSync(join(d, '.git', 'objects', blob.slice(0, 2), blob.slice(2)));
    expect(await git(['merge', '-q', 'side'], { cwd: twin }).catch(() => 'refused')).toBe('refused');
    expect(await refusal()).toMatch(new RegExp(`^other NotFoundError: .*${blob}`));
    expect(nodeFs.existsSync(join(dir, '.git', 'MERGE_HEAD'))).toBe(false);
  });
});
