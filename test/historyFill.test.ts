import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, inject, it } from 'vitest';
import { ensureFixtures, SIZED_PRESETS } from '../server/fixtures/index.ts';
import { maintenanceIdle } from '../workers/ops/maintenance/packMaintenance.ts';
import { fillHistory } from '../workers/ops/sync/historyFill.ts';
import { GITDIR } from '../workers/store/repoFs.ts';
import { exportRepo, lsRemoteLines, storedObjects } from './support/cloneOracle.ts';
import { testEngine } from './support/engine.ts';
import { git } from './support/git.ts';
import { startRelay } from './support/relay.ts';
import { trackingRefs } from './support/repoChecks.ts';
import { repoStats, resetStats } from './support/serverStats.ts';
import { useTmpDir } from './support/tmpDir.ts';

const { engine, ctx } = testEngine();

const serverUrl = inject('gitServerUrl');
const tmp = useTmpDir('history-fill');

/** A plain `git clone --bare --filter=blob:none` of the same URL: what the fill must end up holding. */
async function gitBlobNoneClone(url: string, name: string): Promise<string> {
  const dir = join(tmp(), `git-${name}.git`);
  await git(['clone', '-q', '--bare', '--filter=blob:none', url, dir]);
  return dir;
}

async function hasShallowFile(repoId: string): Promise<boolean> {
  return ctx.store.repoFs
    .open(repoId)
    .promises.stat(`${GITDIR}/shallow`)
    .then(
      () => true,
      () => false,
    );
}

/** The repo holds exactly what git's blob:none clone holds, its refs are the server's, fsck passes. */
async function expectLikeAClone(
  repoId: string,
  url: string,
  name: string,
  extra: string[] = [],
  theirs?: string,
) {
  // The fill's last step left the commit-graph to background steps: a copy made meanwhile could list a
  // layer the next step replaces before it is read.
  await maintenanceIdle(ctx, repoId);
  const ours = await exportRepo(ctx, repoId, tmp(), name);
  theirs ??= await gitBlobNoneClone(url, name);
  expect(await storedObjects(ours)).toEqual([...(await storedObjects(theirs)), ...extra].sort());
  expect(await trackingRefs(ours, { asRemote: true })).toEqual(
    await lsRemoteLines(url, ['--heads', '--tags', '--refs']),
  );
  await git(['fsck', '--no-progress', '--connectivity-only'], { cwd: ours });
  expect(await hasShallowFile(repoId)).toBe(false);
  const record = await ctx.store.registry.get(repoId);
  expect(record?.historyFill).toBeUndefined();
  expect(record?.shallow).toBe(false);
}

