import { readFile as readDiskFile } from 'node:fs/promises';
import { join } from 'node:path';
import git from 'isomorphic-git';
import { beforeAll, describe, expect, inject, it } from 'vitest';
import { openRepo } from '../workers/ops/common/repoAccess.ts';
import { geometricSplit, maintenanceIdle, maybeRepack } from '../workers/ops/maintenance/packMaintenance.ts';
import { readFile } from '../workers/ops/read/readFile.ts';
import { ensureBlobs } from '../workers/ops/sync/lazyBlobs.ts';
import { GITDIR } from '../workers/store/repoFs.ts';
import { testEngine } from './support/engine.ts';
import { exportDir } from './support/exportGitDir.ts';
import { gitBuffer, git as gitCli } from './support/git.ts';
import { failure } from './support/repoChecks.ts';
import { repoStats, resetStats } from './support/serverStats.ts';
import { useTmpDir } from './support/tmpDir.ts';

const { engine, ctx } = testEngine();

const serverUrl = inject('gitServerUrl');
const fixturesDir = inject('fixturesDir');
const repo = 'features.git';
const bare = join(fixturesDir, repo);
const tmp = useTmpDir('maint');

async function rev(spec: string): Promise<string> {
  return (await gitCli(['rev-parse', spec], { cwd: bare })).trim();
}

async function packFiles(repoId: string): Promise<string[]> {
  return (await ctx.store.repoFs.open(repoId).promises.readdir(`${GITDIR}/objects/pack`)).sort();
}

describe('geometricSplit, as git repack --geometric=2 chooses', () => {
  it.each([
    [[], 0],
    [[5], 0],
    [[1, 1], 2],
    [[1, 2, 4, 8], 0],
    [[1, 1, 1, 100], 3],
    [[1, 1, 1, 1, 1, 3, 250], 6],
    [[10, 10, 10, 25], 4],
  ])('%j merges the %i smallest', (counts, expected) => {
    expect(geometricSplit(counts)).toBe(expected);
  });
});

