import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import git from 'isomorphic-git';
import { beforeAll, describe, expect, inject, it } from 'vitest';
import { MissingObjectError } from '../workers/ops/common/errors.ts';
import { maintenanceIdle } from '../workers/ops/maintenance/packMaintenance.ts';
import { type BlobFetchProgress, ensureBlobs, planBlobBatches } from '../workers/ops/sync/lazyBlobs.ts';
import { GITDIR } from '../workers/store/repoFs.ts';
import { exportRepo, reachableObjects, storedObjects } from './support/cloneOracle.ts';
import { SHORT_RETRY, testEngine } from './support/engine.ts';
import { exportDir } from './support/exportGitDir.ts';
import { gitBuffer, git as gitCli } from './support/git.ts';
import { failure, packFiles } from './support/repoChecks.ts';
import { repoStats, resetStats } from './support/serverStats.ts';
import { useTmpDir } from './support/tmpDir.ts';

const { engine, ctx } = testEngine({ retry: SHORT_RETRY });

const serverUrl = inject('gitServerUrl');
const fixturesDir = inject('fixturesDir');
const tmp = useTmpDir('lazy');

/** Blob ids at HEAD of a fixture, in `git ls-tree -r` order (submodules left out). */
async function headBlobs(repo: string): Promise<string[]> {
  const out = await gitCli(['ls-tree', '-r', '--format=%(objecttype) %(objectname)', 'HEAD'], {
    cwd: join(fixturesDir, repo),
  });
  return [
    ...new Set(
      out
        .trim()
        .split('\n')
        .filter((l) => l.startsWith('blob '))
        .map((l) => l.slice(5)),
    ),
  ];
}

/** The ids of `oids` that an export of the repo does not hold, as `git cat-file --batch-all-objects` lists it. */
async function missingInExport(repoId: string, oids: string[], name: string): Promise<string[]> {
  const held = new Set(await storedObjects(await exportRepo(ctx, repoId, tmp(), name)));
  return oids.filter((oid) => !held.has(oid));
}

