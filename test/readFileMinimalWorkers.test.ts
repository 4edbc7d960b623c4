import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { minimalRepoId } from '../workers/ops/read/readFileMinimal.ts';
import { GITDIR } from '../workers/store/repoFs.ts';
import { testEngine } from './support/engine.ts';
import { FakeLockManager } from './support/fakeLocks.ts';
import { git, gitBuffer } from './support/git.ts';
import { repoStats, resetStats } from './support/serverStats.ts';

const serverUrl = inject('gitServerUrl');
const bare = join(inject('fixturesDir'), 'small-sized.git');
const url = `${serverUrl}/small-sized.git`;

/**
 * A second widget's worker: an engine of its own (its own caches and pack sets), on the same storage and
 * the same locks (navigator.locks, as every worker of a profile shares them).
 */
function worker() {
  const { engine, ctx } = testEngine();
  return {
    ctx,
    readFileMinimal: (url: string, ref: string, path: string) => engine.readFileMinimal({ url, ref, path }),
  };
}

describe('readFileMinimal from two workers of one profile (two widgets of one page)', () => {
  const nav = globalThis.navigator as { locks?: unknown };
  beforeAll(() => {
    nav.locks = new FakeLockManager();
  });
  afterAll(() => {
    delete nav.locks;
  });

  it('keeps what each stored: the shallow list, the packs, and a third worker finds both files', async () => {
    const a = worker();
    const b = worker();
    const paths = ['lib/committer-17.ts', 'lib/entries-5.ts'];
    const older = (await git(['rev-parse', 'main~3'], { cwd: bare })).trim();
    const [ra, rb] = await Promise.all([
      a.readFileMinimal(url, 'main', paths[0]),
      b.readFileMinimal(url, older, paths[1]),
    ]);
    expect(ra.commit).not.toBe(rb.commit);

    const c = worker();
    await resetStats();
    for (const [ref, path] of [
      [ra.commit, paths[0]],
      [rb.commit, paths[1]],
    ]) {
      const read = await c.readFileMinimal(url, ref, path);
      expect(Buffer.from(read.file!.bytes)).toEqual(
        await gitBuffer(['show', `${ref}:${path}`], { cwd: bare }),
      );
    }
    // Given by commit id, stored ones need no request beyond info/refs.
    expect((await repoStats('small-sized.git')).requests).toBe(2);
    const shallow = (await c.ctx.store.repoFs
      .open(minimalRepoId(url))
      .promises.readFile(`${GITDIR}/shallow`, 'utf8')) as string;
    expect(shallow.trim().split('\n').sort()).toEqual([ra.commit, rb.commit].sort());
  });

  it('does not fetch again what another worker stored since this one last looked', async () => {
    const a = worker();
    const b = worker();
    // Both have read the repository once, so both hold its pack set in memory.
    await a.readFileMinimal(url, 'main', 'lib/committer-17.ts');
    await b.readFileMinimal(url, 'main', 'lib/committer-17.ts');
    const path = 'lib/entries-6/await-127.ts';
    await a.readFileMinimal(url, 'main', path);
    await resetStats();
    const read = await b.readFileMinimal(url, 'main', path);
    expect(Buffer.from(read.file!.bytes)).toEqual(await gitBuffer(['show', `main:${path}`], { cwd: bare }));
    expect((await repoStats('small-sized.git')).requests).toBe(2);
  });
});
