// The commit-graph writer and reader (workers/commitgraph) on a synthetic history: a line of commits
// with a topic branch merged every 30, each changing 1 to 4 files (a few, like most commits). Prints
// the time to compute the Bloom filters, to write one file, to write it as a split chain in steps of
// 1,000 commits, the file size, and the time of a lookup and a filter check.
// `npx tsx bench/commitgraph/commitGraph.bench.ts [commits=200000]`.
import { SeededRandom } from '../../server/fixtures/seededRandom.ts';
import { bloomFilterFor, pathKeys, pathMaybeChanged } from '../../workers/commitgraph/bloomFilter.ts';
import { CommitGraph } from '../../workers/commitgraph/commitGraph.ts';
import { writeSplitLayer } from '../../workers/commitgraph/commitGraphChain.ts';
import { type GraphCommit, writeCommitGraph } from '../../workers/commitgraph/commitGraphWriter.ts';
import { sha1, toHex } from '../../workers/pack/objectHash.ts';

const count = Number(process.argv[2] ?? 200_000);
const rand = new SeededRandom(22);
const id = (n: number) => toHex(sha1(new TextEncoder().encode(String(n))));
const folders = Array.from({ length: 200 }, (_, i) => `src/area${i % 20}/part${i}`);

let t = performance.now();
const lap = (what: string) => {
  const now = performance.now();
  console.log(`  ${what.padEnd(38)} ${(now - t).toFixed(0).padStart(6)} ms`);
  t = now;
};
console.log(`${count} commits`);
const commits: GraphCommit[] = [];
const changed: string[][] = [];
for (let i = 0; i < count; i++) {
  const parents = i === 0 ? [] : i % 30 === 0 && i > 3 ? [id(i - 1), id(i - 3)] : [id(i - 1)];
  commits.push({ oid: id(i), tree: id(-i - 1), parents, time: 1_600_000_000 + i * 60 });
  changed.push(
    Array.from({ length: rand.between(1, 4) }, () => `${rand.pick(folders)}/file${rand.int(50)}.ts`),
  );
}
lap('history made');
commits.forEach((c, i) => {
  c.bloom = bloomFilterFor(changed[i]);
});
lap('Bloom filters');
const file = writeCommitGraph(commits, { changedPaths: true });
lap(`one file (${(file.length / 1e6).toFixed(1)} MB)`);
const graph = CommitGraph.fromFile(file);
lap('read and checked');
let found = 0;
for (let i = 0; i < count; i += 97) found += graph.position(id(i)) >= 0 ? 1 : 0;
lap(`${found} lookups`);
const keys = pathKeys('src/area3/part23/file7.ts');
let maybe = 0;
for (let p = 0; p < graph.size; p++) if (pathMaybeChanged(graph.bloomFilter(p)!, keys)) maybe++;
lap(`filter checks of every commit (${maybe} maybe)`);
let chain: Uint8Array[] = [];
for (let i = 0; i < count; i += 1000) {
  chain = writeSplitLayer(chain, commits.slice(i, i + 1000), { changedPaths: true }).layers.map(
    (l) => l.bytes,
  );
}
lap(`split chain in steps of 1,000 (${chain.length} layers)`);
