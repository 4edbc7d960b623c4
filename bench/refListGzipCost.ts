/**
 * What gzipping a ref list costs the server: the ls-refs answer of tags.git (1,000 tags), gzipped as
 * server/gitServer.ts does (node:zlib's default level) again and again, in CPU time per answer, beside
 * the wall time the server takes to answer that ls-refs itself. docs/decisions/compressed-ref-lists.md.
 *
 *   npx tsx bench/refListGzipCost.ts [--rounds N]
 */
import { parseArgs } from 'node:util';
import { gzipSync } from 'node:zlib';
import { fixtureServerOptions } from '../server/fixtures/fixtureServerOptions.ts';
import { ensureFixtures } from '../server/fixtures/index.ts';
import { startGitServer } from '../server/gitServer.ts';

const { values } = parseArgs({ options: { rounds: { type: 'string', default: '500' } } });
const rounds = Number(values.rounds);
const fixtures = await ensureFixtures();
const server = await startGitServer(fixtureServerOptions(fixtures.dir));
try {
  const lsRefs =
    '0014command=ls-refs\n00010009peel\n000csymrefs\n001bref-prefix refs/heads/\n001aref-prefix refs/tags/\n0000';
  const ask = async (encoding: string) => {
    const started = performance.now();
    const res = await fetch(`${server.url}/tags.git/git-upload-pack`, {
      method: 'POST',
      headers: {
        'Git-Protocol': 'version=2',
        'Content-Type': 'application/x-git-upload-pack-request',
        'Accept-Encoding': encoding,
      },
      body: lsRefs,
    });
    const body = Buffer.from(await res.arrayBuffer());
    return { body, ms: performance.now() - started };
  };
  const plain = await ask('identity');
  const walls: number[] = [];
  for (let i = 0; i < 20; i++) walls.push((await ask('identity')).ms);
  walls.sort((a, b) => a - b);
  const zipped = gzipSync(plain.body);
  const cpu = process.cpuUsage();
  const t0 = performance.now();
  for (let i = 0; i < rounds; i++) gzipSync(plain.body);
  const wall = performance.now() - t0;
  const used = process.cpuUsage(cpu);
  const perAnswerMs = (used.user + used.system) / 1000 / rounds;
  console.log(
    JSON.stringify(
      {
        answerBytes: plain.body.length,
        gzippedBytes: zipped.length,
        gzipCpuMsPerAnswer: Number(perAnswerMs.toFixed(3)),
        gzipWallMsPerAnswer: Number((wall / rounds).toFixed(3)),
        lsRefsWallMsMedian: Number(walls[walls.length >> 1].toFixed(1)),
        rounds,
      },
      null,
      2,
    ),
  );
} finally {
  await server.close();
}
