// How much of a pack's first ingest the warm-up leaves cold: each run is a new Node process that warms the
// ingester up (warmUpIngester, as the worker does when a clone is likely), then ingests a real pack twice in
// 64 KiB pushes, and prints both times. V8 compiles the same way in the worker; the first ingest is the one
// a person waits for, the second shows what warm costs. docs/decisions/warm-up.md has the figures.
//
//   npx tsx bench/pack/warmUpFirstIngest.bench.ts [runs] [rounds]
//
// The packs are small's (server/fixtures, built by `npm run fixtures`): its HEAD's blobs, what a first
// checkout fetches, and its commits and trees, what a clone without blobs fetches.

import { execFileSync, spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { PackIngester } from '../../workers/pack/packIngester.ts';
import { warmUpIngester } from '../../workers/pack/warmUp.ts';

const root = join(import.meta.dirname, '..', '..');
const REPO = join(root, '.cache', 'fixtures', 'small-sized.git');
const PUSH = 64 * 1024;

function git(args: string[], input?: string): Buffer {
  return execFileSync('git', ['-C', REPO, ...args], { input, maxBuffer: 1 << 30 });
}

/** The objects of each pack, as `git pack-objects` reads them: listed only for the pack a process measures. */
const PACKS: Readonly<Record<string, () => string>> = {
  "HEAD's blobs": () => git(['ls-tree', '-r', '--object-only', 'HEAD']).toString(),
  'commits and trees': () =>
    git(['rev-list', '--objects', '--all', '--filter=blob:none'])
      .toString()
      .split('\n')
      .map((line) => line.split(' ')[0])
      .join('\n'),
};

function pack(name: string): Uint8Array {
  return new Uint8Array(git(['pack-objects', '--stdout'], PACKS[name]()));
}

async function ingest(bytes: Uint8Array): Promise<number> {
  const started = performance.now();
  const ingester = await PackIngester.create({});
  for (let at = 0; at < bytes.length; at += PUSH) ingester.push(bytes.subarray(at, at + PUSH));
  await ingester.finish({ objects: false });
  return performance.now() - started;
}

/** One process's measurement: `--child NAME ROUNDS`. */
async function child(name: string, rounds: number): Promise<void> {
  const bytes = pack(name);
  await warmUpIngester(rounds);
  const first = await ingest(bytes);
  const second = await ingest(bytes);
  process.stdout.write(`${JSON.stringify({ first, second })}\n`);
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)];
}

async function main(): Promise<void> {
  const args = process.argv.slice(2);
  if (args[0] === '--child') return child(args[1], Number(args[2]));
  const runs = Number(args[0] ?? 5);
  const rounds = Number(args[1] ?? 3);
  process.stdout.write(`| pack | first ingest, ms | second ingest, ms |\n| --- | --- | --- |\n`);
  for (const name of Object.keys(PACKS)) {
    const samples: { first: number; second: number }[] = [];
    for (let run = 0; run < runs; run++) {
      const out = spawnSync(
        process.execPath,
        [...process.execArgv, import.meta.filename, '--child', name, `${rounds}`],
        {
          encoding: 'utf8',
        },
      );
      if (out.status !== 0) throw new Error(out.stderr);
      samples.push(JSON.parse(out.stdout));
    }
    const ms = (key: 'first' | 'second') => median(samples.map((s) => s[key])).toFixed(1);
    process.stdout.write(`| ${name} | ${ms('first')} | ${ms('second')} |\n`);
  }
  process.stdout.write(`\nmedians of ${runs} processes, warm-up of ${rounds} rounds before each\n`);
}

await main();
