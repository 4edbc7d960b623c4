// Go to file on 100,000 paths: how long fuzzysort takes to prepare them and to answer one query, in
// Node (V8, as in Chromium). `npx tsx bench/reading/goToFile.bench.ts [paths=100000] [runs=5]`.
import fuzzysort from 'fuzzysort';
import { SeededRandom } from '../../server/fixtures/seededRandom.ts';

const count = Number(process.argv[2] ?? 100_000);
const runs = Number(process.argv[3] ?? 5);
const rnd = new SeededRandom(7);
const words = [
  'src',
  'lib',
  'test',
  'docs',
  'components',
  'utils',
  'core',
  'server',
  'client',
  'widgets',
  'api',
  'internal',
];
const paths: string[] = [];
for (let i = 0; i < count; i++) {
  const depth = 1 + rnd.int(6);
  const parts = Array.from(
    { length: depth },
    () => words[rnd.int(words.length)] + (rnd.int(3) === 0 ? rnd.int(50) : ''),
  );
  paths.push(`${parts.join('/')}/file-${i}.${['ts', 'js', 'md', 'c', 'h'][rnd.int(5)]}`);
}
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const prepare: number[] = [];
const query: Record<string, number[]> = { cmpwdg: [], 'file-99999': [], srvapi: [] };
for (let r = 0; r < runs; r++) {
  let t = performance.now();
  const prepared = paths.map((p) => fuzzysort.prepare(p));
  prepare.push(performance.now() - t);
  for (const q of Object.keys(query)) {
    t = performance.now();
    fuzzysort.go(q, prepared, { limit: 50, threshold: 0.2 });
    query[q].push(performance.now() - t);
  }
}
console.log(`${count} paths, median of ${runs}: prepare ${median(prepare).toFixed(0)} ms`);
for (const [q, ms] of Object.entries(query)) console.log(`  query "${q}": ${median(ms).toFixed(1)} ms`);