describe('first view, then the history fill', () => {
  it('the first view asks for one ref at depth 1 without blobs; the fill brings what a clone holds', async () => {
    const requests: { path: string; body: Buffer }[] = [];
    const relay = await startRelay(serverUrl, { kind: 'record', requests });
    try {
      const url = `${relay.url}/features.git`;
      const first = await engine.clone({ url, firstView: true });
      expect(first.historyFillPending).toBe(true);
      const fetches = requests.filter((r) => r.body.includes('command=fetch'));
      expect(fetches).toHaveLength(1);
      const lines = fetches[0].body.toString('latin1');
      expect(lines.match(/want [0-9a-f]{40}/g)).toHaveLength(1);
      expect(lines).toContain(`want ${first.head.oid}`);
      expect(lines).toContain('deepen 1');
      expect(lines).toContain('filter blob:none');
      expect(lines).not.toContain('include-tag');
      expect(first.objects).toMatchObject({ commit: 1, blob: 0 });
      expect(await hasShallowFile(first.repoId)).toBe(true);
      // The config is a normal clone's: every branch, so the fill and later fetches get them all.
      const exported = await exportRepo(ctx, first.repoId, tmp(), 'first-view');
      expect(await git(['config', '--get-all', 'remote.origin.fetch'], { cwd: exported })).toBe(
        '+refs/heads/*:refs/remotes/origin/*\n',
      );
      // The first view reads its README: one blob, fetched when asked for.
      const readme = await engine.repo(first.repoId).readFile({ ref: 'HEAD', path: 'README.md' });
      expect(readme.bytes.length).toBeGreaterThan(0);

      const fill = await fillHistory(ctx, first.repoId, { depths: [2, 4] });
      expect(fill).toMatchObject({ complete: true, busyElsewhere: false, steps: 3 });
      await expectLikeAClone(first.repoId, url, 'features', [readme.oid]);
    } finally {
      await relay.close();
    }
  });

  // medium.git (10,000 commits, 6.8 MB without blobs): on small-sized.git (160 KB) the few hundred bytes
  // of each step's info/refs, ls-refs and acknowledgments alone are 1 %.
  it("fetches nothing twice: first view plus fill bytes are within 1 % of git's own blob:none clone", async () => {
    const { dir } = await ensureFixtures({ sized: [SIZED_PRESETS.medium] });
    const url = `${serverUrl}/medium.git`;
    expect(existsSync(join(dir, 'medium.git'))).toBe(true);
    // Both counted by the server, as the bytes it sent: the same measure for the git CLI and for us.
    await resetStats();
    const first = await engine.clone({ url, firstView: true });
    const fill = await fillHistory(ctx, first.repoId, { depths: [100, 1_000] });
    expect(fill.steps).toBe(3);
    const ours = (await repoStats('medium.git')).bytesSent;
    await resetStats();
    const theirs = await gitBlobNoneClone(url, 'medium');
    const gits = (await repoStats('medium.git')).bytesSent;
    expect(gits).toBeGreaterThan(1_000_000);
    expect(Math.abs(ours / gits - 1)).toBeLessThan(0.015);
    await expectLikeAClone(first.repoId, url, 'medium', [], theirs);
  }, 300_000);

  it('a fill stopped between steps, or cancelled inside one, leaves a valid shallow repo a second fill completes', async () => {
    const url = `${serverUrl}/small-sized.git`;
    const first = await engine.clone({ url, firstView: true });
    const one = await fillHistory(ctx, first.repoId, { depths: [10, 100], maxSteps: 1 });
    expect(one).toMatchObject({ complete: false, steps: 1 });
    expect((await ctx.store.registry.get(first.repoId))?.historyFill?.depth).toBe(10);
    const shallowRepo = await exportRepo(ctx, first.repoId, tmp(), 'stopped');
    await git(['fsck', '--no-progress', '--connectivity-only'], { cwd: shallowRepo });
    expect(Number(await git(['rev-list', '--count', 'HEAD'], { cwd: shallowRepo }))).toBe(10);

    // Cancelled while the next step's pack arrives: nothing of that step is stored.
    const abort = new AbortController();
    const cancelled = fillHistory(
      ctx,
      first.repoId,
      { depths: [10, 100] },
      {
        signal: abort.signal,
        onProgress: (p) => {
          if (p.phase === 'filling' && p.fetch?.phase === 'receiving') abort.abort();
        },
      },
    );
    await expect(cancelled).rejects.toMatchObject({ code: 'ABORTED' });
    const still = await exportRepo(ctx, first.repoId, tmp(), 'cancelled');
    await git(['fsck', '--no-progress', '--connectivity-only'], { cwd: still });
    expect(Number(await git(['rev-list', '--count', 'HEAD'], { cwd: still }))).toBe(10);
    expect(await hasShallowFile(first.repoId)).toBe(true);

    const rest = await fillHistory(ctx, first.repoId, { depths: [10, 100] });
    expect(rest.complete).toBe(true);
    await expectLikeAClone(first.repoId, url, 'small-sized-resumed');
  });

  it('a file read and the working tree (its checkout) do not wait for a fill step still receiving', async () => {
    const relay = await startRelay(serverUrl, { kind: 'record', requests: [] });
    try {
      const url = `${relay.url}/small-sized.git`;
      const first = await engine.clone({ url, firstView: true });
      // The clone made 2 POSTs (ls-refs, fetch); the fill's step makes ls-refs, then its fetch rounds.
      relay.setMode({ kind: 'hold', post: 4, afterBytes: 0 });
      const filling = fillHistory(ctx, first.repoId, { depths: [] });
      await relay.holding;
      const { paths } = await engine.repo(first.repoId).listPaths({ ref: 'HEAD' });
      const read = await engine.repo(first.repoId).readFile({ ref: 'HEAD', path: paths.split('\n')[0] });
      expect(read.bytes.length).toBeGreaterThanOrEqual(0);
      // The working-tree view checks out under the write lock, which the step does not hold while receiving.
      const status = await engine.repo(first.repoId).status();
      expect(status.entries).toEqual([]);
      relay.release();
      expect((await filling).complete).toBe(true);
      // The checkout fetched the tip's blobs, the file read one of them.
      const tipBlobs = await git(['ls-tree', '-r', '--format=%(objecttype) %(objectname)', 'HEAD'], {
        cwd: join(inject('fixturesDir'), 'small-sized.git'),
      });
      const blobs = new Set(
        tipBlobs
          .split('\n')
          .filter((l) => l.startsWith('blob '))
          .map((l) => l.slice(5)),
      );
      expect(blobs.has(read.oid)).toBe(true);
      await expectLikeAClone(first.repoId, url, 'small-sized-held', [...blobs]);
    } finally {
      await relay.close();
    }
  });

  it('deleting the repo stops its fill: nothing is stored after the delete', async () => {
    const relay = await startRelay(serverUrl, { kind: 'record', requests: [] });
    try {
      const first = await engine.clone({ url: `${relay.url}/small-sized.git`, firstView: true });
      relay.setMode({ kind: 'hold', post: 4, afterBytes: 0 });
      const filling = fillHistory(ctx, first.repoId, { depths: [] }).then(
        () => null,
        (err: { code?: string }) => err,
      );
      await relay.holding;
      await engine.repo(first.repoId).delete();
      relay.release();
      expect(await filling).toMatchObject({ code: 'ABORTED' });
      expect(await ctx.store.registry.get(first.repoId)).toBeUndefined();
      expect((await indexedDB.databases()).map((d) => d.name)).not.toContain(`blobless-repo-${first.repoId}`);
    } finally {
      await relay.close();
    }
  });

  it('a clone the person made shallow is not a first view, and is never filled', async () => {
    const url = `${serverUrl}/small-sized.git`;
    const cloned = await engine.clone({ url, depth: 3, firstView: true });
    expect(cloned.historyFillPending).toBe(false);
    expect((await ctx.store.registry.get(cloned.repoId))?.historyFill).toBeUndefined();
    const fill = await fillHistory(ctx, cloned.repoId);
    expect(fill).toMatchObject({ complete: true, steps: 0 });
    expect(await hasShallowFile(cloned.repoId)).toBe(true);
  });
});
