// One receive pipeline (ops/sync/receivePack.ts): clone, fetch, lazy blobs and the minimal read all take
// their packs through it, so the limits set on the engine hold for each. Against a fetch answer that never
// ends (progress text without a line end, test/support/craftedServer.ts), each stops at the engine's own
// maxProgressLineBytes, not the default, and stores nothing.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { memoryStorage } from '../workers/storage/memory.ts';
import { type CraftedRepo, startCraftedServer, tinyRepoPack } from './support/craftedServer.ts';
import { testEngine } from './support/engine.ts';
import { failure, settledGitDir, snapshotGitDir } from './support/repoChecks.ts';

// Not the default (64 KiB): an operation that received without the engine's limits would fail at that one.
const MAX_PROGRESS_LINE = 10_000;
const { engine, ctx } = testEngine({
  storage: memoryStorage(),
  limits: { maxProgressLineBytes: MAX_PROGRESS_LINE },
});

const first = tinyRepoPack('first');
const second = tinyRepoPack('second');
const refsAt = (commit: string) => [
  { name: 'HEAD', oid: commit, symrefTarget: 'refs/heads/main' },
  { name: 'refs/heads/main', oid: commit },
];
const repo = (): CraftedRepo => ({ refs: refsAt(first.commit), pack: first.pack });
const repos: Record<string, CraftedRepo> = {
  'clone.git': { ...repo(), endless: 'fetch' },
  'fetch.git': repo(),
  'blobs.git': repo(),
  'minimal.git': { ...repo(), endless: 'fetch' },
};

let server: Awaited<ReturnType<typeof startCraftedServer>>;
const urlOf = (name: string) => `${server.url}/${name}`;

beforeAll(async () => {
  server = await startCraftedServer(repos);
});

afterAll(async () => {
  await engine.close();
  await server.close();
});

function expectEngineLimit(err: Error & { code: string; limit?: string }) {
  expect(err.code).toBe('LIMIT_EXCEEDED');
  expect(err.limit).toBe('maxProgressLineBytes');
  expect(err.message).toContain(`more than ${MAX_PROGRESS_LINE} characters of progress text`);
}

describe("an endless fetch answer ends every receive at the engine's limit", () => {
  it('clone', async () => {
    expectEngineLimit(await failure(engine.clone({ url: urlOf('clone.git') })));
    expect(await engine.listRepos({ includeMinimal: true })).toEqual([]);
  });

  it('fetch, and nothing of the repo changes', async () => {
    const { repoId } = await engine.clone({ url: urlOf('fetch.git') });
    const before = await settledGitDir(ctx, repoId);
    // A new commit on the remote, so that the fetch asks for a pack.
    repos['fetch.git'].refs = refsAt(second.commit);
    repos['fetch.git'].endless = 'fetch';
    expectEngineLimit(await failure(engine.repo(repoId).fetch()));
    expect(await snapshotGitDir(ctx, repoId)).toEqual(before);
  });

  it('a lazy blob, and nothing of the repo changes', async () => {
    // The pack holds the commit and its tree, not the blob of a.txt: reading it fetches it.
    const { repoId } = await engine.clone({ url: urlOf('blobs.git') });
    const before = await settledGitDir(ctx, repoId);
    repos['blobs.git'].endless = 'fetch';
    expectEngineLimit(await failure(engine.repo(repoId).readFile({ ref: 'HEAD', path: 'a.txt' })));
    expect(await snapshotGitDir(ctx, repoId)).toEqual(before);
  });

  it('the minimal read', async () => {
    expectEngineLimit(await failure(engine.readFileMinimal({ url: urlOf('minimal.git'), path: 'a.txt' })));
  });
});