describe('ensureBlobs on small-sized.git', () => {
  const repo = 'small-sized.git';
  let repoId: string;
  let blobs: string[];

  beforeAll(async () => {
    repoId = (await engine.clone({ url: `${serverUrl}/${repo}` })).repoId;
    blobs = await headBlobs(repo);
  });

  it('fetches N blobs in exactly ceil(N / batch size) requests, and stores them readably', async () => {
    const wanted = blobs.slice(0, 120);
    const size = 25;
    await resetStats();
    const events: BlobFetchProgress[] = [];
    const result = await ensureBlobs(ctx, repoId, wanted, {
      batching: { size, concurrency: 3 },
      onProgress: (p) => events.push(p),
    });
    const stats = await repoStats(repo);
    expect(stats.requests).toBe(Math.ceil(wanted.length / size));
    expect(result.requests).toBe(stats.requests);
    expect(result.bytes).toBe(stats.bytesSent);
    expect(result.fetched).toBe(wanted.length);
    expect(result.objects.map((o) => o.oid).sort()).toEqual([...wanted].sort());

    // Progress only grows, and ends complete.
    for (let i = 1; i < events.length; i++) {
      expect(events[i].objects).toBeGreaterThanOrEqual(events[i - 1].objects);
      expect(events[i].bytes).toBeGreaterThanOrEqual(events[i - 1].bytes);
    }
    expect(events.at(-1)).toMatchObject({ objects: wanted.length, totalObjects: wanted.length });

    const fs = ctx.store.repoFs.open(repoId);
    for (const oid of wanted.slice(0, 10)) {
      const { blob } = await git.readBlob({ fs, gitdir: GITDIR, oid, cache: {} });
      const expected = await gitBuffer(['cat-file', 'blob', oid], { cwd: join(fixturesDir, repo) });
      expect(Buffer.compare(Buffer.from(blob), expected)).toBe(0);
    }
    await maintenanceIdle(ctx, repoId);
  });

  it('the default policy fetches every blob of the history in the requests planBlobBatches plans', async () => {
    const history = await reachableObjects(join(fixturesDir, repo), ['--all', '--filter=object:type=blob']);
    // N from the git CLI: the blobs of the history that an export of the repo does not hold yet.
    const before = await missingInExport(repoId, history, 'before-default');
    const plan = planBlobBatches(before.length, ctx.blobs.estimate(repoId));
    expect(plan.length).toBeGreaterThan(2);
    expect(before.length).toBeLessThan(history.length);
    await resetStats();
    const result = await ensureBlobs(ctx, repoId, history);
    expect((await repoStats(repo)).requests).toBe(plan.length);
    expect(result.fetched).toBe(before.length);
    await maintenanceIdle(ctx, repoId);
    expect(await missingInExport(repoId, history, 'after-default')).toEqual([]);
  });

  it('blobs already stored cost no request', async () => {
    await resetStats();
    const result = await ensureBlobs(ctx, repoId, blobs);
    expect(result).toEqual({ fetched: 0, requests: 0, bytes: 0, objects: [] });
    expect((await repoStats(repo)).requests).toBe(0);
  });

  it('the promisor packs are ones real git reads without fetching: fsck, cat-file', async () => {
    const dir = join(tmp(), 'small-exported');
    await exportDir(ctx.store.repoFs.open(repoId), GITDIR, dir);
    await gitCli(['fsck', '--connectivity-only', '--no-progress'], { cwd: dir });
    const env = { GIT_NO_LAZY_FETCH: '1' };
    const promisors = (await packFiles(ctx, repoId)).filter((f) => f.endsWith('.promisor'));
    expect(promisors.length).toBe((await ctx.store.packs.for(repoId)).packs.length);
    for (const oid of blobs.slice(0, 5)) {
      expect((await gitCli(['cat-file', '-t', oid], { cwd: dir, env })).trim()).toBe('blob');
    }
    // Every pack's .idx is the one `git index-pack` writes for it.
    for (const name of (await packFiles(ctx, repoId)).filter((f) => f.endsWith('.pack'))) {
      const oracle = join(tmp(), `${name}.idx`);
      await gitCli(['index-pack', '-o', oracle, join(dir, 'objects/pack', name)]);
      const ours = await readFile(join(dir, 'objects/pack', name.replace(/\.pack$/, '.idx')));
      expect(Buffer.compare(ours, await readFile(oracle))).toBe(0);
    }
  });
});

