// The commit-graph the worker writes as history arrives, against git: after a clone, a history fill and
// three fetches, the exported repository passes `git commit-graph verify` and `git fsck`, and its chain
// is byte for byte what `git commit-graph write --reachable --split --changed-paths` writes in a git
// blob:none clone taken through the same steps.
import { readdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, inject, it } from 'vitest';
import { api } from '../workers/api.ts';
import { COMMIT_GRAPHS_DIR } from '../workers/ops/common/commitGraphAccess.ts';
import { commitGraphStep } from '../workers/ops/maintenance/commitGraphUpdate.ts';
import { maintenanceIdle } from '../workers/ops/maintenance/packMaintenance.ts';
import { flushRepoFs, openRepoFs } from '../workers/store/repoFs.ts';
import { withRepoLock } from '../workers/store/repoLock.ts';
import { exportRepo } from './support/cloneOracle.ts';
import { git } from './support/git.ts';
import { serveScratchRepo } from './support/scratchServer.ts';
import { useTmpDir } from './support/tmpDir.ts';

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
  await maintenanceIdle(repoId);
  const dir = await exportRepo(repoId, tmp(), name);
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
    const { repoId } = await api.clone({ url: `${serverUrl}/blame.git` });
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
    const { repoId } = await api.clone({ url: `${serverUrl}/features.git`, firstView: true });
    expect(await chainOf(await exportAndVerify(repoId, 'first-view'))).toEqual({});
    await api.fillHistory(repoId);
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
      const { repoId } = await api.clone({ url });
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
        await api.fetch(repoId);
        await git(['fetch', '-q', 'origin', '+refs/heads/*:refs/heads/*'], { cwd: twin, env: GIT_ENV });
        await gitWritesGraph(twin);
        const ours = await chainOf(await exportAndVerify(repoId, `fetch-${step + 1}`));
        expect(ours).toEqual(await chainOf(twin));
      }
    } finally {
      await server.close();
    }
  });

  it('a long history is written in steps, each the layer git writes given the same commits', async () => {
    const { repoId } = await api.clone({ url: `${serverUrl}/blame.git` });
    await maintenanceIdle(repoId);
    // The clone wrote its graph at once (a short history): removed, so that the steps write it again.
    await withRepoLock(repoId, 'test', async () => {
      const fs = openRepoFs(repoId).promises;
      for (const name of (await fs.readdir(COMMIT_GRAPHS_DIR)) as string[])
        await fs.unlink(`${COMMIT_GRAPHS_DIR}/${name}`);
      await flushRepoFs(repoId);
    });
    const twin = join(tmp(), 'twin-steps.git');
    await git(['clone', '-q', '--bare', '--filter=blob:none', `${serverUrl}/blame.git`, twin], {
      env: GIT_ENV,
    });
    const total = Number((await git(['rev-list', '--all', '--count'], { cwd: twin, env: GIT_ENV })).trim());
    // 120 commits; then a step told at once that an operation waits (it stops after its first check);
    // then the rest. git's strategy leaves two layers: 120, and the other two merged.
    const steps = [{ maxCommits: 120 }, { stopWhen: async () => true }, {}];
    const sizes: number[] = [];
    let left = -1;
    for (const hooks of steps) {
      const step = await withRepoLock(repoId, 'test', () => commitGraphStep(repoId, hooks));
      if (!step) throw new Error('The repository is shallow.');
      sizes.push(step.written.length);
      left = step.left;
      await git(['commit-graph', 'write', '--split', '--changed-paths', '--stdin-commits', '--no-progress'], {
        cwd: twin,
        env: GIT_ENV,
        input: step.written.map((oid) => `${oid}\n`).join(''),
      });
      const ours = await exportAndVerify(repoId, `step-${sizes.length}`);
      expect(await chainOf(ours)).toEqual(await chainOf(twin));
    }
    expect(sizes).toEqual([120, 32, total - 152]);
    expect(left).toBe(0);
    expect(Object.keys(await chainOf(twin))).toHaveLength(3);
  });
});
