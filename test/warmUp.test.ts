import { describe, expect, it, vi } from 'vitest';
import { warmUpRefs } from '../workers/ops/sync/refsWarmUp.ts';
import { SHORT_RETRY, testEngine } from './support/engine.ts';

// The real refs' warm-up, counted: the engine must hand it to its warm-up.
vi.mock('../workers/ops/sync/refsWarmUp.ts', async (importOriginal) => {
  const real = await importOriginal<typeof import('../workers/ops/sync/refsWarmUp.ts')>();
  return { ...real, warmUpRefs: vi.fn(real.warmUpRefs) };
});

describe('the warm-up when a clone is likely', () => {
  it('is stopped by a clone that begins, and the clone runs as ever', async () => {
    const { engine } = testEngine({ retry: SHORT_RETRY });
    const warming = engine.warmUp();
    const failed = await engine.clone({ url: 'http://127.0.0.1:9/nothing.git' }).catch((e) => e);
    expect(failed.code).toBeDefined();
    expect(await warming).toBe('stopped');
    // Once per worker: asked again, it answers how it ended.
    expect(await engine.warmUp()).toBe('stopped');
  });

  it("warms a clone's handling of refs after the pack's rounds", async () => {
    const { engine } = testEngine({ retry: SHORT_RETRY });
    expect(await engine.warmUp({ rounds: 1 })).toBe('done');
    expect(warmUpRefs).toHaveBeenCalledTimes(1);
    expect(await vi.mocked(warmUpRefs).mock.results[0].value).toMatchObject({ listed: 1051, wants: 1050 });
  });
});