describe('sharing and failures on features.git', () => {
  const repo = 'features.git';
  let repoId: string;
  let blobs: string[];

  beforeAll(async () => {
    repoId = (await engine.clone({ url: `${serverUrl}/${repo}` })).repoId;
    blobs = await headBlobs(repo);
  });

  it('concurrent calls for overlapping blobs share requests: one per batch of the union', async () => {
    const a = blobs.slice(0, 6);
    const b = blobs.slice(3, 9);
    await resetStats();
    const [ra, rb] = await Promise.all([
      ensureBlobs(ctx, repoId, a, { batching: { size: 3 } }),
      ensureBlobs(ctx, repoId, b, { batching: { size: 3 } }),
    ]);
    // a: [0,3) and [3,6); b joins [3,6) and fetches [6,9).
    expect((await repoStats(repo)).requests).toBe(3);
    expect(ra.requests + rb.requests).toBe(3);
    expect((await ctx.store.packs.for(repoId)).missing([...a, ...b])).toEqual([]);
    await maintenanceIdle(ctx, repoId);
  });

  it('a request shared with a call that is cancelled still completes for the other', async () => {
    const oid = blobs[9];
    const controller = new AbortController();
    await resetStats();
    // Both calls plan before the reply can arrive: the second joins the first's request, then the first
    // is cancelled once the second has said it waits for it.
    const seen: BlobFetchProgress[] = [];
    const first = ensureBlobs(ctx, repoId, [oid], { signal: controller.signal });
    const second = ensureBlobs(ctx, repoId, [oid], {
      onProgress: (p) => {
        seen.push(p);
        if (seen.length === 1) controller.abort();
      },
    });
    expect((await failure(first)).code).toBe('ABORTED');
    const result = await second;
    expect(seen[0]).toMatchObject({ objects: 0, totalObjects: 1 });
    // The request was the first call's: the second made none of its own.
    expect(result.requests).toBe(0);
    expect((await ctx.store.packs.for(repoId)).has(oid)).toBe(true);
    expect((await repoStats(repo)).requests).toBe(1);
    await maintenanceIdle(ctx, repoId);
  });

  it('an object the server does not have is a MissingObjectError that says so', async () => {
    const ghost = '0123456789abcdef0123456789abcdef01234567';
    const before = await packFiles(ctx, repoId);
    const err = await failure(ensureBlobs(ctx, repoId, [ghost]));
    expect(err).toBeInstanceOf(MissingObjectError);
    expect(err.code).toBe('MISSING_OBJECT');
    expect((err as MissingObjectError).oid).toBe(ghost);
    expect((err as MissingObjectError).notOnServer).toBe(true);
    expect(err.message).toMatch(/0123456789…/);
    expect(await packFiles(ctx, repoId)).toEqual(before);
  });

  it('an id that is not an object id is refused before any request', async () => {
    await resetStats();
    const err = await failure(ensureBlobs(ctx, repoId, ['HEAD']));
    expect(err.code).toBe('INVALID_OBJECT_ID');
    expect((await repoStats(repo)).requests).toBe(0);
  });

  it('an unreachable server is a MissingObjectError keeping the transport error, and stores nothing', async () => {
    const record = (await ctx.store.registry.get(repoId))!;
    const missing = (await ctx.store.packs.for(repoId)).missing(blobs);
    expect(missing.length).toBeGreaterThan(2);
    const before = await packFiles(ctx, repoId);
    await ctx.store.registry.put({ ...record, url: 'http://127.0.0.1:9/features.git' });
    try {
      const err = (await failure(
        ensureBlobs(ctx, repoId, missing.slice(0, 3), { batching: { size: 1 } }),
      )) as MissingObjectError;
      expect(err).toBeInstanceOf(MissingObjectError);
      expect(missing.slice(0, 3)).toContain(err.oid);
      expect(err.notOnServer).toBe(false);
      expect(err.message).toMatch(
        /is not stored in this browser and could not be fetched: Could not reach 127\.0\.0\.1:9/,
      );
      expect(err.message).toMatch(/Connect to the network and try again\.$/);
      expect((err.cause as { code?: string }).code).toBe('NETWORK_ERROR');
      expect(await packFiles(ctx, repoId)).toEqual(before);
    } finally {
      await ctx.store.registry.put(record);
    }
  });

  it('cancelled while the pack arrives: nothing of it is stored, and a retry gets it', async () => {
    // The first 200 KiB version of image.bin (not at HEAD, so not fetched yet) arrives in several chunks, so
    // progress fires before it is complete.
    const big = (
      await gitCli(['rev-parse', 'v0.1:assets/image.bin'], { cwd: join(fixturesDir, repo) })
    ).trim();
    expect((await ctx.store.packs.for(repoId)).has(big)).toBe(false);
    const before = await packFiles(ctx, repoId);
    const controller = new AbortController();
    let progressed = 0;
    const err = await failure(
      ensureBlobs(ctx, repoId, [big], {
        signal: controller.signal,
        onProgress: (p) => {
          if (p.bytes > 0 && ++progressed === 1) controller.abort();
        },
      }),
    );
    expect(progressed).toBeGreaterThan(0);
    expect(err.code).toBe('ABORTED');
    expect(await packFiles(ctx, repoId)).toEqual(before);
    expect((await ctx.store.packs.for(repoId)).has(big)).toBe(false);
    // Everything stored before still reads.
    const fs = ctx.store.repoFs.open(repoId);
    await git.readBlob({ fs, gitdir: GITDIR, oid: blobs[0], cache: {} });

    const retry = await ensureBlobs(ctx, repoId, [big]);
    expect(retry.fetched).toBe(1);
    await maintenanceIdle(ctx, repoId);
  });
});

