import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { BLOB_BATCH_POLICY, BLOB_FETCH_CONCURRENCY, planBlobBatches } from './lazyBlobs.ts';

const KB = 1024;
const MB = 1024 * 1024;
const sum = (xs: number[]) => xs.reduce((a, b) => a + b, 0);

describe('planBlobBatches', () => {
  it('asks for a small set in one request', () => {
    expect(planBlobBatches(1, 3 * KB)).toEqual([1]);
    expect(planBlobBatches(200, 3 * KB)).toEqual([200]);
    expect(planBlobBatches(0, 3 * KB)).toEqual([]);
  });

  it('medium (3,000 blobs of 3 KB): a first request of about 256 KB, then four bigger even ones', () => {
    const plan = planBlobBatches(3000, 3 * KB);
    expect(plan).toHaveLength(5);
    expect(plan[0]).toBe(Math.round((256 * KB) / (3 * KB)));
    const rest = plan.slice(1);
    expect(Math.max(...rest) - Math.min(...rest)).toBeLessThanOrEqual(1);
    expect(Math.min(...rest)).toBeGreaterThan(plan[0]);
    expect(sum(plan)).toBe(3000);
  });

  it('with growth, each request after the first is bigger than the one before', () => {
    const plan = planBlobBatches(3000, 3 * KB, { ...BLOB_BATCH_POLICY, growth: 1.5 });
    for (let i = 2; i < plan.length; i++) expect(plan[i]).toBeGreaterThan(plan[i - 1]);
  });

  it('large (20,000 blobs, 60 MB): still five requests, as git makes one plus four', () => {
    expect(planBlobBatches(20000, 3 * KB)).toHaveLength(1 + BLOB_BATCH_POLICY.spread);
  });

  it('more requests only when one would pass maxBatchBytes', () => {
    const plan = planBlobBatches(100_000, 3 * KB); // 293 MB
    expect(plan.length).toBeGreaterThan(1 + BLOB_BATCH_POLICY.spread);
    for (const n of plan) expect(n * 3 * KB).toBeLessThanOrEqual(BLOB_BATCH_POLICY.maxBatchBytes);
    const shorter = planBlobBatches(100_000, 3 * KB, {
      ...BLOB_BATCH_POLICY,
      maxBatchBytes: 1024 * MB,
    });
    expect(shorter).toHaveLength(1 + BLOB_BATCH_POLICY.spread);
  });

  it('the requests in flight at once start with the smallest', () => {
    const plan = planBlobBatches(20000, 3 * KB);
    expect(Math.min(...plan.slice(0, BLOB_FETCH_CONCURRENCY))).toBe(plan[0]);
  });

  it('for any count and size: every blob once, no empty request, within the request and byte bounds', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 300_000 }),
        fc.integer({ min: 1, max: 1 * MB }),
        (count, perBlob) => {
          const plan = planBlobBatches(count, perBlob);
          expect(sum(plan)).toBe(count);
          for (const n of plan) expect(n).toBeGreaterThan(0);
          const bytes = count * perBlob;
          if (bytes <= 4 * BLOB_BATCH_POLICY.maxBatchBytes) {
            expect(plan.length).toBeLessThanOrEqual(1 + BLOB_BATCH_POLICY.spread);
          }
          // No request passes maxBatchBytes by more than the one blob that rounding may add.
          for (const n of plan) {
            expect((n - 1) * perBlob).toBeLessThanOrEqual(BLOB_BATCH_POLICY.maxBatchBytes);
          }
        },
      ),
    );
  });

  it('the edges of each rule, on policies made to hit them', () => {
    // Exactly singleRequestBytes: still one request.
    expect(planBlobBatches(256, 4 * KB)).toEqual([256]);
    // No first request when firstBytes is 0.
    expect(planBlobBatches(1000, 3 * KB, { ...BLOB_BATCH_POLICY, firstBytes: 0 })).toEqual([
      250, 250, 250, 250,
    ]);
    // A first request that takes every blob is the only one.
    const tiny = { ...BLOB_BATCH_POLICY, singleRequestBytes: 0 };
    expect(planBlobBatches(5, 100, { ...tiny, firstBytes: 1e9 })).toEqual([5]);
    // With growth 3 over two requests, the last holds 3/4 of the rest: 30 of 40 bytes. At maxBatchBytes
    // exactly, the growth stays; one byte under it, the requests are made equal.
    const grown = { ...tiny, firstBytes: 1, spread: 2, growth: 3 };
    expect(planBlobBatches(41, 1, { ...grown, maxBatchBytes: 30 })).toEqual([1, 10, 30]);
    expect(planBlobBatches(41, 1, { ...grown, maxBatchBytes: 29 })).toEqual([1, 20, 20]);
    // A weight worth less than half a blob still gets one.
    expect(planBlobBatches(4, 1, { ...tiny, firstBytes: 1, spread: 3, growth: 10 })).toEqual([1, 1, 1, 1]);
  });
});
