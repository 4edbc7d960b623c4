/*
bench/lsRefsAheadAb.ts: the A/B of docs/decisions/ls-refs-ahead.md, in one run, interleaved.

  npx tsx bench/lsRefsAheadAb.ts [repo.git ...]      (default: small-sized.git medium.git tags-50.git)

The clone's first two requests against the fixtures' real git http-backend, from Node (no browser, so no
preflights): info/refs then ls-refs, against ls-refs sent with the GET (lsRefsAhead), alternately, 25 times
each per repository; prints the medians and the machine's load average. Fixtures must be built
(`npx tsx server/fixtures/cli.ts`).
*/

import { loadavg } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { fixtureServerOptions } from '../server/fixtures/fixtureServerOptions.ts';
import { startGitServer } from '../server/gitServer.ts';
import { lsRefsAhead, lsRefsCall } from '../workers/ops/sync/lsRefsCall.ts';
import { GitHttpClient } from '../workers/transport/gitHttp.ts';
import { parseInfoRefs } from '../workers/wire/capabilities.ts';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const ROUNDS = 25;
const PREFIXES = ['HEAD', 'refs/heads/', 'refs/tags/'];
const MAX_BYTES = 64 << 20;

const server = await startGitServer(fixtureServerOptions(join(ROOT, '.cache', 'fixtures')));

/** Milliseconds from nothing to the refs listed, the way clone asks them. */
async function listRefs(repo: string, ahead: boolean): Promise<number> {
  const client = new GitHttpClient(`${server.url}/${repo}`, { protocol: 'version=2' });
  const start = performance.now();
  const sent = ahead ? lsRefsAhead(client, PREFIXES, MAX_BYTES) : undefined;
  const advertisement = parseInfoRefs(await client.infoRefs('git-upload-pack'));
  if (advertisement.version !== 2) throw new Error(`${repo} is not served with protocol v2`);
  const refs = await lsRefsCall(client, advertisement.capabilities, PREFIXES, {
    maxBytes: MAX_BYTES,
    ahead: sent,
  });
  // Two requests: a speculative answer thrown away would make the A/B compare nothing.
  if (refs.length === 0 || client.requests !== 2) throw new Error(`${repo}: ${client.requests} requests`);
  return performance.now() - start;
}

const median = (xs: number[]) => [...xs].sort((x, y) => x - y)[xs.length >> 1];
const repos = process.argv.slice(2);
try {
  for (const repo of repos.length > 0 ? repos : ['small-sized.git', 'medium.git', 'tags-50.git']) {
    const sequential: number[] = [];
    const withAhead: number[] = [];
    for (let i = 0; i < ROUNDS; i++) {
      sequential.push(await listRefs(repo, false));
      withAhead.push(await listRefs(repo, true));
    }
    console.log(
      `${repo}: info/refs then ls-refs ${median(sequential).toFixed(1)} ms, ls-refs with the GET ${median(withAhead).toFixed(1)} ms (medians of ${ROUNDS}, alternating; load ${loadavg()[0].toFixed(1)})`,
    );
  }
} finally {
  await server.close();
}
