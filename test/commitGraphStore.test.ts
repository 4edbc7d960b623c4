// The commit-graph the worker writes as history arrives, against git: after a clone, a history fill and
// three fetches, the exported repository passes `git commit-graph verify` and `git fsck`, and its chain
// is byte for byte what `git commit-graph write --reachable --split --changed-paths` writes in a git
// blob:none clone taken through the same steps.
import { readdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, inject, it } from 'vitest';
import { maintenanceIdle } from '../workers/ops/maintenance/packMaintenance.ts';
import { exportRepo } from './support/cloneOracle.ts';
import { testEngine } from './support/engine.ts';
import { git } from './support/git.ts';
import { serveScratchRepo } from './support/scratchServer.ts';
import { useTmpDir } from './support/tmpDir.ts';

const { engine, ctx } = testEngine();
const serverUrl = inject('gitServerUrl');
const tmp = useTmpDir('commit-graph-store');
const GIT_ENV = { GIT_CONFIG_GLOBAL: '/dev/null', GIT_CONFIG_NOSYSTEM: '1' };

/** The chain of an exported repository: commit-graph-chain and each layer, by name. */
async function chainOf(gitDir: string): Promise<Record<string, string>> {
  const dir = join(gitDir, 'objects/info/commit-graphs');
  const files: Record<string, string> = {};
  for (const name of await readdir(dir).catch(() => [])) {
    files[name] = (await readFile(join(dir, name))).toString('hex');
  }
  return files;
}

/** Export, then git's checks: every commit of the graph matches its object, and the repository is whole. */
async function exportAndVerify(repoId: string, name: string): Promise<string> {
  await maintenanceIdle(ctx, repoId);
  const dir = await exportRepo(ctx, repoId, tmp(), name);
  await git(['commit-graph', 'verify'], { cwd: dir, env: GIT_ENV });
  await git(['fsck', '--no-progress'], { cwd: dir, env: GIT_ENV });
  return dir;
}

/** git's own graph for a git repository, written as the worker writes it. */
async function gitWritesGraph(gitDir: string): Promise<void> {
  await git(['commit-graph', 'write', '--reachable', '--split', '--changed-paths', '--no-progress'], {
    cwd: gitDir,
    env: GIT_ENV,
  });
}

describe('the commit-graph, written as history arrives', () => {
  it('a clone writes the graph git writes, and git verifies it', async () => {
    const { repoId } = await engine.clone({ url: `${serverUrl}/blame.git` });
    const ours = await exportAndVerify(repoId, 'clone');
    const twin = join(tmp(), 'twin-clone.git');
    await git(['clone', '-q', '--bare', '--filter=blob:none', `${serverUrl}/blame.git`, twin], {
      env: GIT_ENV,
    });
    await gitWritesGraph(twin);
    const chain = await chainOf(ours);
    expect(Object.keys(chain)).toHaveLength(2);
    expect(chain).toEqual(await chainOf(twin));
  });

  it('a first-view clone writes none while shallow; the fill writes it whole', async () => {
    const { repoId } = await engine.clone({ url: `${serverUrl}/features.git`, firstView: true });
    expect(await chainOf(await exportAndVerify(repoId, 'first-view'))).toEqual({});
    await engine.repo(repoId).fillHistory();
    const ours = await exportAndVerify(repoId, 'filled');
    const twin = join(tmp(), 'twin-fill.git');
    await git(['clone', '-q', '--bare', '--filter=blob:none', `${serverUrl}/features.git`, twin], {
      env: GIT_ENV,
    });
    await gitWritesGraph(twin);
    expect(await chainOf(ours)).toEqual(await chainOf(twin));
  });

  it('three fetches add layers as git --split does, merged by its strategy', {
    timeout: 120_000,
  }, async () => {
    const server = await serveScratchRepo(join(tmp(), 'moving'), [], async (run) => {
      for (let i = 0; i < 12; i++) {
        await writeFile(join(tmp(), 'moving', 'work', `f${i % 4}.txt`), `version ${i}\n`);
        await run(['add', '-A']);
        await run(['commit', '-q', '-m', `commit ${i}`]);
      }
    });
    try {
      const url = `${server.url}/repo.git`;
      const { repoId } = await engine.clone({ url });
      const twin = join(tmp(), 'twin-fetch.git');
      await git(['clone', '-q', '--bare', '--filter=blob:none', url, twin], { env: GIT_ENV });
      await gitWritesGraph(twin);
      expect(await chainOf(await exportAndVerify(repoId, 'fetch-0'))).toEqual(await chainOf(twin));
      const work = join(tmp(), 'moving', 'work');
      const run = (args: string[]) =>
        git(['-c', 'user.name=Ada Fixture', '-c', 'user.email=ada@fixtures.blobless.test', ...args], {
          cwd: work,
          env: GIT_ENV,
        });
      // 2 commits (a layer on top), then 30 (the top layers merge into it), then 1.
      for (const [step, count] of [2, 30, 1].entries()) {
        for (let i = 0; i < count; i++) {
          await writeFile(join(work, `g${i % 3}.txt`), `step ${step} commit ${i}\n`);
          await run(['add', '-A']);
          await run(['commit', '-q', '-m', `step ${step} commit ${i}`]);
        }
        await run(['push', '-q', server.bare, 'main']);
        await engine.repo(repoId).fetch();
        await git(['fetch', '-q', 'origin', '+refs/heads/*:refs/heads/*'], { cwd: twin, env: GIT_ENV });
        await gitWritesGraph(twin);
        const ours = await chainOf(await exportAndVerify(repoId, `fetch-${step + 1}`));
        expect(ours).toEqual(await chainOf(twin));
      }
    } finally {
      await server.close();
    }
  });
});