describe('deleteRepo while a lazy fetch runs', () => {
  it('cancels the fetch; the repo stays deleted and later calls are REPO_NOT_FOUND', async () => {
    const { repoId } = await engine.clone({ url: `${serverUrl}/features.git` });
    const readme = (
      await gitCli(['rev-parse', 'HEAD:README.md'], { cwd: join(fixturesDir, 'features.git') })
    ).trim();
    let deleting: Promise<void> | undefined;
    const reading = failure(
      engine.repo(repoId).readFile(
        { ref: 'HEAD', path: 'assets/random-1.5m.bin' },
        {
          onProgress: (p) => {
            if (p.bytes > 0 && !deleting) deleting = engine.repo(repoId).delete();
          },
        },
      ),
    );
    const err = await reading;
    expect(deleting).toBeDefined();
    await deleting;
    // The read fails as cancelled, however it is wrapped (readFile names the file it could not fetch). Not
    // REPO_NOT_FOUND: that is what a fetch left running gets when its late write finds the repo deleted.
    const codes = [err.code, (err.cause as { code?: string } | undefined)?.code];
    expect(codes, err.message).toContain('ABORTED');
    await maintenanceIdle(ctx, repoId);
    expect((await engine.listRepos()).map((r) => r.id)).not.toContain(repoId);
    expect((await indexedDB.databases()).map((d) => d.name)).not.toContain(ctx.store.repoFs.dbName(repoId));
    for (const call of [
      () => engine.repo(repoId).readFile({ ref: 'HEAD', path: 'README.md' }),
      () => ensureBlobs(ctx, repoId, [readme]),
      () => engine.repo(repoId).listRefs(),
    ]) {
      expect((await failure(call())).code).toBe('REPO_NOT_FOUND');
    }
    // Nothing recreated the database afterwards.
    expect((await indexedDB.databases()).map((d) => d.name)).not.toContain(ctx.store.repoFs.dbName(repoId));
  });
});

describe('presence and bytes moved', () => {
  it('counts the blobs of a tree that are stored against those it names, and the bytes each fetch moved', async () => {
    const bare = join(inject('fixturesDir'), 'features.git');
    const names = (await gitCli(['ls-tree', '-r', 'HEAD'], { cwd: bare }))
      .trim()
      .split('\n')
      .filter((l) => l.split(' ')[1] === 'blob')
      .map((l) => l.split(/\s+/)[2]);
    const { repoId, bytesReceived } = await engine.clone({ url: `${inject('gitServerUrl')}/features.git` });
    const before = await engine.repo(repoId).presence({ ref: 'HEAD' });
    expect(before.blobs).toBe(new Set(names).size);
    expect(before.present).toBe(0);
    expect((await engine.listRepos()).find((r) => r.id === repoId)?.bytesFetched).toBe(bytesReceived);
    const checkout = await engine.repo(repoId).checkout({ ref: 'HEAD' });
    const after = await engine.repo(repoId).presence({ ref: 'HEAD' });
    expect(after.present).toBe(after.blobs);
    expect((await engine.listRepos()).find((r) => r.id === repoId)?.bytesFetched).toBe(
      bytesReceived + checkout.bytes,
    );
  });
});

describe('cancellation from the first progress report', () => {
  it('stores nothing when the caller aborts inside its first onProgress call', async () => {
    const { repoId } = await engine.clone({ url: `${inject('gitServerUrl')}/features.git` });
    const packsBefore = (await ctx.store.packs.for(repoId)).packs.length;
    const tree = await engine.repo(repoId).readTree({ ref: 'HEAD' });
    const blobs = tree.entries.filter((e) => e.type === 'blob').map((e) => e.oid);
    const controller = new AbortController();
    const err = await ensureBlobs(ctx, repoId, blobs, {
      signal: controller.signal,
      onProgress: () => controller.abort(),
    }).catch((e) => e);
    expect(err.code).toBe('ABORTED');
    await maintenanceIdle(ctx, repoId);
    expect((await ctx.store.packs.for(repoId)).packs.length).toBe(packsBefore);
  });
});
