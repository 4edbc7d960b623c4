import { join } from 'node:path';
import { describe, expect, inject, it } from 'vitest';
import { MissingObjectError } from '../workers/ops/common/errors.ts';
import { readFile } from '../workers/ops/read/readFile.ts';
import { testEngine } from './support/engine.ts';
import { git as gitCli } from './support/git.ts';
import { whileOffline } from './support/offline.ts';
import { failure, packFiles } from './support/repoChecks.ts';
import { repoStats, resetStats } from './support/serverStats.ts';

const { engine, ctx } = testEngine();

const serverUrl = inject('gitServerUrl');
const fixturesDir = inject('fixturesDir');
const repo = 'features.git';

describe('offline (navigator.onLine false)', () => {
  it('a clone says OFFLINE without sending a request, and stores nothing', async () => {
    const before = (await engine.listRepos()).length;
    await resetStats();
    const err = await whileOffline(() => failure(engine.clone({ url: `${serverUrl}/${repo}` })));
    expect(err.code).toBe('OFFLINE');
    expect(err.message).toMatch(/offline/);
    expect((await repoStats(repo)).requests).toBe(0);
    expect((await engine.listRepos()).length).toBe(before);
  });

  it('a file never fetched is a MissingObjectError with code OFFLINE and no request; stored files read', async () => {
    const { repoId } = await engine.clone({ url: `${serverUrl}/${repo}` });
    const present = await readFile(ctx, repoId, 'HEAD', 'README.md');
    const path = 'docs/with space/ünïcødé – файл.txt';
    const oid = (await gitCli(['rev-parse', `HEAD:${path}`], { cwd: join(fixturesDir, repo) })).trim();
    const packs = await packFiles(ctx, repoId);
    await resetStats();

    const err = (await whileOffline(() =>
      failure(readFile(ctx, repoId, 'HEAD', path)),
    )) as MissingObjectError;
    expect(err).toBeInstanceOf(MissingObjectError);
    expect(err.code).toBe('OFFLINE');
    expect(err.oid).toBe(oid);
    expect(err.path).toBe(path);
    expect(err.message).toMatch(
      /is not stored in this browser and could not be fetched: This device is offline/,
    );
    expect((await repoStats(repo)).requests).toBe(0);
    expect(await packFiles(ctx, repoId)).toEqual(packs);
    const again = await whileOffline(() => readFile(ctx, repoId, 'HEAD', 'README.md'));
    expect(again.bytes).toEqual(present.bytes);

    // Back online, the same read fetches it.
    const file = await readFile(ctx, repoId, 'HEAD', path);
    expect(file.oid).toBe(oid);
    expect((await repoStats(repo)).requests).toBe(1);
  });
});
