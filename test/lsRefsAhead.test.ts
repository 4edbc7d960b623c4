import { join } from 'node:path';
import { describe, expect, inject, it } from 'vitest';
import { readFileMinimal } from '../workers/ops/read/readFileMinimal.ts';
import { lsRemoteLines, refLines } from './support/cloneOracle.ts';
import { testEngine } from './support/engine.ts';
import { git } from './support/git.ts';
import { startRelay } from './support/relay.ts';

const { engine, ctx } = testEngine();
const fixturesDir = inject('fixturesDir');
const serverUrl = inject('gitServerUrl');

describe('ls-refs sent together with info/refs (lsRefsAhead)', () => {
  it('a clone asks ls-refs before the advertisement arrives, and asks it once', async () => {
    const seen = { postDuringGet: false, lsRefs: 0 };
    // The GET's answer waits for a POST: a client that asks ls-refs only after it would wait 5 s for nothing.
    const relay = await startRelay(serverUrl, { kind: 'hold-info-refs-for-post', timeoutMs: 5000, seen });
    try {
      const url = `${relay.url}/features.git`;
      const result = await engine.clone({ url });
      expect(seen.postDuringGet).toBe(true);
      // info/refs, ls-refs, fetch: the speculative answer was used, not asked again.
      expect(seen.lsRefs).toBe(1);
      expect(relay.requests).toBe(3);
      expect(result.requests).toBe(3);
      expect(refLines(result.refs)).toEqual(await lsRemoteLines(`${serverUrl}/features.git`));
    } finally {
      await relay.close();
    }
  });

  it('a fetch asks ls-refs before the advertisement arrives, and asks it once', async () => {
    const seen = { postDuringGet: false, lsRefs: 0 };
    const relay = await startRelay(serverUrl, { kind: 'hold-info-refs-for-post', timeoutMs: 5000, seen });
    try {
      const { repoId } = await engine.clone({ url: `${relay.url}/features.git` });
      try {
        Object.assign(seen, { postDuringGet: false, lsRefs: 0 });
        const before = relay.requests;
        const result = await engine.repo(repoId).fetch();
        expect(seen.postDuringGet).toBe(true);
        // A no-op fetch: info/refs and ls-refs, the speculative answer used, not asked again.
        expect(seen.lsRefs).toBe(1);
        expect(relay.requests - before).toBe(2);
        expect(result.newCommits).toBe(0);
      } finally {
        await engine.repo(repoId).delete();
      }
    } finally {
      await relay.close();
    }
  });

  it("a v1 server's answer to the speculative ls-refs is never used", async () => {
    // The POST reaches a v2 repository with other refs; the v0 advertisement must win.
    const relay = await startRelay(serverUrl, { kind: 'ls-refs-to', path: '/features.git/git-upload-pack' });
    try {
      const result = await engine.clone({ url: `${relay.url}/v0.git` });
      expect(result.protocol).toBe(1);
      expect(refLines(result.refs.filter((r) => r.name !== 'HEAD'))).toEqual(
        await lsRemoteLines(`${serverUrl}/v0.git`, ['--heads', '--tags']),
      );
    } finally {
      await relay.close();
    }
  });

  it('the first view of one file (readFileMinimal) asks ls-refs before the advertisement arrives', async () => {
    const seen = { postDuringGet: false, lsRefs: 0 };
    const relay = await startRelay(serverUrl, { kind: 'hold-info-refs-for-post', timeoutMs: 5000, seen });
    try {
      const read = await readFileMinimal(ctx, `${relay.url}/features.git`, 'main', 'README.md');
      expect(seen.postDuringGet).toBe(true);
      const expected = await git(['show', 'main:README.md'], { cwd: join(fixturesDir, 'features.git') });
      expect(read.file && new TextDecoder().decode(read.file.bytes)).toBe(expected);
      expect(seen.lsRefs).toBe(1);
      expect(read.network.requests).toBe(relay.requests);
    } finally {
      await relay.close();
    }
  });
});
