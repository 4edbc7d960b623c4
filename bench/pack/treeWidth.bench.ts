/**
 * What one tree costs to check by its width: the table behind PackLimits.maxTreeEntries (packLimits.ts). A
 * tree is parsed and checked in one synchronous step, so its cost is how long the worker cannot answer
 * another call. Trees of n entries `100644 f000000…` with distinct ids, checked as a first read (checkTree)
 * and parsed only (an id checked before); CPU time of this process, least and median of ROUNDS.
 *
 *   npx tsx bench/pack/treeWidth.bench.ts [ROUNDS]
 */
import { checkTree } from '../../workers/pack/treeCheck.ts';

const rounds = Number(process.argv[2] ?? 7);
const enc = new TextEncoder();

function wideTree(n: number): Uint8Array {
  const out = new Uint8Array(n * 35);
  let at = 0;
  for (let i = 0; i < n; i++) {
    at += enc.encodeInto(`100644 f${String(i).padStart(6, '0')}\0`, out.subarray(at)).written;
    for (let k = 0; k < 20; k++) out[at++] = (i * 7 + k * 13) & 255;
  }
  return out.subarray(0, at);
}

const cpuMs = () => {
  const { user, system } = process.cpuUsage();
  return (user + system) / 1000;
};

console.log(`checkTree by width; CPU ms, least / median of ${rounds}`);
console.log('| entries | bytes | check | parse only | check per entry |\n| --- | --- | --- | --- | --- |');
for (const n of [1_000, 10_000, 50_000, 100_000, 200_000]) {
  const tree = wideTree(n);
  const time = (verify: boolean) => {
    const samples: number[] = [];
    for (let r = 0; r < rounds; r++) {
      const started = cpuMs();
      checkTree(tree, verify, Number.POSITIVE_INFINITY);
      samples.push(cpuMs() - started);
    }
    samples.sort((a, b) => a - b);
    return { least: samples[0], median: samples[Math.floor(rounds / 2)] };
  };
  const check = time(true);
  const parse = time(false);
  const fmt = (t: { least: number; median: number }) => `${t.least.toFixed(1)} / ${t.median.toFixed(1)}`;
  console.log(
    `| ${n.toLocaleString('en')} | ${(tree.length / 1e6).toFixed(1)} MB | ${fmt(check)} | ${fmt(parse)} | ${((check.least / n) * 1000).toFixed(2)} µs |`,
  );
}
