// What the page asks for is counted as foreground work while it runs (ForegroundActivity.track), so that
// the background commit-graph build gives way to it; the history fill and commitGraphStatus are background
// themselves and are not counted.

import { afterAll, describe, expect, it, vi } from 'vitest';
import { memoryStorage } from '../workers/storage/memory.ts';
import { testEngine } from './support/engine.ts';

const { engine, ctx } = testEngine({ storage: memoryStorage(), namespace: 'foreground' });
afterAll(() => engine.close());

/** How many calls `run` counted as foreground; each call here fails at once (no such URL or repo). */
async function tracked(run: () => Promise<unknown>): Promise<number> {
  const track = vi.spyOn(ctx.maintenance.foreground, 'track');
  try {
    await run().catch(() => undefined);
    return track.mock.calls.length;
  } finally {
    track.mockRestore();
  }
}

describe('the engine counts as foreground', () => {
  it('clone and the minimal read', async () => {
    expect(await tracked(() => engine.clone({ url: 'not a url' }))).toBe(1);
    expect(await tracked(() => engine.readFileMinimal({ url: 'not a url' }))).toBe(1);
  });

  it("a repo's operations, but the history fill and commitGraphStatus", async () => {
    const repo = engine.repo('no-such-repo');
    expect(await tracked(() => repo.readTree({ ref: 'HEAD' }))).toBe(1);
    expect(await tracked(() => repo.fillHistory())).toBe(0);
    expect(await tracked(() => repo.commitGraphStatus())).toBe(0);
  });

  it('not the listing of repos, which the home page makes while a warm-up may run', async () => {
    expect(await tracked(() => engine.listRepos())).toBe(0);
  });
});
