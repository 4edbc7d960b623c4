/**
 * Shared setup of the fuzz tests (fast-check). `npm test` runs each target with FUZZ_RUNS cases (20,000
 * unless set); `npm run fuzz` runs many more. A failure prints fast-check's seed and path: add them to
 * test/fuzz/regressions.json under the target's name, and the case is replayed first on every run.
 */

import { readFileSync } from 'node:fs';
import fc from 'fast-check';
import { expect } from 'vitest';

const DEFAULT_RUNS = 20_000;

/** How many generated cases each target runs. */
export function fuzzRuns(): number {
  const fromEnv = Number(process.env.FUZZ_RUNS);
  return Number.isFinite(fromEnv) && fromEnv > 0 ? fromEnv : DEFAULT_RUNS;
}

/**
 * `SMALL_INPUTS=1` (set by `npm run mutate`): tests whose cost is the size of their inputs (inflate.test.ts)
 * keep every case but at small sizes, since Stryker runs them once per mutant, its code instrumented.
 */
export function smallInputs(): boolean {
  return process.env.SMALL_INPUTS === '1';
}

export interface Regression {
  seed: number;
  path: string;
  /** What the case found, and the commit that fixed it. */
  note: string;
}

const regressionsFile = new URL('../fuzz/regressions.json', import.meta.url);

/** The recorded failures of one target. */
export function regressions(target: string): Regression[] {
  const all = JSON.parse(readFileSync(regressionsFile, 'utf8')) as Record<string, Regression[]>;
  return all[target] ?? [];
}

/**
 * Runs `property` on the target's recorded failures (replayed exactly by seed and path), then on
 * `fuzzRuns()` fresh cases. A fixed seed by default keeps `npm test` reproducible; FUZZ_SEED changes it.
 */
export async function fuzz<Ts extends [unknown, ...unknown[]]>(
  target: string,
  property: fc.IProperty<Ts> | fc.IAsyncProperty<Ts>,
  /** `runs` replaces fuzzRuns() for targets whose cases are costly (a timing in each); they scale with it. */
  opts: { runs?: number } = {},
): Promise<void> {
  // No hang: an async case that takes longer than this fails (a synchronous loop is bounded by the
  // input sizes the generators allow, and by the vitest timeout below).
  const timeout = CASE_TIMEOUT_MS;
  for (const r of regressions(target)) {
    await fc.assert(property, { seed: r.seed, path: r.path, endOnFailure: true, timeout });
  }
  const seed = process.env.FUZZ_SEED ? Number(process.env.FUZZ_SEED) : 0x5eed;
  const numRuns = opts.runs ? Math.max(1, Math.round((opts.runs * fuzzRuns()) / DEFAULT_RUNS)) : fuzzRuns();
  // A costly case is not shrunk: each step would time it again, and the first failure says enough.
  await fc.assert(property, { numRuns, seed, timeout, endOnFailure: !!opts.runs });
}

const CASE_TIMEOUT_MS = 10_000;

/**
 * The vitest timeout of one fuzz target: generous, as the machine running it may be shared; on an idle
 * 2-core machine each target's 20,000 cases take a few seconds.
 */
export function fuzzTimeout(): number {
  return Math.max(300_000, fuzzRuns() * 10);
}

/** A thrown value is one of the typed errors the code under test may raise. */
export function expectTypedError(error: unknown, names: string[]): void {
  const e = error as { name?: string; code?: unknown };
  if (!(error instanceof Error) || !names.includes(e.name ?? '') || typeof e.code !== 'string') {
    expect.fail(`untyped failure: ${error instanceof Error ? error.stack : String(error)}`);
  }
}

/** Splits `bytes` at the given fractions of its length: the same input as chunks, however they fall. */
export function split(bytes: Uint8Array, cuts: number[]): Uint8Array[] {
  const points = [...new Set(cuts.map((c) => Math.floor(c * bytes.length)))].sort((a, b) => a - b);
  const out: Uint8Array[] = [];
  let start = 0;
  for (const p of points) {
    out.push(bytes.subarray(start, p));
    start = p;
  }
  out.push(bytes.subarray(start));
  return out;
}

/** Bytes built from pieces, then damaged or not: a way to reach deep into a parser. */
export function mutated(base: fc.Arbitrary<Uint8Array>): fc.Arbitrary<Uint8Array> {
  return fc
    .tuple(
      base,
      fc.array(
        fc.record({
          kind: fc.constantFrom('flip', 'set', 'cut', 'insert', 'delete'),
          at: fc.double({ min: 0, max: 1, noNaN: true }),
          value: fc.integer({ min: 0, max: 255 }),
        }),
        { maxLength: 3 },
      ),
    )
    .map(([bytes, edits]) => {
      let b = Uint8Array.from(bytes);
      for (const e of edits) {
        const i = Math.min(b.length, Math.floor(e.at * b.length));
        if (e.kind === 'cut') b = b.slice(0, i);
        else if (e.kind === 'insert') b = Uint8Array.from([...b.subarray(0, i), e.value, ...b.subarray(i)]);
        else if (e.kind === 'delete' && i < b.length)
          b = Uint8Array.from([...b.subarray(0, i), ...b.subarray(i + 1)]);
        else if (i < b.length) b[i] = e.kind === 'flip' ? b[i] ^ (1 << (e.value & 7)) : e.value;
      }
      return b;
    });
}
