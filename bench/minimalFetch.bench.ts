// Bytes against round trips for readFileMinimal's strategies (MINIMAL_STRATEGY): each reads one file cold
// (its minimal repo deleted first) from the fixture git server, and the table gives the requests and bytes
// the client received, the time on loopback, and that time with a modelled link (every request one round
// trip, every byte at the link's rate) so the choice can be read for a remote host. A blob:none clone's
// bytes are the yardstick.
//
//   npx tsx bench/minimalFetch.bench.ts [--repos small-sized,features,large] [--runs 3] [--rtt 50] [--mbps 20]

import 'fake-indexeddb/auto';
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import { fixtureServerOptions } from '../server/fixtures/fixtureServerOptions.ts';
import { ensureFixtures, SIZED_PRESETS } from '../server/fixtures/index.ts';
import { startGitServer } from '../server/gitServer.ts';
import { createEngine, engineContext } from '../workers/engine/engine.ts';
import { type MinimalStrategy, minimalRepoId, readFileMinimal } from '../workers/ops/read/readFileMinimal.ts';

const engine = createEngine();
const ctx = engineContext(engine);

(globalThis as { navigator?: unknown }).navigator ??= {};

const { values: args } = parseArgs({
  options: {
    repos: { type: 'string', default: 'small-sized,features,large' },
    runs: { type: 'string', default: '3' },
    rtt: { type: 'string', default: '50' },
    mbps: { type: 'string', default: '20' },
  },
});
const runs = Number(args.runs);
const rttS = Number(args.rtt) / 1000;
const bytesPerS = (Number(args.mbps) * 1e6) / 8;
const repos = args.repos.split(',');
const strategies: MinimalStrategy[] = [
  'commit-only',
  'root-tree',
  'top-trees',
  'two-levels',
  'path-trees',
  'all-trees',
];

const fixtures = await ensureFixtures({ sized: repos.includes('large') ? [SIZED_PRESETS.large] : [] });
const server = await startGitServer(fixtureServerOptions(fixtures.dir));

function gitIn(bare: string, gitArgs: string[]): string {
  return execFileSync('git', gitArgs, { cwd: bare, encoding: 'utf8', maxBuffer: 1 << 30 }).trim();
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const kb = (n: number) => `${(n / 1024).toFixed(1)} KB`;

const rows: string[] = [];
for (const name of repos) {
  const bare = join(fixtures.dir, `${name}.git`);
  const url = `${server.url}/${name}.git`;
  const files = gitIn(bare, ['ls-tree', '-r', '--name-only', 'HEAD']).split('\n');
  const deepest = files.reduce((a, b) => (b.split('/').length > a.split('/').length ? b : a));
  const clone = await engine.clone({ url });
  await engine.repo(clone.repoId).delete();
  rows.push(
    `${name}.git: blob:none clone ${kb(clone.bytesReceived)}, ${clone.requests} requests; file ${deepest}`,
  );
  for (const strategy of strategies) {
    const bytes: number[] = [];
    const requests: number[] = [];
    const seconds: number[] = [];
    for (let run = 0; run < runs; run++) {
      await engine.repo(minimalRepoId(url)).delete();
      const started = performance.now();
      const read = await readFileMinimal(ctx, url, 'main', deepest, { strategy });
      seconds.push((performance.now() - started) / 1000);
      bytes.push(read.network.bytes);
      requests.push(read.network.requests);
    }
    const b = median(bytes);
    const r = median(requests);
    const local = median(seconds);
    const modelled = local + r * rttS + b / bytesPerS;
    rows.push(
      `  ${strategy.padEnd(12)} requests ${r}  bytes ${kb(b).padStart(10)} (${((100 * b) / clone.bytesReceived).toFixed(2)} % of the clone)  loopback ${local.toFixed(3)} s  at ${args.rtt} ms / ${args.mbps} Mbit/s ${modelled.toFixed(3)} s`,
    );
  }
  await engine.repo(minimalRepoId(url)).delete();
}
process.stdout.write(`${rows.join('\n')}\n`);
await server.close();
