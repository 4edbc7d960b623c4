import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { expectTypedError, fuzz, fuzzTimeout, mutated } from '../../test/support/fuzz.ts';
import { applyDelta } from './delta.ts';
import { type DeltaOp, makeDelta } from './testing/packBuilder.ts';

const MAX_RESULT = 4096;

/** A delta over a base of `baseSize` bytes: mostly well formed, with sizes that may lie, then damaged. */
function deltaFor(baseSize: number): fc.Arbitrary<Uint8Array> {
  const op: fc.Arbitrary<DeltaOp> = fc.oneof(
    fc
      .tuple(fc.nat({ max: baseSize + 8 }), fc.integer({ min: 1, max: baseSize + 8 }))
      .map(([offset, length]) => ({ copy: [offset, length] as [number, number] })),
    fc.uint8Array({ minLength: 1, maxLength: 40 }).map((insert) => ({ insert })),
  );
  const structured = fc
    .tuple(
      fc.array(op, { maxLength: 8 }),
      fc.option(fc.oneof(fc.nat({ max: 2 * MAX_RESULT }), fc.constant(2 ** 40)), { nil: undefined }),
      fc.option(fc.nat({ max: baseSize + 2 }), { nil: undefined }),
    )
    .map(([ops, resultSize, lyingBase]) => makeDelta(lyingBase ?? baseSize, ops, { resultSize }));
  return mutated(
    fc.oneof(
      { weight: 4, arbitrary: structured },
      { weight: 1, arbitrary: fc.uint8Array({ maxLength: 40 }) },
    ),
  );
}

const baseAndDelta = fc
  .uint8Array({ maxLength: 300 })
  .chain((base) => deltaFor(base.length).map((delta) => [base, delta] as const));

describe('fuzz: delta applier', () => {
  it(
    'fails only with PackError and never allocates more than the limit',
    async () => {
      await fuzz(
        'delta',
        fc.property(baseAndDelta, ([base, delta]) => {
          let largest = 0;
          try {
            const out = applyDelta(
              base,
              delta,
              (size) => {
                largest = Math.max(largest, size);
                return new Uint8Array(size);
              },
              MAX_RESULT,
            );
            expect(out.length).toBeLessThanOrEqual(MAX_RESULT);
          } catch (error) {
            expectTypedError(error, ['PackError']);
          }
          expect(largest).toBeLessThanOrEqual(MAX_RESULT);
        }),
      );
    },
    fuzzTimeout(),
  );
});
