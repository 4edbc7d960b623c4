import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CloneOptions } from '../workers/engine/types.ts';
import { exportAsDotGit, storedObjects } from './support/cloneOracle.ts';
import { testEngine } from './support/engine.ts';
import { git } from './support/git.ts';
import { commitOnServer, gitOnServer, type ServedCopies, serveCopies } from './support/servedCopies.ts';
import { useTmpDir } from './support/tmpDir.ts';

const { engine, ctx } = testEngine();
let served: ServedCopies;
const tmp = useTmpDir('clone-single-branch');
beforeAll(async () => {
  served = await serveCopies();
});
afterAll(async () => {
  await served?.close();
});

/** What git clone left and what Blobless's clone of the same options left: refs, objects, shallow file. */
async function bothClones(
  fixture: string,
  name: string,
  options: Partial<CloneOptions>,
  gitArgs: string[],
  prepare?: (bare: string) => Promise<void>,
) {
  const url = await served.copy(fixture, name);
  await prepare?.(served.path(name));
  const result = await engine.clone({ url, ...options });
  const ours = await exportAsDotGit(ctx, result.repoId, tmp());
  const cli = join(tmp(), `${name}-cli`);
  await git(['clone', '-q', '--no-checkout', '--filter=blob:none', ...gitArgs, url, cli]);
  const state = async (dir: string) => {
    const gitDir = (await git(['rev-parse', '--absolute-git-dir'], { cwd: dir })).trim();
    return {
      refs: (await git(['for-each-ref', '--format=%(objectname) %(refname)'], { cwd: dir }))
        .trim()
        .split('\n'),
      objects: await storedObjects(gitDir),
      shallow: await readFile(join(gitDir, 'shallow'), 'utf8').catch(() => null),
    };
  };
  return { result, ours: await state(ours), git: await state(cli) };
}

describe('a shallow or single-branch clone holds what git clone holds', () => {
  it('depth 1 is single-branch, as git clone --depth 1: the tip, its tags, the same shallow file', async () => {
    // tags.git has 1,000 tags on older commits and one lightweight tag on main's tip.
    const {
      result,
      ours,
      git: theirs,
    } = await bothClones('tags.git', 'depth1.git', { depth: 1 }, ['--depth', '1']);
    expect(ours.shallow).not.toBeNull();
    expect(ours.shallow).toBe(theirs.shallow);
    expect(ours.refs).toEqual(theirs.refs);
    expect(ours.objects).toEqual(theirs.objects);
    expect(result.refs.map((r) => r.name).sort()).toEqual(['HEAD', 'refs/heads/main', 'refs/tags/v10.9.9']);
  });

  it('depth 1 with singleBranch false is git clone --depth 1 --no-single-branch', async () => {
    const { ours, git: theirs } = await bothClones(
      'refs.git',
      'depth1-all.git',
      { depth: 1, singleBranch: false },
      ['--depth', '1', '--no-single-branch'],
    );
    expect(ours.shallow?.split('\n').length).toBeGreaterThan(10);
    expect(ours.shallow).toBe(theirs.shallow);
    expect(ours.refs).toEqual(theirs.refs);
    expect(ours.objects).toEqual(theirs.objects);
  });

  it('a single-branch clone at a tag keeps the tags on its history too, as git clone --single-branch --branch', async () => {
    // v10.0.0 is an annotated tag on main's history: git lists every tag and keeps the 901 on its history.
    const {
      result,
      ours,
      git: theirs,
    } = await bothClones('tags.git', 'at-tag.git', { ref: 'v10.0.0', singleBranch: true }, [
      '--single-branch',
      '--branch',
      'v10.0.0',
    ]);
    expect(result.head.branch).toBeNull();
    expect(ours.refs.filter((r) => r.includes(' refs/tags/'))).toHaveLength(901);
    expect(ours.refs).toEqual(theirs.refs);
    expect(ours.objects).toEqual(theirs.objects);
  });

  it('a single-branch clone keeps the tags that came with its branch, as git clone --single-branch', async () => {
    // A branch of its own with an annotated and a lightweight tag: neither is on master's history.
    const side = async (bare: string) => {
      const tip = await commitOnServer(bare, {
        branch: 'side',
        from: 'origin/master',
        files: { SIDE: 'side\n' },
        message: 'Side work',
      });
      await gitOnServer(bare, ['tag', '-a', '-m', 'Side release', 'side-1.0', tip]);
      await gitOnServer(bare, ['tag', 'side-light', tip]);
    };
    const { ours, git: theirs } = await bothClones(
      'refs.git',
      'single.git',
      { singleBranch: true },
      ['--single-branch'],
      side,
    );
    const tags = (refs: string[]) => refs.filter((r) => r.includes(' refs/tags/'));
    expect(tags(ours.refs)).toHaveLength(40);
    expect(ours.refs.some((r) => r.includes('side'))).toBe(false);
    expect(ours.shallow).toBeNull();
    expect(ours.refs).toEqual(theirs.refs);
    expect(ours.objects).toEqual(theirs.objects);
  });
});
