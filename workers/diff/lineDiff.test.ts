// The line diff against `git diff --no-index` on generated file pairs: lines drawn from a small vocabulary
// full of look-alikes (doc comments, braces, blank lines, tabs, CRs), so that most changes can slide and
// the indent heuristic decides; and large random pairs, where xdiff's cost cut-offs decide.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { bytesOf, FEW, pairs, sample, VOCABULARY } from '../../test/support/linePairs.ts';
import { noIndexHunks } from '../../test/support/noIndexDiff.ts';
import { useTmpDir } from '../../test/support/tmpDir.ts';
import { diffLines, type LineDiffOptions, trimCommonTail } from './lineDiff.ts';
import { formatHunks, type HunkOptions, unifiedHunks, validUtf8Prefix } from './unifiedDiff.ts';

const tmp = useTmpDir('line-diff');
const UTF8 = new TextEncoder();

function ourHunks(a: Uint8Array, b: Uint8Array, opts: LineDiffOptions & HunkOptions = {}): Buffer {
  const diff = diffLines(a, b, opts);
  return Buffer.from(formatHunks(diff, unifiedHunks(diff, opts)));
}

/** Every pair diffed by us and by git with the same options; the mismatches, smallest first. */
async function mismatches(
  pairs: [Uint8Array, Uint8Array][],
  gitArgs: string[],
  opts: LineDiffOptions & HunkOptions,
): Promise<string[]> {
  const theirs = await noIndexHunks(tmp(), pairs, gitArgs);
  const wrong: { size: number; text: string }[] = [];
  pairs.forEach(([a, b], i) => {
    const ours = ourHunks(a, b, opts);
    if (!ours.equals(theirs[i])) {
      const text = `old:\n${Buffer.from(a).toString()}\n--- new:\n${Buffer.from(b).toString()}\n--- git:\n${theirs[i]}\n--- ours:\n${ours}`;
      wrong.push({ size: a.length + b.length, text });
    }
  });
  return wrong.sort((x, y) => x.size - y.size).map((w) => w.text);
}

describe('line diff', () => {
  it('equals git diff --no-index on generated pairs full of ambiguous lines', async () => {
    const cases = [...sample(pairs(VOCABULARY, 12), 400, 22), ...sample(pairs(FEW, 120), 200, 23)];
    expect((await mismatches(cases, [], {}))[0]).toBeUndefined();
  });

  it('equals git with other context sizes, inter-hunk context, and without the indent heuristic', async () => {
    const cases = [...sample(pairs(VOCABULARY, 12), 100, 7), ...sample(pairs(FEW, 120), 50, 8)];
    expect((await mismatches(cases, ['-U0'], { context: 0 }))[0]).toBeUndefined();
    expect(
      (await mismatches(cases, ['-U1', '--inter-hunk-context=2'], { context: 1, interHunkContext: 2 }))[0],
    ).toBeUndefined();
    expect((await mismatches(cases, ['-U7'], { context: 7 }))[0]).toBeUndefined();
    expect(
      (await mismatches(cases, ['--no-indent-heuristic'], { indentHeuristic: false }))[0],
    ).toBeUndefined();
  });

  it("equals git on large, very different files, where xdiff's cost cut-offs pick the split", async () => {
    // Lines from a small alphabet match often but not too often to be set aside, so Myers sees them all
    // and the edit cost passes the cut-offs.
    // Runs of shared lines between runs of noise: long snakes amid a high edit cost, where xdiff takes a
    // diagonal that got far instead of the best split.
    const noise = fc.array(fc.integer({ min: 0, max: 40 }), { minLength: 50, maxLength: 400 });
    const segment = fc.tuple(
      noise,
      noise,
      fc.array(fc.integer({ min: 0, max: 40 }), { minLength: 25, maxLength: 200 }),
    );
    const cases = fc
      .sample(fc.array(segment, { minLength: 3, maxLength: 8 }), { numRuns: 8, seed: 22 })
      .map((segments): [Uint8Array, Uint8Array] => {
        const lines = (xs: number[]) => xs.map((x) => `line ${x}`);
        const a = segments.flatMap(([na, , shared]) => [...lines(na), ...lines(shared)]);
        const b = segments.flatMap(([, nb, shared]) => [...lines(nb), ...lines(shared)]);
        return [bytesOf(a, true), bytesOf(b, true)];
      });
    // Past 65,536 lines in all, xdiff's cost limit rises above the snake heuristic's trigger: with short
    // noise between long shared runs, a diagonal gets far at little cost, and xdiff splits there.
    const shortNoise = fc.array(fc.integer({ min: 0, max: 40 }), {
      minLength: 5,
      maxLength: 40,
      size: 'max',
    });
    const longRun = fc.array(fc.integer({ min: 0, max: 40 }), { minLength: 50, maxLength: 500, size: 'max' });
    const [huge] = fc.sample(
      fc.array(fc.tuple(shortNoise, shortNoise, longRun), { minLength: 160, maxLength: 160 }),
      {
        numRuns: 1,
        seed: 5,
      },
    );
    const hugeLines = (pick: 0 | 1) => huge.flatMap((s) => [...s[pick], ...s[2]].map((x) => `line ${x}`));
    cases.push([bytesOf(hugeLines(0), true), bytesOf(hugeLines(1), true)]);
    expect((await mismatches(cases, [], {}))[0]).toBeUndefined();
    expect((await mismatches(cases, ['--minimal'], { minimal: true }))[0]).toBeUndefined();
    // The cut-offs did change the outcome here (else this test would not test them).
    expect(cases.some(([a, b]) => !ourHunks(a, b).equals(ourHunks(a, b, { minimal: true })))).toBe(true);
  });

  it('keeps record boundaries as git does: no final newline, CRLF, empty sides', () => {
    const diff = diffLines(UTF8.encode('a\nb'), UTF8.encode('a\nb\n'));
    expect(diff.changes).toEqual([{ oldStart: 1, oldCount: 1, newStart: 1, newCount: 1 }]);
    expect(diffLines(UTF8.encode(''), UTF8.encode('x\r\ny\n')).changes).toEqual([
      { oldStart: 0, oldCount: 0, newStart: 0, newCount: 2 },
    ]);
    expect(diffLines(UTF8.encode('same\n'), UTF8.encode('same\n')).changes).toEqual([]);
  });

  it('cuts a function name before a character the 80-byte limit split', () => {
    const cut = UTF8.encode('Überprüfung').subarray(0, 2);
    expect(validUtf8Prefix(cut)).toEqual(UTF8.encode('Ü'));
    expect(validUtf8Prefix(UTF8.encode('plain'))).toEqual(UTF8.encode('plain'));
    expect(validUtf8Prefix(new Uint8Array([0x61, 0xed, 0xa0, 0x80]))).toEqual(new Uint8Array([0x61]));
  });

  it("trims the common tail as git's blame does: whole 1,024-byte blocks, given back to a line feed", () => {
    const tail = UTF8.encode(`${'tail line\n'.repeat(300)}`);
    const a = new Uint8Array([...UTF8.encode('first\nsame\n'), ...tail]);
    const b = new Uint8Array([...UTF8.encode('second\nsame\n'), ...tail]);
    const [ta, tb] = trimCommonTail(a, b);
    expect(a.length - ta.length).toBe(b.length - tb.length);
    expect(a.length - ta.length).toBe(2040);
    expect(ta[ta.length - 1]).toBe(0x0a);
    expect(trimCommonTail(UTF8.encode('x'), UTF8.encode('y'))).toEqual([UTF8.encode('x'), UTF8.encode('y')]);
  });
});
