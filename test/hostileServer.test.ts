import { afterAll, afterEach, beforeAll, describe, expect, inject, it } from 'vitest';
import { maintenanceIdle } from '../workers/ops/maintenance/packMaintenance.ts';
import { amplifyingDelta, buildPack } from '../workers/pack/testing/packBuilder.ts';
import { parseGitConfig } from '../workers/store/gitConfig.ts';
import { GITDIR } from '../workers/store/repoFs.ts';
import {
  type CraftedRepo,
  gzipBombedLsRefs,
  startCraftedServer,
  tinyRepoPack,
} from './support/craftedServer.ts';
import { testEngine } from './support/engine.ts';
import { failure, settledGitDir, snapshotGitDir } from './support/repoChecks.ts';

const { engine, ctx } = testEngine();

const MiB = 1024 * 1024;
const { pack, commit } = tinyRepoPack();
// No spaces: ls-refs lines are space-separated, so a server can only send names without them.
const EVIL_BRANCH = 'refs/heads/x"]\t[core]\tfsmonitor=touch\t/tmp/pwned';

const repos: Record<string, CraftedRepo> = {
  // issue 9: this HEAD target overwrote /.git/config.
  'head-traversal.git': {
    refs: [
      { name: 'HEAD', oid: commit, symrefTarget: 'refs/heads/../../config' },
      { name: 'refs/heads/../../config', oid: commit },
      { name: 'refs/heads/main', oid: commit },
    ],
    pack,
  },
  // issue 9: this branch name produced a config in which git read an injected [core] section.
  'bad-branches.git': {
    refs: [
      { name: 'HEAD', oid: commit, symrefTarget: 'refs/heads/main' },
      { name: 'refs/heads/main', oid: commit },
      { name: EVIL_BRANCH, oid: commit },
      { name: 'refs/heads/../../config', oid: commit },
      { name: 'refs/heads/a..b', oid: commit },
      { name: 'refs/tags/v1.lock', oid: commit },
    ],
    pack,
  },
  'v0-head-traversal.git': {
    protocol: 0,
    refs: [
      { name: 'HEAD', oid: commit, symrefTarget: 'refs/heads/../../config' },
      { name: 'refs/heads/main', oid: commit },
    ],
    pack,
  },
  'v0-bad-branches.git': {
    protocol: 0,
    refs: [
      { name: 'HEAD', oid: commit, symrefTarget: 'refs/heads/main' },
      { name: 'refs/heads/main', oid: commit },
      { name: 'refs/heads/../../config', oid: commit },
      { name: 'refs/heads/a..b', oid: commit },
    ],
    pack,
  },
  'delta-bomb.git': {
    refs: [
      { name: 'HEAD', oid: commit, symrefTarget: 'refs/heads/main' },
      { name: 'refs/heads/main', oid: commit },
    ],
    // A 16 MiB zero blob and a delta of a few hundred bytes declaring 1 GiB.
    pack: buildPack([
      { type: 'blob', data: new Uint8Array(16 * MiB) },
      { ofsDelta: 0, delta: amplifyingDelta(16 * MiB, 1024 * MiB) },
    ]),
  },
  'delta-chain.git': {
    refs: [
      { name: 'HEAD', oid: commit, symrefTarget: 'refs/heads/main' },
      { name: 'refs/heads/main', oid: commit },
    ],
    pack: buildPack([
      { type: 'blob', data: new Uint8Array(MiB) },
      ...Array.from({ length: 8 }, (_, i) => ({
        ofsDelta: i,
        delta: amplifyingDelta(i === 0 ? MiB : 4 * MiB, 4 * MiB),
      })),
    ]),
  },
  'endless-progress.git': {
    refs: [
      { name: 'HEAD', oid: commit, symrefTarget: 'refs/heads/main' },
      { name: 'refs/heads/main', oid: commit },
    ],
    progress: Array.from({ length: 100 }, () =>
      new TextEncoder().encode('Counting objects: 1'.padEnd(1000, '.')),
    ),
    pack,
  },
  'endless-info-refs.git': { refs: [], pack, endless: 'info/refs' },
  'endless-v0-info-refs.git': {
    protocol: 0,
    refs: [
      { name: 'HEAD', oid: commit, symrefTarget: 'refs/heads/main' },
      { name: 'refs/heads/main', oid: commit },
    ],
    pack,
    endless: 'info/refs-again',
  },
  'endless-ls-refs.git': { refs: [], pack, endless: 'ls-refs' },
  'gzip-bomb-ls-refs.git': { refs: [], pack, gzipBomb: true },
};

let server: Awaited<ReturnType<typeof startCraftedServer>>;
let previous: { repoId: string; files: Record<string, string>; record: unknown };

