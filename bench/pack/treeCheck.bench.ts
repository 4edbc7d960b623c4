/**
 * What checking a tree costs against only parsing it (a tree id already checked), with inflating it for
 * scale, on every tree of a real repository's history.
 *
 *   npx tsx bench/pack/treeCheck.bench.ts [GIT_DIR] [ROUNDS]
 */
import { execFileSync } from 'node:child_process';
import { deflateSync, inflateSync } from 'node:zlib';
import { checkTree } from '../../workers/pack/treeCheck.ts';

const gitDir = process.argv[2] ?? '.git';
const rounds = Number(process.argv[3] ?? 5);
const git = (args: string[], input?: string) =>
  execFileSync('git', ['--git-dir', gitDir, ...args], { input, maxBuffer: 1 << 30 });

const ids = git(['cat-file', '--batch-all-objects', '--batch-check=%(objectname) %(objecttype)'])
  .toString()
  .split('\n')
  .filter((l) => l.endsWith(' tree'))
  .map((l) => l.slice(0, 40));
const batch = git(['cat-file', '--batch'], `${ids.join('\n')}\n`);
const trees: Uint8Array[] = [];
for (let at = 0; at < batch.length; ) {
  const nl = batch.indexOf(10, at);
  const size = Number(batch.subarray(at, nl).toString().split(' ')[2]);
  trees.push(new Uint8Array(batch.subarray(nl + 1, nl + 1 + size)));
  at = nl + 1 + size + 1;
}
const bytes = trees.reduce((n, t) => n + t.length, 0);
const entries = trees.reduce((n, t) => n + checkTree(t).entries.length, 0);

function time(name: string, run: (t: Uint8Array) => unknown): void {
  const samples: number[] = [];
  for (let r = 0; r < rounds; r++) {
    const started = performance.now();
    for (const t of trees) run(t);
    samples.push(performance.now() - started);
  }
  samples.sort((a, b) => a - b);
  const median = samples[Math.floor(samples.length / 2)];
  console.log(
    `| ${name} | ${median.toFixed(1)} ms | ${(((entries / median) * 1000) / 1e6).toFixed(2)} M entries/s |`,
  );
}

console.log(`${trees.length} trees, ${entries} entries, ${(bytes / 1e6).toFixed(1)} MB; median of ${rounds}`);
console.log('| parser | all trees | rate |\n| --- | --- | --- |');
time('checkTree, checked (first read of a tree id)', (t) => checkTree(t));
time('checkTree, parse only (tree id checked before)', (t) => checkTree(t, false));
// What reading a tree costs anyway: inflating it out of a pack.
const deflated = new Map(trees.map((t) => [t, deflateSync(t)]));
time('inflate alone (zlib, for scale)', (t) => inflateSync(deflated.get(t) as Buffer));
