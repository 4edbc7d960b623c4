import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { GitServer } from '../server/gitServer.ts';
import { exportRepo } from './support/cloneOracle.ts';
import { testEngine } from './support/engine.ts';
import { git } from './support/git.ts';
import { serveScratchRepo } from './support/scratchServer.ts';
import { useTmpDir } from './support/tmpDir.ts';

const { engine, ctx } = testEngine();
const tmp = useTmpDir('shallow');
let server: GitServer;
let url: string;

beforeAll(async () => {
  server = await serveScratchRepo(join(tmp(), 'repo'), [], async (run) => {
    const at = (n: number) => ({
      GIT_AUTHOR_DATE: `${1e9 + n} +0000`,
      GIT_COMMITTER_DATE: `${1e9 + n} +0000`,
    });
    await run(['commit', '-q', '--allow-empty', '-m', 'one'], at(1));
    await run(['tag', '-a', '-m', 'first', 'v1'], at(2));
    await run(['commit', '-q', '--allow-empty', '-m', 'two'], at(3));
    await run(['tag', 'light'], at(4));
    await run(['commit', '-q', '--allow-empty', '-m', 'three'], at(5));
    await run(['checkout', '-q', '-b', 'side', 'HEAD~2'], at(6));
    await run(['commit', '-q', '--allow-empty', '-m', 'side'], at(7));
    await run(['tag', '-a', '-m', 'on side', 'vside'], at(8));
    await run(['checkout', '-q', 'main'], at(9));
  });
  url = `${server.url}/repo.git`;
});
afterAll(() => server?.close());
afterEach(async () => {
  for (const r of await engine.listRepos()) await engine.repo(r.id).delete();
});

async function gitClone(args: string[]): Promise<string> {
  const dir = join(tmp(), `git-${Math.random().toString(36).slice(2)}`);
  await git(['clone', '-q', ...args, url, dir]);
  return join(dir, '.git');
}

/** What must be git's: the shallow file's bytes, every ref, the commits held, the refs the .promisor names. */
async function describeDir(gitDir: string) {
  const shallow = await readFile(join(gitDir, 'shallow'), 'utf8').catch(() => '(none)');
  const refs = await git(['for-each-ref', '--format=%(objectname) %(refname)'], { cwd: gitDir });
  const commits = (await git(['rev-list', '--all'], { cwd: gitDir })).split('\n').sort().join('\n');
  const packDir = join(gitDir, 'objects', 'pack');
  const promisorNames = (await readdir(packDir)).filter((f) => f.endsWith('.promisor'));
  const promisor = await Promise.all(promisorNames.map((f) => readFile(join(packDir, f), 'utf8')));
  return { shallow, refs, commits, promisor };
}

// A tag on an older commit of the branch, a lightweight one on the commit below the tip, and a tag on
// another branch: which of them a clone wants decides its shallow boundaries and the commits it holds.
// A `depth` implies a single branch unless `singleBranch: false`, as git clone's implies --single-branch.
describe('a clone matches git clone of the same options when tags name commits off the tips', () => {
  for (const [name, opts, args] of [
    ['depth 1, single branch', { depth: 1, singleBranch: true }, ['--depth=1', '--single-branch']],
    ['depth 2, single branch', { depth: 2, singleBranch: true }, ['--depth=2', '--single-branch']],
    ['single branch, whole history', { singleBranch: true }, ['--single-branch']],
    ['depth 1, branch left to the default', { depth: 1 }, ['--depth=1']],
    ['depth 1, every branch', { depth: 1, singleBranch: false }, ['--depth=1', '--no-single-branch']],
    ['depth 1 at a tag', { depth: 1, singleBranch: true, ref: 'light' }, ['--depth=1', '--branch=light']],
    [
      'depth 1 at an annotated tag',
      { depth: 1, singleBranch: true, ref: 'v1' },
      ['--depth=1', '--branch=v1'],
    ],
    ['the first view', { firstView: true }, ['--depth=1', '--single-branch', '--no-tags']],
  ] as const) {
    it(`${name}: git ${args.join(' ')}`, async () => {
      const { repoId } = await engine.clone({ url, ...opts });
      const ours = await exportRepo(ctx, repoId, tmp(), 'ours');
      const theirs = await gitClone(['--filter=blob:none', ...args]);
      expect(await describeDir(ours)).toEqual(await describeDir(theirs));
      await git(['fsck', '--connectivity-only', '--no-progress'], { cwd: ours });
    });
  }
});