beforeAll(async () => {
  server = await startCraftedServer(repos);
  // A repo stored before the hostile clones: none of them may touch it.
  const { repoId } = await engine.clone({ url: `${inject('gitServerUrl')}/basic.git` });
  // The clone's background commit-graph build writes after it returns: the snapshot waits for it.
  await maintenanceIdle(ctx, repoId);
  previous = {
    repoId,
    files: await snapshotGitDir(ctx, repoId),
    record: (await engine.listRepos()).find((r) => r.id === repoId),
  };
});

afterAll(async () => {
  await server.close();
  for (const r of await engine.listRepos()) await engine.repo(r.id).delete();
});

afterEach(async () => {
  for (const r of await engine.listRepos()) if (r.id !== previous.repoId) await engine.repo(r.id).delete();
});

/** Nothing of the failed clone is stored, and the repo stored before is byte for byte as it was. */
async function expectNothingStoredAndPreviousIntact(): Promise<void> {
  expect((await engine.listRepos()).map((r) => r.id)).toEqual([previous.repoId]);
  const dbs = (await indexedDB.databases()).map((d) => d.name).filter((n) => n?.startsWith('blobless-repo-'));
  // lightning-fs keeps a `<name>_lock` database beside each repo's.
  expect(dbs.filter((n) => !n?.endsWith('_lock'))).toEqual([`blobless-repo-${previous.repoId}`]);
  expect(dbs.filter((n) => n?.endsWith('_lock'))).toEqual(
    dbs.includes(`blobless-repo-${previous.repoId}_lock`) ? [`blobless-repo-${previous.repoId}_lock`] : [],
  );
  expect(await snapshotGitDir(ctx, previous.repoId)).toEqual(previous.files);
  expect((await engine.listRepos())[0]).toEqual(previous.record);
}

const urlOf = (name: string) => `${server.url}/${name}`;

describe('ref names from a hostile server', () => {
  it('a HEAD symref-target of refs/heads/../../config ends the clone with HOSTILE_REF_NAME', async () => {
    const err = await failure(engine.clone({ url: urlOf('head-traversal.git') }));
    expect(err.code).toBe('HOSTILE_REF_NAME');
    expect(err.message).toMatch(/refs\/heads\/\.\.\/\.\.\/config.*contains "\.\."/);
    await expectNothingStoredAndPreviousIntact();
  });

  it('bad branch and tag names are skipped with a warning; the config holds no injected section', async () => {
    const result = await engine.clone({ url: urlOf('bad-branches.git') });
    expect(result.refs.map((r) => r.name).sort()).toEqual(['HEAD', 'refs/heads/main']);
    expect(result.warnings.join('\n')).toMatch(/Skipped 4 remote refs whose names git would refuse/);
    expect(result.warnings.join('\n')).toContain(JSON.stringify(EVIL_BRANCH));
    const fs = ctx.store.repoFs.open(result.repoId).promises;
    const config = parseGitConfig((await fs.readFile(`${GITDIR}/config`, 'utf8')) as string);
    expect(config.filter((e) => e.section === 'core').map((e) => e.key)).toEqual([
      'repositoryformatversion',
      'filemode',
      'bare',
      'logallrefupdates',
    ]);
    const packedRefs = (await fs.readFile(`${GITDIR}/packed-refs`, 'utf8')) as string;
    expect(packedRefs).not.toMatch(/\.\.|fsmonitor|lock/);
    expect(
      Object.keys(await snapshotGitDir(ctx, result.repoId)).filter((p) => /config|\.\./.test(p)),
    ).toEqual([`${GITDIR}/config`]);
    await engine.repo(result.repoId).delete();
    await expectNothingStoredAndPreviousIntact();
  });

  it('a later fetch skips the same bad names with a warning and writes nothing outside refs', async () => {
    const { repoId } = await engine.clone({ url: urlOf('bad-branches.git') });
    const before = await settledGitDir(ctx, repoId);
    const result = await engine.repo(repoId).fetch();
    expect(result.updated).toEqual([]);
    expect(result.warnings.join('\n')).toMatch(/Skipped 4 remote refs whose names git would refuse/);
    expect(await snapshotGitDir(ctx, repoId)).toEqual(before);
    await engine.repo(repoId).delete();
  });

  it('v0 advertisement: a bad HEAD target ends the clone with HOSTILE_REF_NAME', async () => {
    const err = await failure(engine.clone({ url: urlOf('v0-head-traversal.git') }));
    expect(err.code).toBe('HOSTILE_REF_NAME');
    await expectNothingStoredAndPreviousIntact();
  });

  it('v0 advertisement: bad branch names are skipped with a warning before isomorphic-git sees them', async () => {
    const result = await engine.clone({ url: urlOf('v0-bad-branches.git') });
    expect(result.protocol).toBe(1);
    expect(result.refs.map((r) => r.name)).toEqual(['refs/heads/main']);
    expect(result.warnings.join('\n')).toMatch(/Skipped 2 remote refs/);
    const files = Object.keys(await snapshotGitDir(ctx, result.repoId));
    expect(files.filter((p) => p.includes('..'))).toEqual([]);
    expect(files).not.toContain(`${GITDIR}/refs/remotes/config`);
  });
});

