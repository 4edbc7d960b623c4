// The line diff (workers/diff) on large files: the time for 100,000-line files edited a little,
// rewritten by half, and unrelated, beside `git diff --no-index` on the same pair (a process each, so
// git's figure includes its start-up). `npx tsx bench/diff/lineDiff.bench.ts [lines] [runs]`.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fakeLine } from '../../server/fixtures/fakeText.ts';
import { SeededRandom } from '../../server/fixtures/seededRandom.ts';
import { diffLines } from '../../workers/diff/lineDiff.ts';
import { formatHunks, unifiedHunks } from '../../workers/diff/unifiedDiff.ts';

const count = Number(process.argv[2] ?? 100_000);
const runs = Number(process.argv[3] ?? 5);
const rand = new SeededRandom(22);
const encode = (lines: string[]) => new TextEncoder().encode(`${lines.join('\n')}\n`);
const base = Array.from({ length: count }, () => fakeLine(rand));

function edited(fraction: number): string[] {
  const out: string[] = [];
  for (const line of base) {
    const r = rand.float();
    if (r < fraction / 3) continue; // deleted
    if (r < (2 * fraction) / 3)
      out.push(fakeLine(rand)); // replaced
    else out.push(line);
    if (rand.float() < fraction / 3) out.push(fakeLine(rand)); // inserted
  }
  return out;
}

const scenarios: [string, Uint8Array, Uint8Array][] = [
  ['1 % of lines edited', encode(base), encode(edited(0.01))],
  ['50 % of lines edited', encode(base), encode(edited(0.5))],
  ['unrelated files', encode(base), encode(Array.from({ length: count }, () => fakeLine(rand)))],
];

const median = (xs: number[]) => [...xs].sort((x, y) => x - y)[Math.floor(xs.length / 2)];
const dir = mkdtempSync(join(tmpdir(), 'blobless-diff-bench-'));
try {
  console.log(`${count} lines, median of ${runs} runs`);
  for (const [name, a, b] of scenarios) {
    const times: number[] = [];
    let hunks = 0;
    // One run to warm the JIT up, not counted.
    for (let r = -1; r < runs; r++) {
      const t = performance.now();
      const diff = diffLines(a, b);
      const patch = formatHunks(diff, unifiedHunks(diff));
      if (r >= 0) times.push(performance.now() - t);
      hunks = patch.length;
    }
    writeFileSync(join(dir, 'a'), a);
    writeFileSync(join(dir, 'b'), b);
    const gitTimes: number[] = [];
    for (let r = 0; r < runs; r++) {
      const t = performance.now();
      try {
        execFileSync('git', ['diff', '--no-index', 'a', 'b'], { cwd: dir, maxBuffer: 1 << 30 });
      } catch {
        // Exit code 1: the files differ.
      }
      gitTimes.push(performance.now() - t);
    }
    console.log(
      `  ${name.padEnd(22)} ours ${median(times).toFixed(0).padStart(5)} ms` +
        `  git ${median(gitTimes).toFixed(0).padStart(5)} ms  patch ${(hunks / 1e6).toFixed(1)} MB`,
    );
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}
