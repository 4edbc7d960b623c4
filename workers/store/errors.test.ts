import { afterEach, describe, expect, it, vi } from 'vitest';
import { STORE_ERROR_CODES, StoreError, storageError, storageErrorWithFigures } from './errors.ts';

const quota = () => Object.assign(new Error('The quota has been exceeded.'), { name: 'QuotaExceededError' });
const FULL_TAIL =
  ': its storage for this site is full. Delete repositories you no longer need, then try again.';

/** navigator.storage.estimate() as the browser would answer it (Node has none). */
function estimate(answer: (() => Promise<{ usage?: number; quota?: number }>) | undefined): void {
  vi.stubGlobal('navigator', { ...globalThis.navigator, storage: answer ? { estimate: answer } : {} });
}

afterEach(() => {
  vi.unstubAllGlobals();
});

describe('StoreError', () => {
  it('carries its name, code and message', () => {
    const err = new StoreError('REPO_NOT_FOUND', 'gone');
    expect(err).toBeInstanceOf(Error);
    expect([err.name, err.code, err.message]).toEqual(['StoreError', 'REPO_NOT_FOUND', 'gone']);
    expect(STORE_ERROR_CODES).toContain('STORAGE_FULL');
    expect(Object.isFrozen(STORE_ERROR_CODES)).toBe(true);
  });
});

describe('storageError', () => {
  it('a full quota, by name or by message, is STORAGE_FULL and says what to do', () => {
    for (const err of [quota(), new Error('Exceeded QUOTA for origin'), { message: 'quota' }]) {
      const e = storageError(err, 'the pack');
      expect(e.code).toBe('STORAGE_FULL');
      expect(e.message).toBe(`The browser refused to store the pack${FULL_TAIL}`);
    }
    // By name alone: a browser's QuotaExceededError need not say "quota".
    const named = Object.assign(new Error('The disk is full.'), { name: 'QuotaExceededError' });
    expect(storageError(named, 'x').code).toBe('STORAGE_FULL');
  });

  it('anything else is STORAGE_FAILED with what the browser said', () => {
    expect(storageError(new Error('disk on fire'), 'the pack')).toMatchObject({
      code: 'STORAGE_FAILED',
      message: 'Could not store the pack: disk on fire',
    });
    expect(storageError('a string', 'x').message).toBe('Could not store x: a string');
    expect(storageError(undefined, 'x').message).toBe('Could not store x: undefined');
    expect(storageError(null, 'x').message).toBe('Could not store x: null');
  });

  it('keeps a StoreError as it is', () => {
    const ours = new StoreError('STORAGE_FULL', 'with figures');
    expect(storageError(ours, 'x')).toBe(ours);
  });
});

describe('storageErrorWithFigures', () => {
  it('gives what was needed, and nothing more where the browser gives no estimate', async () => {
    estimate(undefined);
    expect((await storageErrorWithFigures(quota(), 'the changes', 2_500_000)).message).toBe(
      `The browser refused to store the changes (2.5 MB needed)${FULL_TAIL}`,
    );
    vi.stubGlobal('navigator', undefined);
    expect((await storageErrorWithFigures(quota(), 'the changes', 2_500_000)).message).toBe(
      `The browser refused to store the changes (2.5 MB needed)${FULL_TAIL}`,
    );
  });

  it('a write below a tenth of a MB is in KB, rounded up: never "0.0 MB"', async () => {
    estimate(undefined);
    const at = async (bytes: number) =>
      (await storageErrorWithFigures(quota(), 'x', bytes)).message.match(/\((.*) needed/)?.[1];
    expect(await at(3_001)).toBe('4 KB');
    expect(await at(1)).toBe('1 KB');
    expect(await at(99_999)).toBe('100 KB');
    expect(await at(100_000)).toBe('0.1 MB');
    expect(await at(0)).toBe('0 KB');
  });

  it('says what is free when the browser gives less than was needed', async () => {
    estimate(async () => ({ usage: 9_000_000, quota: 10_000_000 }));
    expect(await storageErrorWithFigures(quota(), 'the pack', 2_000_000)).toMatchObject({
      name: 'StoreError',
      code: 'STORAGE_FULL',
      message: `The browser refused to store the pack (2.0 MB needed; 1.0 MB free of 10.0 MB)${FULL_TAIL}`,
    });
    // Usage above the quota is no room, not a negative one.
    estimate(async () => ({ usage: 11_000_000, quota: 10_000_000 }));
    expect((await storageErrorWithFigures(quota(), 'the pack', 2_000_000)).message).toContain(
      '0 KB free of 10.0 MB',
    );
  });

  it('a free figure larger than the write is the browser’s, said beside the site’s usage', async () => {
    estimate(async () => ({ usage: 5_000_000, quota: 10_000_000_000 }));
    expect((await storageErrorWithFigures(quota(), 'the pack', 2_000_000)).message).toBe(
      `The browser refused to store the pack (2.0 MB needed; this site stores 5.0 MB; the browser reports 9995.0 MB free, yet refused it)${FULL_TAIL}`,
    );
    // Exactly as much free as needed: still refused, so still the browser's figure.
    estimate(async () => ({ usage: 0, quota: 2_000_000 }));
    expect((await storageErrorWithFigures(quota(), 'x', 2_000_000)).message).toContain('yet refused it');
  });

  it('an estimate that fails or is incomplete is left out', async () => {
    for (const answer of [
      async () => Promise.reject(new Error('no')),
      async () => ({ usage: 1 }),
      async () => ({ quota: 1 }),
    ]) {
      estimate(answer);
      expect((await storageErrorWithFigures(quota(), 'x', 200_000)).message).toBe(
        `The browser refused to store x (0.2 MB needed)${FULL_TAIL}`,
      );
    }
  });

  it('other failures are storageError’s, without figures', async () => {
    estimate(async () => ({ usage: 1, quota: 2 }));
    expect(await storageErrorWithFigures(new Error('io'), 'x', 5)).toMatchObject({
      code: 'STORAGE_FAILED',
      message: 'Could not store x: io',
    });
  });
});