describe('caps against a hostile server', () => {
  it('a delta bomb ends in PACK_OBJECT_TOO_LARGE', async () => {
    const err = await failure(engine.clone({ url: urlOf('delta-bomb.git') }));
    expect(err.code).toBe('PACK_OBJECT_TOO_LARGE');
    expect(err.message).toMatch(/maxObjectSize/);
    await expectNothingStoredAndPreviousIntact();
  });

  it('a chain of deltas ends in PACK_INFLATE_BUDGET (the limits go through the clone options)', async () => {
    const limits = { maxObjectSize: 8 * MiB, inflateFloor: 16 * MiB };
    const err = await failure(engine.clone({ url: urlOf('delta-chain.git'), limits }));
    expect(err.code).toBe('PACK_INFLATE_BUDGET');
    expect(err.message).toMatch(/inflateRatio/);
    await expectNothingStoredAndPreviousIntact();
  });

  it('progress text with no line break ends in LIMIT_EXCEEDED (maxProgressLineBytes)', async () => {
    const err = await failure(engine.clone({ url: urlOf('endless-progress.git') }, { onProgress: () => {} }));
    expect(err.code).toBe('LIMIT_EXCEEDED');
    expect(err.message).toMatch(/maxProgressLineBytes/);
    await expectNothingStoredAndPreviousIntact();
  });

  it('an endless info/refs (v2) stops at maxInfoRefsBytes', async () => {
    const err = await failure(engine.clone({ url: urlOf('endless-info-refs.git') }));
    expect(err.code).toBe('LIMIT_EXCEEDED');
    expect(err.message).toMatch(/info\/refs.*64 ?MiB|67108864 bytes \(maxInfoRefsBytes\)/);
    await expectNothingStoredAndPreviousIntact();
  });

  it('an endless v0 info/refs stops at maxInfoRefsBytes, also when isomorphic-git asks again', async () => {
    const err = await failure(
      engine.clone({ url: urlOf('endless-v0-info-refs.git'), limits: { maxInfoRefsBytes: 256 * 1024 } }),
    );
    expect(err.code).toBe('LIMIT_EXCEEDED');
    expect(err.message).toMatch(/262144 bytes \(maxInfoRefsBytes\)/);
    await expectNothingStoredAndPreviousIntact();
  });

  // The same fetch against an ls-refs answer that never ends, and one gzipped to a bomb (counted decoded).
  it.each([
    ['never ends', { endless: 'ls-refs' }],
    ['is a gzip bomb', { gzipBomb: true }],
  ] as const)(
    'a fetch whose ls-refs answer %s stops at maxLsRefsBytes, and stores nothing',
    async (_, hostile) => {
      const { repoId } = await engine.clone({ url: urlOf('bad-branches.git') });
      const before = await settledGitDir(ctx, repoId);
      Object.assign(repos['bad-branches.git'], hostile);
      try {
        const err = await failure(engine.repo(repoId).fetch());
        expect(err.code).toBe('LIMIT_EXCEEDED');
        expect(err.message).toMatch(/ls-refs answer is larger than 67108864 bytes \(maxLsRefsBytes\)/);
        expect(await snapshotGitDir(ctx, repoId)).toEqual(before);
      } finally {
        for (const key of Object.keys(hostile)) delete repos['bad-branches.git'][key as keyof typeof hostile];
        await engine.repo(repoId).delete();
      }
    },
  );

  it('a gzip-bombed ls-refs (under 256 KB on the wire) stops at maxLsRefsBytes, counted decoded', async () => {
    expect(gzipBombedLsRefs().length).toBeLessThan(256 * 1024);
    const err = await failure(engine.clone({ url: urlOf('gzip-bomb-ls-refs.git') }));
    expect(err.code).toBe('LIMIT_EXCEEDED');
    expect(err.message).toMatch(/ls-refs answer is larger than 67108864 bytes \(maxLsRefsBytes\)/);
    await expectNothingStoredAndPreviousIntact();
  });

  it('an endless ls-refs stops at maxLsRefsBytes', async () => {
    const err = await failure(engine.clone({ url: urlOf('endless-ls-refs.git') }));
    expect(err.code).toBe('LIMIT_EXCEEDED');
    expect(err.message).toMatch(/ls-refs answer is larger than 67108864 bytes \(maxLsRefsBytes\)/);
    await expectNothingStoredAndPreviousIntact();
  });
});
