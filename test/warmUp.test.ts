import { describe, expect, it } from 'vitest';
import { api } from '../workers/api.ts';

describe('the warm-up at page load', () => {
  it('is stopped by a clone that begins, and the clone runs as ever', async () => {
    const warming = api.warmUp();
    const failed = await api.clone({ url: 'http://127.0.0.1:9/nothing.git' }).catch((e) => e);
    expect(failed.code).toBeDefined();
    expect(await warming).toBe('stopped');
    // Once per worker: asked again, it answers how it ended.
    expect(await api.warmUp()).toBe('stopped');
  });
});
