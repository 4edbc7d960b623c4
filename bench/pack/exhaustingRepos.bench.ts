/**
 * Each call of the worker API on the repositories built to exhaust it (server/fixtures/exhausting.sh),
 * through a real comlink link as the page makes them, against git http-backend: how long each takes to end
 * (in a success or its typed error), and the longest a second call waits for its answer, asked again and
 * again while the first runs.
 * The figures behind "ends within 2 s; a second call is answered within 1 s" (issue 24), which the tests
 * hold only to a bound five times looser (test/exhaustingRepos.test.ts). Node with fake-indexeddb; median of
 * RUNS, a fresh clone each run.
 *
 *   npx tsx bench/pack/exhaustingRepos.bench.ts [RUNS]
 */
import 'fake-indexeddb/auto';
import { fixtureServerOptions } from '../../server/fixtures/fixtureServerOptions.ts';
import { ensureFixtures } from '../../server/fixtures/index.ts';
import { startGitServer } from '../../server/gitServer.ts';
import { linkedEngine } from '../../test/support/workerBoundary.ts';
import { createEngine } from '../../workers/engine/engine.ts';

(globalThis as { navigator?: unknown }).navigator ??= {};

const engine = createEngine();
const runs = Number(process.argv[2] ?? 3);
const { dir } = await ensureFixtures();
const server = await startGitServer(fixtureServerOptions(dir));
const { client } = linkedEngine(engine);
const DEEP_FILE = `${'d/'.repeat(5001)}f.txt`;

const CASES = {
  'hostile-link.git': { path: 'link', folder: '' },
  'hostile-deep.git': { path: DEEP_FILE, folder: DEEP_FILE.replace(/\/f\.txt$/, '') },
  'hostile-wide.git': { path: 'wide/f000001', folder: 'wide' },
};

/** How long `call` takes to end, and the longest a second call waited, asked again and again meanwhile. */
async function timed(call: () => Promise<unknown>): Promise<{ ms: number; end: string; answerMs: number }> {
  const started = performance.now();
  let ms = 0;
  const first = call().then(
    () => 'ok',
    (e: { code?: string; details?: { check?: string } }) => e.details?.check ?? e.code ?? 'error',
  );
  let done = false;
  void first.finally(() => {
    ms = performance.now() - started;
    done = true;
  });
  let answerMs = 0;
  while (!done) {
    const asked = performance.now();
    await client.listRepos();
    answerMs = Math.max(answerMs, performance.now() - asked);
  }
  return { ms, end: await first, answerMs };
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
console.log(
  `median of ${runs} runs, ms; "answer" is the longest wait of second calls made while the first ran`,
);
console.log('| repository | call | ends with | ms | answer ms |\n| --- | --- | --- | --- | --- |');
for (const [repo, c] of Object.entries(CASES)) {
  const url = `${server.url}/${repo}`;
  const rows = new Map<string, { end: string; ms: number[]; answer: number[] }>();
  for (let r = 0; r < runs; r++) {
    let repoId = '';
    const calls: [string, () => Promise<unknown>][] = [
      ['clone', async () => ({ repoId } = await client.clone({ url }))],
      ['readTree (root)', () => client.repo(repoId).readTree({ ref: 'HEAD', path: '' })],
      [
        `readTree ${c.folder ? 'of the case' : '(root)'}`,
        () => client.repo(repoId).readTree({ ref: 'HEAD', path: c.folder }),
      ],
      ['listPaths (go to file)', () => client.repo(repoId).listPaths({ ref: 'HEAD' })],
      ['readFile of the case', () => client.repo(repoId).readFile({ ref: 'HEAD', path: c.path })],
      ['checkout', () => client.repo(repoId).checkout({ ref: 'HEAD' })],
      ['minimal read of the case', () => client.readFileMinimal({ url: url, ref: 'main', path: c.path })],
    ];
    for (const [name, call] of calls) {
      const t = await timed(call);
      const row = rows.get(name) ?? { end: t.end, ms: [], answer: [] };
      row.ms.push(t.ms);
      row.answer.push(t.answerMs);
      rows.set(name, row);
    }
    await client.repo(repoId).delete();
  }
  for (const [name, row] of rows) {
    console.log(
      `| ${repo} | ${name} | ${row.end} | ${median(row.ms).toFixed(0)} | ${median(row.answer).toFixed(0)} |`,
    );
  }
}
await server.close();
