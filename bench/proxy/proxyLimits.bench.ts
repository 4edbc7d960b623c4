// What the CORS proxy's limits must let through (docs/decisions/proxy-limits.md): the largest request
// bodies of real negotiations, the largest answers, how long one request takes, and how many requests a
// browsing session makes per second and per ten seconds.
//
//   npx tsx bench/proxy/proxyLimits.bench.ts [--local 20000] [--tags 1500]
//
// git's own fetch and clone on large.git (50,000 commits: git.git-sized) go through a recording relay;
// Blobless's client (the API in Node, as the tests run it) records each request it makes. Needs the large
// fixture (`npx tsx server/fixtures/cli.ts --sized large`).

import 'fake-indexeddb/auto';
import { execFile, execFileSync } from 'node:child_process';
import { cp, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs, promisify } from 'node:util';
import { ensureFixtures, SIZED_PRESETS } from '../../server/fixtures/index.ts';
import { startGitServer } from '../../server/gitServer.ts';
import { startRelay } from '../../test/support/relay.ts';
import { createEngine } from '../../workers/engine/engine.ts';

const engine = createEngine();

(globalThis as { navigator?: unknown }).navigator ??= {};

const { values } = parseArgs({
  options: { local: { type: 'string', default: '20000' }, tags: { type: 'string', default: '1500' } },
});
const LOCAL_COMMITS = Number(values.local);
const TAGS = Number(values.tags);

interface Sent {
  what: string;
  bodyBytes: number;
  answerBytes: number;
  start: number;
  ms: number;
}

const git = (cwd: string, args: string[], input?: string) =>
  execFileSync('git', args, { cwd, input, encoding: 'utf8', maxBuffer: 1 << 30 });
/** For git commands that talk to the relay, which runs in this process: the event loop must go on. */
const gitAsync = (cwd: string, args: string[]) =>
  promisify(execFile)('git', args, { cwd, maxBuffer: 1 << 30 });

/** `count` commits on `ref` after `from`, each changing one file, newer than anything before. */
function commits(ref: string, from: string, count: number, tag: string): string {
  const lines: string[] = [];
  for (let i = 1; i <= count; i++) {
    const data = `${tag} ${i}\n`;
    lines.push(
      `commit ${ref}`,
      `committer Bench <bench@example.com> ${2_000_000_000 + i} +0000`,
      `data ${tag.length + 1}`,
      tag,
      ...(i === 1 ? [`from ${from}`] : []),
      `M 644 inline ${tag}.txt`,
      `data ${Buffer.byteLength(data)}`,
      data,
    );
  }
  return `${lines.join('\n')}\n`;
}

