// blameLineMap against git blame itself: a scratch repository holds generated file pairs as a parent
// commit and a child commit, and `git blame --porcelain` says, for each line of the child's version,
// whether the parent takes it and at which line. Some pairs share a common tail over 1,024 bytes of
// look-alike lines, where blame's trimmed tail decides how far a change slides.
import { join } from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { gitBytes } from '../../test/support/gitHistory.ts';
import { bytesOf, FEW, pairs, sample, VOCABULARY } from '../../test/support/linePairs.ts';
import { useTmpDir } from '../../test/support/tmpDir.ts';
import { blameLineMap } from './blameLineMap.ts';

const tmp = useTmpDir('blame-line-map');

/** A fast-import stream: `parent` holds each pair's old side at f/<i>, `child` the new side. */
function importStream(cases: [Uint8Array, Uint8Array][]): Buffer {
  const parts: Buffer[] = [];
  const commit = (ref: string, side: 0 | 1, from?: string) => {
    parts.push(Buffer.from(`commit ${ref}\ncommitter A <a@b> ${1_700_000_000 + side} +0000\ndata 0\n`));
    if (from) parts.push(Buffer.from(`from ${from}\n`));
    cases.forEach((c, i) => {
      parts.push(
        Buffer.from(`M 644 inline f/${i}\ndata ${c[side].length}\n`),
        Buffer.from(c[side]),
        Buffer.from('\n'),
      );
    });
    parts.push(Buffer.from('\n'));
  };
  commit('refs/heads/parent', 0);
  commit('refs/heads/child', 1, 'refs/heads/parent');
  return Buffer.concat(parts);
}

/** git blame's verdict per line of the child's file: the parent's line (0-based), or -1 for the child. */
async function gitVerdict(gitDir: string, child: string, path: string): Promise<number[]> {
  const out = (await gitBytes(gitDir, ['blame', '--porcelain', child, '--', path])).toString('latin1');
  const verdict: number[] = [];
  for (const line of out.split('\n')) {
    const m = /^([0-9a-f]{40}) (\d+) (\d+)/.exec(line);
    if (m) verdict[Number(m[3]) - 1] = m[1] === child ? -1 : Number(m[2]) - 1;
  }
  return verdict;
}

describe('blame line map', () => {
  it('passes to the parent exactly the lines git blame passes', { timeout: 120_000 }, async () => {
    const cases = [...sample(pairs(VOCABULARY, 12), 120, 31), ...sample(pairs(FEW, 40), 60, 32)];
    // A long common tail of look-alike lines, with edits just before it.
    const tails = fc.sample(
      fc.tuple(fc.array(fc.constantFrom(...FEW), { minLength: 200, maxLength: 600 }), pairs(FEW, 8)),
      { numRuns: 40, seed: 33 },
    );
    for (const [tail, p] of tails) {
      cases.push([bytesOf([...p.a, ...tail], true), bytesOf([...p.b, ...tail], true)]);
    }
    // A line inserted before a long run of copies of itself: untrimmed, it would slide far into the run.
    for (const [line, before, after] of [
      ['}', 600, 1],
      ['', 1500, 3],
      ['  x', 300, 2],
      ['}', 520, 0],
    ] as const) {
      const run = Array(before).fill(line);
      cases.push([
        bytesOf(['start', ...run], true),
        bytesOf(['start', ...Array(after + 1).fill(line), ...run], true),
      ]);
    }
    const gitDir = join(tmp(), 'pairs.git');
    await gitBytes(gitDir, ['init', '-q', '--bare', gitDir]);
    await gitBytes(gitDir, ['fast-import', '--quiet'], importStream(cases));
    const child = (await gitBytes(gitDir, ['rev-parse', 'child'])).toString().trim();
    for (let i = 0; i < cases.length; i++) {
      const ours = [...blameLineMap(cases[i][0], cases[i][1])];
      expect({ pair: i, map: ours }).toEqual({ pair: i, map: await gitVerdict(gitDir, child, `f/${i}`) });
    }
  });
});