describe('merging the small promisor packs of features.git', () => {
  let repoId: string;
  let evolving: string[];
  let singles: { path: string; oid: string }[];
  let clonePack: string;

  beforeAll(async () => {
    repoId = (await engine.clone({ url: `${serverUrl}/${repo}` })).repoId;
    clonePack = (await ctx.store.packs.for(repoId)).packs[0].checksum;
    // Three versions of a file git stores as deltas of one another: the server sends them as ofs-deltas,
    // which the merge must carry over with their bases.
    const versions = (
      await gitCli(['log', '--format=%H', '-3', 'main', '--', 'notes/evolving.txt'], { cwd: bare })
    )
      .trim()
      .split('\n');
    evolving = await Promise.all(versions.map((c) => rev(`${c}:notes/evolving.txt`)));
    singles = [];
    for (const path of [
      'README.md',
      'src/new-name.js',
      'scripts/build.sh',
      'assets/random-64k.bin',
      'notes/README.txt',
    ]) {
      singles.push({ path, oid: await rev(`HEAD:${path}`) });
    }
  });

  it('leaves the packs alone below the threshold', async () => {
    expect(await maybeRepack(ctx, repoId)).toBeNull();
  });

  it('merges them into one promisor pack that holds every object, and deletes the small ones', async () => {
    await ensureBlobs(ctx, repoId, evolving);
    for (const s of singles) await readFile(ctx, repoId, 'HEAD', s.path);
    await maintenanceIdle(ctx, repoId);
    const before = (await ctx.store.packs.for(repoId)).packs.map((p) => p.checksum);
    expect(before).toHaveLength(7);
    const small = before.filter((c) => c !== clonePack);

    const result = await maybeRepack(ctx, repoId, { threshold: 3 });
    expect(result).toEqual({ merged: 6, packs: 2 });

    const files = await packFiles(repoId);
    for (const checksum of small) expect(files.filter((f) => f.includes(checksum))).toEqual([]);
    const after = (await ctx.store.packs.for(repoId)).packs.map((p) => p.checksum);
    const merged = after.find((c) => c !== clonePack)!;
    expect(files).toEqual(
      [clonePack, merged].flatMap((c) => ['idx', 'pack', 'promisor'].map((e) => `pack-${c}.${e}`)).sort(),
    );

    // isomorphic-git's cache let go of the deleted packs (it had loaded them for readFile).
    const cache = (await openRepo(ctx, repoId)).cache as Record<symbol, unknown>;
    const cached = Object.getOwnPropertySymbols(cache)
      .map((k) => cache[k])
      .find((v): v is Map<string, unknown> => v instanceof Map);
    expect([...(cached?.keys() ?? [])].filter((k) => small.some((c) => k.includes(c)))).toEqual([]);

    // Every object reads: through the cache readFile kept across the merge, and a fresh one.
    for (const s of singles) {
      const file = await readFile(ctx, repoId, 'HEAD', s.path);
      expect(
        Buffer.compare(Buffer.from(file.bytes), await gitBuffer(['cat-file', 'blob', s.oid], { cwd: bare })),
      ).toBe(0);
    }
    const fs = ctx.store.repoFs.open(repoId);
    for (const oid of evolving) {
      const { blob } = await git.readBlob({ fs, gitdir: GITDIR, oid, cache: {} });
      expect(
        Buffer.compare(Buffer.from(blob), await gitBuffer(['cat-file', 'blob', oid], { cwd: bare })),
      ).toBe(0);
    }

    // Real git agrees: connectivity, every blob present without fetching, git's own index of the new pack.
    const dir = join(tmp(), 'merged');
    await exportDir(fs, GITDIR, dir);
    await gitCli(['fsck', '--connectivity-only', '--no-progress'], { cwd: dir });
    for (const oid of [...evolving, ...singles.map((s) => s.oid)]) {
      expect(
        (await gitCli(['cat-file', '-t', oid], { cwd: dir, env: { GIT_NO_LAZY_FETCH: '1' } })).trim(),
      ).toBe('blob');
    }
    const packPath = join(dir, 'objects/pack', `pack-${merged}.pack`);
    const oracle = join(tmp(), 'merged-oracle.idx');
    await gitCli(['index-pack', '-o', oracle, packPath]);
    expect(
      Buffer.compare(await readDiskFile(packPath.replace(/pack$/, 'idx')), await readDiskFile(oracle)),
    ).toBe(0);
    // The deltas came through as deltas: verify-pack lists a depth and base for them.
    const verify = await gitCli(['verify-pack', '-v', packPath.replace(/pack$/, 'idx')]);
    const deltas = verify
      .split('\n')
      .filter((l) => /^[0-9a-f]{40} blob +\d+ \d+ \d+ \d+ [0-9a-f]{40}$/.test(l));
    expect(deltas.length).toBeGreaterThan(0);
  });

  it("reads between the new pack's write and the old packs' deletion give git's bytes", async () => {
    const more = ['empty.txt', 'docs/with space/plain name.txt', 'assets/image.bin', 'readme-link'];
    for (const path of more) await readFile(ctx, repoId, 'HEAD', path);
    await maintenanceIdle(ctx, repoId);
    // Nothing fits under a 1-byte limit on the merged pack.
    expect(await maybeRepack(ctx, repoId, { threshold: 2, maxPackBytes: 1 })).toBeNull();
    const old = (await ctx.store.packs.for(repoId)).packs
      .map((p) => p.checksum)
      .filter((c) => c !== clonePack);
    expect(old.length).toBeGreaterThan(2);
    const paths = [...more, ...singles.map((s) => s.path)];
    let paused = false;
    const result = await maybeRepack(ctx, repoId, {
      threshold: 2,
      beforeDeletingOldPacks: async () => {
        paused = true;
        // The old packs and the new one are all on disk now.
        const files = await packFiles(repoId);
        for (const checksum of old) expect(files).toContain(`pack-${checksum}.pack`);
        expect(files.filter((f) => f.endsWith('.pack'))).toHaveLength(old.length + 2);
        const fs = ctx.store.repoFs.open(repoId);
        await resetStats();
        for (const path of paths) {
          const file = await readFile(ctx, repoId, 'HEAD', path);
          const expected = await gitBuffer(['cat-file', 'blob', file.oid], { cwd: bare });
          expect(Buffer.compare(Buffer.from(file.bytes), expected), path).toBe(0);
          const { blob } = await git.readBlob({ fs, gitdir: GITDIR, oid: file.oid, cache: {} });
          expect(Buffer.compare(Buffer.from(blob), expected), path).toBe(0);
        }
        // Read from the packs on disk: not one blob was fetched again.
        expect((await repoStats(repo)).requests).toBe(0);
      },
    });
    expect(paused).toBe(true);
    expect(result?.merged).toBeGreaterThanOrEqual(2);
    for (const path of paths) {
      const file = await readFile(ctx, repoId, 'HEAD', path);
      expect(
        Buffer.compare(
          Buffer.from(file.bytes),
          await gitBuffer(['cat-file', 'blob', file.oid], { cwd: bare }),
        ),
      ).toBe(0);
    }
  });
});