const fixtures = await ensureFixtures({ sized: [SIZED_PRESETS.large] });
const work = await mkdtemp(join(tmpdir(), 'blobless-proxy-limits-'));
try {
  const serverRoot = join(work, 'server');
  await cp(join(fixtures.dir, 'large.git'), join(serverRoot, 'large.git'), { recursive: true });
  const server = join(serverRoot, 'large.git');
  const tip = git(server, ['rev-parse', 'HEAD']).trim();
  const branch = git(server, ['symbolic-ref', '--short', 'HEAD']).trim();

  // A fork of it with LOCAL_COMMITS of its own, and the server three commits ahead.
  const fork = join(work, 'fork.git');
  git(work, ['clone', '-q', '--bare', server, fork]);
  git(fork, ['fast-import', '--quiet'], commits('refs/heads/own', tip, LOCAL_COMMITS, 'own'));
  git(server, ['fast-import', '--quiet'], commits(`refs/heads/${branch}`, tip, 3, 'upstream'));
  // TAGS tags on older commits, for a clone's want list.
  const old = git(server, ['rev-list', '--max-count', String(TAGS * 20), tip])
    .trim()
    .split('\n');
  git(
    server,
    ['update-ref', '--stdin'],
    old
      .filter((_, i) => i % 20 === 0)
      .map((oid, i) => `create refs/tags/v${i} ${oid}\n`)
      .join(''),
  );

  const gitServer = await startGitServer({ root: serverRoot });
  const recorded: { path: string; body: Buffer }[] = [];
  const relay = await startRelay(gitServer.url, { kind: 'record', requests: recorded });
  const posts = () => recorded.filter((r) => r.path.endsWith('/git-upload-pack')).map((r) => r.body.length);
  const cli = async (what: string, run: () => Promise<unknown>) => {
    recorded.length = 0;
    await run();
    const sizes = posts();
    console.log(
      `${what}: ${sizes.length} POSTs, largest body ${Math.max(...sizes)} B, bodies ${sizes.join(' ')}`,
    );
  };
  const v2 = ['-c', 'protocol.version=2'];
  const fetchInto = (repo: string) => () =>
    gitAsync(repo, [
      ...v2,
      'fetch',
      '-q',
      '--no-tags',
      `${relay.url}/large.git`,
      `${branch}:refs/remotes/o/m`,
    ]);
  await cli(`git fetch, a fork with ${LOCAL_COMMITS} commits of its own`, fetchInto(fork));
  const small = join(work, 'small.git');
  git(work, ['clone', '-q', '--bare', join(fixtures.dir, 'large.git'), small]);
  git(small, ['fast-import', '--quiet'], commits('refs/heads/own', tip, 1200, 'own'));
  await cli('git fetch, a fork with 1200 commits of its own', fetchInto(small));
  await cli(`git clone --filter=blob:none, ${TAGS} tags`, () =>
    gitAsync(work, [...v2, 'clone', '-q', '--bare', '--filter=blob:none', `${relay.url}/large.git`, 'c.git']),
  );

  // Blobless's own requests, as a person's session makes them: open first, history behind, a checkout.
  const sent: Sent[] = [];
  const realFetch = globalThis.fetch;
  globalThis.fetch = async (input, init) => {
    const start = performance.now();
    const body = init?.body as Uint8Array | undefined;
    const res = await realFetch(input, init);
    const what = `${init?.method ?? 'GET'} ${String(input).replace(/^.*\/large\.git/, '')}`;
    const record: Sent = { what, bodyBytes: body?.byteLength ?? 0, answerBytes: 0, start, ms: 0 };
    sent.push(record);
    if (!res.body) return res;
    const counted = res.body.pipeThrough(
      new TransformStream<Uint8Array, Uint8Array>({
        // The reader may stop at git's last packet without reading the end: the last chunk's time counts.
        transform(chunk, out) {
          record.answerBytes += chunk.byteLength;
          record.ms = performance.now() - start;
          out.enqueue(chunk);
        },
      }),
    );
    return new Response(counted, res);
  };
  const session = performance.now();
  const cloned = await engine.clone({ url: `${gitServer.url}/large.git`, firstView: true });
  await engine.repo(cloned.repoId).fillHistory();
  await engine.repo(cloned.repoId).checkout({ ref: 'HEAD' });
  const sessionMs = performance.now() - session;
  await engine.repo(cloned.repoId).delete();
  const sessionRequests = sent.length;

  // Our negotiator with the fork's commits: Blobless clones the fork, which then vanishes from the
  // server in favour of large.git, three commits ahead and without the fork's own branch.
  await cp(fork, join(serverRoot, 'fork.git'), { recursive: true });
  const forked = await engine.clone({ url: `${gitServer.url}/fork.git` });
  await rm(join(serverRoot, 'fork.git'), { recursive: true });
  await cp(server, join(serverRoot, 'fork.git'), { recursive: true });
  const before = sent.length;
  const fetched = await engine.repo(forked.repoId).fetch();
  const rounds = sent.slice(before).filter((s) => s.what.endsWith('git-upload-pack'));
  console.log(
    `Blobless fetch, its clone of the fork (${LOCAL_COMMITS} commits the server lacks): ${fetched.negotiation.rounds} rounds, ${fetched.negotiation.haves} haves, POST bodies ${rounds.map((r) => r.bodyBytes).join(' ')} B`,
  );
  await engine.repo(forked.repoId).delete();
  globalThis.fetch = realFetch;
  sent.length = sessionRequests;

  const peak = (windowMs: number) => {
    let best = 0;
    for (const a of sent)
      best = Math.max(best, sent.filter((b) => b.start >= a.start && b.start < a.start + windowMs).length);
    return best;
  };
  const biggest = (key: 'bodyBytes' | 'answerBytes' | 'ms') =>
    sent.reduce((m, s) => (s[key] > m[key] ? s : m));
  console.log(
    `Blobless, large.git opened, history filled, checked out: ${sent.length} requests in ${(sessionMs / 1000).toFixed(1)} s`,
  );
  for (const key of ['bodyBytes', 'answerBytes', 'ms'] as const) {
    const s = biggest(key);
    console.log(
      `  largest ${key}: ${Math.round(s[key])} (${s.what}, body ${s.bodyBytes} B, answer ${s.answerBytes} B, ${Math.round(s.ms)} ms)`,
    );
  }
  console.log(`  most requests in 1 s: ${peak(1000)}, in 10 s: ${peak(10_000)}, in 60 s: ${peak(60_000)}`);
  await relay.close();
  await gitServer.close();
} finally {
  await rm(work, { recursive: true, force: true });
}
