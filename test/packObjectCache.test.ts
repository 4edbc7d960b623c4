// isomorphic-git's pack reader never fills its cache of read objects (readDepth starts NaN), so every read
// of a deltified object resolves its whole chain again; packObjectCache.ts turns the cache on and bounds
// it. Reading every blob and tree of a repo through one cache: objects are cached, no pack's cache holds
// more than the bound (plus the object that crossed it), and every object still reads as git stores it.

import { createHash } from 'node:crypto';
import { join } from 'node:path';
import git from 'isomorphic-git';
import { describe, expect, inject, it } from 'vitest';
import { usePackObjectCache } from '../workers/ops/common/packObjectCache.ts';
import { GITDIR } from '../workers/store/repoFs.ts';
import { testEngine } from './support/engine.ts';
import { git as gitCli } from './support/git.ts';

const { engine, ctx } = testEngine();

const serverUrl = inject('gitServerUrl');
const fixturesDir = inject('fixturesDir');
const LIMIT = 64 * 1024;

/** Bytes each loaded pack's reader holds in its object cache. */
async function cachedBytesPerPack(cache: object): Promise<number[]> {
  const out: number[] = [];
  const record = cache as Record<symbol, unknown>;
  for (const key of Object.getOwnPropertySymbols(record)) {
    const packs = record[key];
    if (key.description !== 'PackfileCache' || !(packs instanceof Map)) continue;
    for (const loading of packs.values()) {
      const index = (await loading) as { offsetCache: Record<number, { object: Uint8Array }> };
      let bytes = 0;
      for (const entry of Object.values(index.offsetCache)) bytes += entry.object.byteLength;
      out.push(bytes);
    }
  }
  return out;
}

describe("isomorphic-git's pack object cache, turned on and bounded", () => {
  it('every blob and tree of small-sized.git through one cache: cached, within the bound, as git has it', async () => {
    const repo = 'small-sized.git';
    const { repoId } = await engine.clone({ url: `${serverUrl}/${repo}` });
    await engine.repo(repoId).checkout({ ref: 'HEAD' });
    const listing = await gitCli(['ls-tree', '-r', '-t', '-l', 'HEAD'], { cwd: join(fixturesDir, repo) });
    const objects = listing
      .trim()
      .split('\n')
      .map((line) => line.split(/\s+/))
      .map(([, type, oid, size]) => ({ type, oid, size: type === 'blob' ? Number(size) : 0 }));
    const largest = Math.max(...objects.map((o) => o.size));
    const total = objects.reduce((sum, o) => sum + o.size, 0);
    // Enough bytes that an unbounded cache would hold well over the bound.
    expect(total).toBeGreaterThan(3 * (LIMIT + largest));

    const fs = ctx.store.repoFs.open(repoId);
    const cache = {};
    let peak = 0;
    for (const [i, { type, oid }] of objects.entries()) {
      const { object } = await git.readObject({ fs, gitdir: GITDIR, oid, cache, format: 'content' });
      const bytes = object as Uint8Array;
      const hash = createHash('sha1').update(`${type} ${bytes.length}\0`).update(bytes).digest('hex');
      expect(hash).toBe(oid);
      if (i === 0) await usePackObjectCache(cache, LIMIT);
      peak = Math.max(peak, ...(await cachedBytesPerPack(cache)));
    }
    // On: reads were kept (isomorphic-git alone keeps none). Bounded: never more than the bound held.
    expect(peak).toBeGreaterThan(LIMIT / 2);
    expect(peak).toBeLessThanOrEqual(LIMIT + largest);
  });
});