describe('deleteRepo while a pack merge runs', () => {
  it('waits for the merge, then the repo stays deleted and later calls are REPO_NOT_FOUND', async () => {
    const { repoId } = await engine.clone({ url: `${serverUrl}/${repo}` });
    for (const path of ['README.md', 'notes/README.txt', 'scripts/build.sh'])
      await readFile(ctx, repoId, 'HEAD', path);
    await maintenanceIdle(ctx, repoId);
    let deleting: Promise<void> | undefined;
    const merged = await maybeRepack(ctx, repoId, {
      threshold: 2,
      beforeDeletingOldPacks: async () => {
        deleting = engine.repo(repoId).delete();
        // Let the delete run as far as it goes while the merge is paused.
        await new Promise((resolve) => setTimeout(resolve, 50));
        expect(await indexedDB.databases()).toContainEqual(
          expect.objectContaining({ name: ctx.store.repoFs.dbName(repoId) }),
        );
      },
    });
    expect(merged).not.toBeNull();
    await deleting;
    await maintenanceIdle(ctx, repoId);
    expect((await engine.listRepos()).map((r) => r.id)).not.toContain(repoId);
    expect((await indexedDB.databases()).map((d) => d.name)).not.toContain(ctx.store.repoFs.dbName(repoId));
    for (const call of [
      () => engine.repo(repoId).readFile({ ref: 'HEAD', path: 'README.md' }),
      () => engine.repo(repoId).log({ ref: 'HEAD' }),
      () => engine.repo(repoId).checkout({ ref: 'main' }),
    ]) {
      expect((await failure(call())).code).toBe('REPO_NOT_FOUND');
    }
    expect((await indexedDB.databases()).map((d) => d.name)).not.toContain(ctx.store.repoFs.dbName(repoId));
  });
});

describe('maintenance after lazy fetches', () => {
  it('runs by itself once a fetch leaves more than 16 promisor packs', async () => {
    const { repoId } = await engine.clone({ url: `${serverUrl}/small-sized.git` });
    const oids = (
      await gitCli(['ls-tree', '-r', '--format=%(objectname)', 'HEAD'], {
        cwd: join(fixturesDir, 'small-sized.git'),
      })
    )
      .trim()
      .split('\n')
      .slice(0, 20);
    let most = 0;
    for (const oid of oids) {
      await ensureBlobs(ctx, repoId, [oid]);
      await maintenanceIdle(ctx, repoId);
      most = Math.max(most, (await ctx.store.packs.for(repoId)).packs.length);
    }
    // The fetch that made the 17th promisor pack (the clone's and 16 others) set off a merge.
    expect(most).toBe(16);
    const packs = (await ctx.store.packs.for(repoId)).packs;
    expect(packs.length).toBeLessThan(8);
    expect((await ctx.store.packs.for(repoId)).missing(oids)).toEqual([]);
    const dir = join(tmp(), 'auto');
    await exportDir(ctx.store.repoFs.open(repoId), GITDIR, dir);
    await gitCli(['fsck', '--connectivity-only', '--no-progress'], { cwd: dir });
    expect((await packFiles(repoId)).filter((f) => f.endsWith('.idx'))).toHaveLength(packs.length);
  });
});

describe('deleteRepo right after a clone', () => {
  it("ends the clone's background commit-graph steps without a warning", async () => {
    const warnings: unknown[][] = [];
    const warn = console.warn;
    console.warn = (...args: unknown[]) => warnings.push(args);
    try {
      const { repoId } = await engine.clone({ url: `${serverUrl}/small-sized.git` });
      await engine.repo(repoId).delete();
      await maintenanceIdle(ctx, repoId);
    } finally {
      console.warn = warn;
    }
    expect(warnings).toEqual([]);
  });
});
