import { describe, expect, it } from 'vitest';

import { SHORT_RETRY, testEngine } from './support/engine.ts';

const { engine } = testEngine({ retry: SHORT_RETRY });

describe('the warm-up at page load', () => {
  it('is stopped by a clone that begins, and the clone runs as ever', async () => {
    const warming = engine.warmUp();
    const failed = await engine.clone({ url: 'http://127.0.0.1:9/nothing.git' }).catch((e) => e);
    expect(failed.code).toBeDefined();
    expect(await warming).toBe('stopped');
    // Once per worker: asked again, it answers how it ended.
    expect(await engine.warmUp()).toBe('stopped');
  });
});
