// Measures the history fill's step schedules (FILL_DEPTHS in workers/ops/sync/historyFill.ts): the time and
// response bytes of a first-view clone plus its fill, for each schedule, against a plain blob:none clone,
// in Node against the real git http-backend. A measurement, not a test:
//   npx tsx test/measure/fillDepths.ts medium "|100,1000|1000,10000|100,1000,10000"
import '../nodeBrowserEnv.ts';
import { fixtureServerOptions } from '../../server/fixtures/fixtureServerOptions.ts';
import { ensureFixtures, SIZED_PRESETS } from '../../server/fixtures/index.ts';
import { startGitServer } from '../../server/gitServer.ts';
import { testEngine } from '../support/engine.ts';

const [name = 'medium', schedulesArg = '|100,1000,10000'] = process.argv.slice(2);
const sized = name in SIZED_PRESETS ? [SIZED_PRESETS[name as keyof typeof SIZED_PRESETS]] : [];
const { dir } = await ensureFixtures({ sized });
const server = await startGitServer(fixtureServerOptions(dir));
const url = `${server.url}/${name}.git`;
const { engine } = testEngine();
const mb = (n: number) => `${(n / 1e6).toFixed(2)} MB`;
try {
  let t = performance.now();
  const plain = await engine.clone({ url });
  console.log(
    `plain blob:none clone: ${((performance.now() - t) / 1000).toFixed(2)} s, ${mb(plain.bytesReceived)}`,
  );
  for (const s of schedulesArg.split('|')) {
    const depths = s ? s.split(',').map(Number) : [];
    t = performance.now();
    const first = await engine.clone({ url, firstView: true });
    const firstS = (performance.now() - t) / 1000;
    const stepTimes: string[] = [];
    let last = performance.now();
    const fill = await engine.repo(first.repoId).fillHistory(
      { depths },
      {
        onProgress: (p) => {
          if (p.phase !== 'stored') return;
          const now = performance.now();
          stepTimes.push(`${((now - last) / 1000).toFixed(2)}`);
          last = now;
        },
      },
    );
    const total = (performance.now() - t) / 1000;
    const bytes = first.bytesReceived + fill.bytesReceived;
    console.log(
      `depths [${depths.join(', ')}]: first view ${firstS.toFixed(2)} s ${mb(first.bytesReceived)}; fill ${fill.steps} steps (${stepTimes.join(' + ')} s); total ${total.toFixed(2)} s, ${mb(bytes)} (${((bytes / plain.bytesReceived - 1) * 100).toFixed(2)} % over plain); complete ${fill.complete}`,
    );
  }
} finally {
  await server.close();
}
