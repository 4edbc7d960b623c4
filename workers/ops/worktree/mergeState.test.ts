// indexUnmergedPaths against git's own index files: a merge git stopped on conflicts, read from the bytes git
// wrote, named as `git ls-files -u` names them. The pull tests (pull.test.ts) read only indexes isomorphic-git
// writes (version 2); git writes version 3 once an entry has extended flags (`git add -N`).
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { datedGitEnv } from '../../../test/support/datedGit.ts';
import { git } from '../../../test/support/git.ts';
import { useTmpDir } from '../../../test/support/tmpDir.ts';
import { indexUnmergedPaths } from './mergeState.ts';

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
      .map((l) => l.split('\t')[1]),
  ),
];

describe('indexUnmergedPaths', () => {
  it("names the conflicted paths of git's own index, version 2 and version 3 with extended flags", async () => {
    const dir = join(tmp(), 'repo');
    await conflictedByGit(dir);
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
});
