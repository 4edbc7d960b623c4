// Generated file pairs for line-diff oracle tests: lines drawn from a small vocabulary full of look-alikes
// (doc comments, braces, blank lines, tabs, CRs), single or in runs, so that most changes can slide.
import fc from 'fast-check';

const UTF8 = new TextEncoder();

/** Lines that look alike in many ways. */
export const VOCABULARY = [
  '',
  '',
  '/**',
  ' * Does a thing.',
  ' */',
  'function a() {',
  'function b() {',
  '  return 1;',
  '  if (x) {',
  '    y();',
  '  }',
  '}',
  '\tindented with a tab',
  '        eight spaces',
  '   ',
  'def f():',
  '    pass',
  'x\r',
  'é ünïcode',
  '            twelve deep',
  '                sixteen deep',
  '\t\t\tthree tabs',
  '    }',
  'end',
];

export interface Pair {
  a: string[];
  b: string[];
  aFinalNewline: boolean;
  bFinalNewline: boolean;
}

/** A few lines only, in long runs: groups that slide far, up to the ends of the file. */
export const FEW = ['', '', '}', '  x', '    y', '/**', ' */'];

/**
 * Pairs where b is a with some blocks inserted, some ranges deleted and some lines replaced; a and b are
 * made of lines of `vocabulary`, single or in runs of the same line up to `maxRun` long.
 */
export function pairs(vocabulary: string[], maxRun: number): fc.Arbitrary<Pair> {
  const line = fc.constantFrom(...vocabulary);
  const piece = fc.oneof(
    { weight: 4, arbitrary: line.map((l) => [l]) },
    {
      weight: 1,
      arbitrary: fc
        .tuple(line, fc.integer({ min: 2, max: maxRun }))
        .map(([l, n]) => Array(n).fill(l) as string[]),
    },
  );
  const block = fc.array(piece, { minLength: 1, maxLength: 4 }).map((ps) => ps.flat());
  return fc
    .record({
      a: fc.array(piece, { maxLength: 30 }).map((ps) => ps.flat()),
      edits: fc.array(
        fc.record({ at: fc.nat(), kind: fc.constantFrom('insert', 'delete', 'replace'), lines: block }),
        { maxLength: 5 },
      ),
      aFinalNewline: fc.boolean(),
      bFinalNewline: fc.boolean(),
    })
    .map(({ a, edits, aFinalNewline, bFinalNewline }) => {
      const b = [...a];
      for (const e of edits) {
        const at = b.length ? e.at % (b.length + 1) : 0;
        if (e.kind === 'insert') b.splice(at, 0, ...e.lines);
        else if (e.kind === 'delete') b.splice(at, e.lines.length);
        else b.splice(at, 1, ...e.lines);
      }
      return { a, b, aFinalNewline, bFinalNewline };
    });
}

export function sample(
  arbitrary: fc.Arbitrary<Pair>,
  numRuns: number,
  seed: number,
): [Uint8Array, Uint8Array][] {
  return fc
    .sample(arbitrary, { numRuns, seed })
    .map((p): [Uint8Array, Uint8Array] => [bytesOf(p.a, p.aFinalNewline), bytesOf(p.b, p.bFinalNewline)]);
}

export function bytesOf(lines: string[], finalNewline: boolean): Uint8Array {
  const text = lines.join('\n') + (finalNewline && lines.length ? '\n' : '');
  return UTF8.encode(text);
}
