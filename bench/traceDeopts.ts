/**
 * Which of the git worker's functions V8 deoptimizes during a bench clone and checkout, and where: each
 * deoptimization throws compiled code away, and the function runs slower until it is compiled again. The
 * warm-up (docs/decisions/warm-up.md) exists to have them happen before the clone; this lists those it
 * leaves. It runs one bench run of one size with V8's trace on and the phases marked (deoptMarks.ts), from
 * a page built without minifying, and prints each deoptimization with its reason and source line:
 *
 *   npx tsx bench/traceDeopts.ts [--size small] [--all]
 *
 * `--all` lists the warm-up's too. Repeated bailouts of one place are counted, not repeated.
 */
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';

const PAGE_ASSETS = join(import.meta.dirname, '..', '.cache', 'bench-page', 'assets');

interface Bailout {
  fn: string;
  tier: string;
  reason: string;
  at?: { file: string; line: number };
}

/** The bailouts in Playwright's log of the browser's output, in order, with where each happened. */
export function parseBailouts(log: string): Bailout[] {
  const out: Bailout[] = [];
  let current: Bailout | undefined;
  for (const line of log.split('\n')) {
    const begin =
      /\[bailout \(kind: [^,]*, reason: (.*)\): begin\. deoptimizing [^<]*<JSFunction (\S+) .*<Code ([A-Z_]+)>/.exec(
        line,
      );
    if (begin) {
      current = { reason: begin[1], fn: begin[2], tier: begin[3] };
      out.push(current);
      continue;
    }
    const at = /;;; deoptimize at <[^>]*\/assets\/([^:>]+):(\d+):\d+>/.exec(line);
    if (at && current && !current.at) current.at = { file: at[1], line: Number(at[2]) };
  }
  return out;
}

function sourceLine(at: Bailout['at']): string {
  if (!at) return '';
  try {
    return (
      readFileSync(join(PAGE_ASSETS, at.file), 'utf8').split('\n')[at.line - 1]?.trim().slice(0, 90) ?? ''
    );
  } catch {
    return '';
  }
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: { size: { type: 'string', default: 'small' }, all: { type: 'boolean', default: false } },
  });
  const scratch = await mkdtemp(join(tmpdir(), 'blobless-deopts-'));
  try {
    const run = spawnSync(
      process.execPath,
      [
        ...process.execArgv,
        join(import.meta.dirname, 'run.ts'),
        ...['--sizes', values.size as string, '--runs', '1', '--profile', '--mark-phases'],
        ...['--cpu-profile', join(scratch, 'profiles'), '--out', join(scratch, 'results.json')],
        ...['--skip', 'history,isogit,blame,openOneFile,embedOneFile,noopFetch,firstView,deepLink'],
      ],
      {
        encoding: 'utf8',
        maxBuffer: 1 << 30,
        env: { ...process.env, CHROMIUM_FLAGS: '--js-flags=--trace-deopt-verbose', DEBUG: 'pw:browser' },
      },
    );
    if (run.status !== 0) throw new Error(`bench/run.ts failed:\n${run.stderr.slice(-4000)}`);
    const log = `${run.stdout}\n${run.stderr}`;
    let phase = 'page load and warm-up';
    const rows: { phase: string; text: string; count: number }[] = [];
    for (const b of parseBailouts(log)) {
      const mark = /^bloblessPhase_(\w+)$/.exec(b.fn);
      if (mark) {
        phase = mark[1];
        continue;
      }
      if (!b.at?.file.startsWith('git.worker')) continue;
      if (phase === 'page load and warm-up' && !values.all) continue;
      const text = `${b.fn.padEnd(24)} ${b.tier.padEnd(12)} ${b.reason.slice(0, 50).padEnd(50)} ${sourceLine(b.at)}`;
      const last = rows.at(-1);
      if (last && last.text === text && last.phase === phase) last.count++;
      else rows.push({ phase, text, count: 1 });
    }
    let shown = '';
    for (const row of rows) {
      if (row.phase !== shown) {
        shown = row.phase;
        process.stdout.write(`\n${shown}:\n`);
      }
      process.stdout.write(`  ${row.count > 1 ? `${row.count}x` : '  '} ${row.text}\n`);
    }
    if (rows.length === 0) process.stdout.write('no deoptimization in the git worker\n');
    for (const line of log.split('\n'))
      if (/^(clone|checkout) steps:/.test(line)) process.stdout.write(`${line}\n`);
  } finally {
    await rm(scratch, { recursive: true, force: true });
  }
}

if (import.meta.url === `file://${process.argv[1]}`) await main();
