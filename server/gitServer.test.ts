import { execFile } from 'node:child_process';
import { cp, mkdtemp, rm } from 'node:fs/promises';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { gunzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { fixtureServerOptions, PRIVATE_REPO_CREDENTIALS } from './fixtures/fixtureServerOptions.ts';
import {
  type GitServer,
  type ServerStats,
  STATS_PATH,
  STATS_RESET_PATH,
  startGitServer,
} from './gitServer.ts';
import { emptyRepoStats } from './repoStats.ts';

const gitServerUrl = inject('gitServerUrl');
const fixturesDir = inject('fixturesDir');

/** Real git, deaf to the user's config and never prompting for a password. */
async function git(args: string[], cwd?: string): Promise<string> {
  const env: NodeJS.ProcessEnv = {};
  for (const [name, value] of Object.entries(process.env)) if (!name.startsWith('GIT_')) env[name] = value;
  Object.assign(env, { GIT_CONFIG_NOSYSTEM: '1', GIT_CONFIG_GLOBAL: '/dev/null', GIT_TERMINAL_PROMPT: '0' });
  const { stdout } = await promisify(execFile)('git', args, { cwd, env, maxBuffer: 64 * 1024 * 1024 });
  return stdout.trim();
}

function infoRefs(repo: string, headers: Record<string, string> = {}): Promise<Response> {
  return fetch(`${gitServerUrl}/${repo}/info/refs?service=git-upload-pack`, { headers });
}

function basicAuth(user: string, password: string): string {
  return `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`;
}

let scratch: string;
beforeAll(async () => {
  scratch = await mkdtemp(join(tmpdir(), 'blobless-server-test-'));
});
afterAll(async () => {
  await rm(scratch, { recursive: true, force: true });
});

describe('CORS', () => {
  it('answers a preflight with 204 and allows the headers a browser git client sends', async () => {
    const res = await fetch(`${gitServerUrl}/basic.git/git-upload-pack`, {
      method: 'OPTIONS',
      headers: {
        Origin: 'http://localhost:5173',
        'Access-Control-Request-Method': 'POST',
        'Access-Control-Request-Headers': 'git-protocol, content-type',
      },
    });
    expect(res.status).toBe(204);
    expect(res.headers.get('access-control-allow-origin')).toBe('http://localhost:5173');
    expect(res.headers.get('access-control-allow-methods')).toContain('POST');
    const allowed = res.headers.get('access-control-allow-headers')?.toLowerCase() ?? '';
    for (const header of ['git-protocol', 'content-type', 'authorization', 'content-encoding']) {
      expect(allowed).toContain(header);
    }
    expect(Number(res.headers.get('access-control-max-age'))).toBeGreaterThan(0);
  });

  it('lets preflights through for missing repositories, so the page sees the 404 itself', async () => {
    const res = await fetch(`${gitServerUrl}/no-such-repo.git/info/refs`, { method: 'OPTIONS' });
    expect(res.status).toBe(204);
  });

  it('marks git answers, errors and the stats endpoint as readable cross-origin', async () => {
    for (const url of [
      `${gitServerUrl}/basic.git/info/refs?service=git-upload-pack`,
      `${gitServerUrl}/no-such-repo.git/info/refs?service=git-upload-pack`,
      `${gitServerUrl}${STATS_PATH}`,
    ]) {
      const res = await fetch(url);
      await res.arrayBuffer();
      expect(res.headers.get('access-control-allow-origin'), url).toBe('*');
      expect(res.headers.get('access-control-expose-headers'), url).toContain('Content-Type');
    }
  });
});

describe('info/refs', () => {
  it('advertises protocol v2 capabilities, with filter, when the client asks for version 2', async () => {
    const res = await infoRefs('basic.git', { 'Git-Protocol': 'version=2' });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('application/x-git-upload-pack-advertisement');
    const body = await res.text();
    expect(body.startsWith('000eversion 2\n')).toBe(true);
    const fetchLine = body.split('\n').find((line) => line.slice(4).startsWith('fetch='));
    expect(fetchLine?.split(/[= ]/)).toContain('filter');
  });

  it('answers in protocol v0 when the client does not ask for v2', async () => {
    const body = await (await infoRefs('basic.git')).text();
    expect(body.startsWith('001e# service=git-upload-pack\n0000')).toBe(true);
    // gitprotocol-v2 (v0 discovery): the first ref carries the capabilities after a NUL.
    expect(body).toMatch(/\n0000[0-9a-f]{44} HEAD\0[^\n]*symref=HEAD:refs\/heads\/main/);
    expect(body).toContain(' refs/heads/main\n');
  });

  it('answers in protocol v0 for a v0-only repository even when the client asks for v2', async () => {
    const body = await (await infoRefs('v0.git', { 'Git-Protocol': 'version=2' })).text();
    expect(body.startsWith('001e# service=git-upload-pack\n0000')).toBe(true);
    expect(body).not.toContain('version 2');
  });

  it('leaves filter out of fetch for the repository that does not allow it', async () => {
    const body = await (await infoRefs('nofilter.git', { 'Git-Protocol': 'version=2' })).text();
    const fetchLine = body.split('\n').find((line) => line.slice(4).startsWith('fetch='));
    expect(fetchLine).toBeDefined();
    expect(fetchLine?.split(/[= ]/)).not.toContain('filter');
  });
});

/** One request with node:http, which (unlike fetch) hands back the body as sent, compressed or not. */
function rawRequest(
  path: string,
  opts: { method?: string; headers?: Record<string, string>; body?: string } = {},
): Promise<{ status: number; headers: Record<string, string | string[] | undefined>; body: Buffer }> {
  return new Promise((resolveRequest, rejectRequest) => {
    const req = request(
      `${gitServerUrl}${path}`,
      { method: opts.method ?? 'GET', headers: opts.headers },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () =>
          resolveRequest({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }),
        );
        res.on('error', rejectRequest);
      },
    );
    req.on('error', rejectRequest);
    req.end(opts.body);
  });
}

describe('gzip on the wire: ref lists only', () => {
  const v2 = { 'Git-Protocol': 'version=2' };
  const post = { ...v2, 'Content-Type': 'application/x-git-upload-pack-request' };
  const lsRefs = '0014command=ls-refs\n00010009peel\n000csymrefs\n0000';
  const infoRefsPath = '/features.git/info/refs?service=git-upload-pack';

  it('gzips info/refs and ls-refs for a client that takes gzip, to the same bytes once decoded', async () => {
    for (const [path, method, body] of [
      [infoRefsPath, 'GET', undefined],
      ['/features.git/git-upload-pack', 'POST', lsRefs],
    ] as const) {
      const headers = method === 'POST' ? post : v2;
      const plain = await rawRequest(path, { method, headers, body });
      const zipped = await rawRequest(path, {
        method,
        headers: { ...headers, 'Accept-Encoding': 'gzip, deflate, br' },
        body,
      });
      expect(plain.headers['content-encoding'], path).toBeUndefined();
      expect(zipped.headers['content-encoding'], path).toBe('gzip');
      expect(zipped.headers.vary, path).toContain('Accept-Encoding');
      expect(gunzipSync(zipped.body).equals(plain.body), path).toBe(true);
      expect(plain.body.length, path).toBeGreaterThan(0);
    }
    const refs = await rawRequest('/features.git/git-upload-pack', {
      method: 'POST',
      headers: { ...post, 'Accept-Encoding': 'gzip' },
      body: lsRefs,
    });
    // Hex object ids are half entropy, names repeat their prefixes: the answer shrinks by a third or more.
    expect(refs.body.length).toBeLessThan(gunzipSync(refs.body).length * 0.67);
  });

  it('never gzips a pack, nor for a client that refuses gzip', async () => {
    const main = await git(['--git-dir', join(fixturesDir, 'basic.git'), 'rev-parse', 'main']);
    const fetchCommand = `0011command=fetch0001000dthin-pack000dofs-delta0032want ${main}\n0009done\n0000`;
    const pack = await rawRequest('/basic.git/git-upload-pack', {
      method: 'POST',
      headers: { ...post, 'Accept-Encoding': 'gzip' },
      body: fetchCommand,
    });
    expect(pack.status).toBe(200);
    expect(pack.headers['content-encoding']).toBeUndefined();
    expect(pack.body.includes('packfile\n')).toBe(true);
    for (const refuses of ['gzip;q=0, deflate', 'identity', 'br']) {
      const res = await rawRequest(infoRefsPath, { headers: { ...v2, 'Accept-Encoding': refuses } });
      expect(res.headers['content-encoding'], refuses).toBeUndefined();
    }
  });

  it('serves the git CLI, which takes gzip, the same refs as the repository holds', async () => {
    const served = await git(['-c', 'protocol.version=2', 'ls-remote', `${gitServerUrl}/features.git`]);
    expect(served).toBe(await git(['ls-remote', join(fixturesDir, 'features.git')]));
  });
});

describe('git clone through the server', () => {
  let server: GitServer;
  // A server of our own: counters on the shared one move with every test file running alongside.
  beforeAll(async () => {
    server = await startGitServer(fixtureServerOptions(fixturesDir));
  });
  afterAll(async () => {
    await server.close();
  });

  it('makes a blobless partial clone over protocol v2 and counts the traffic', async () => {
    const dest = join(scratch, 'partial');
    await git([
      '-c',
      'protocol.version=2',
      'clone',
      '-q',
      '--filter=blob:none',
      `${server.url}/basic.git`,
      dest,
    ]);
    expect(await git(['rev-parse', 'HEAD'], dest)).toBe(
      await git(['--git-dir', join(fixturesDir, 'basic.git'), 'rev-parse', 'HEAD']),
    );
    expect(await git(['config', 'remote.origin.promisor'], dest)).toBe('true');

    const stats = server.stats('basic.git');
    expect(stats.requests).toBeGreaterThanOrEqual(2);
    expect(stats.bytesSent).toBeGreaterThan(0);
    expect(stats.bytesReceived).toBeGreaterThan(0);
    // The clone's fetch and the checkout's lazy blob fetch (not the ls-refs POST); no push.
    expect(stats.fetches).toBe(2);
    expect(stats.pushes).toBe(0);
    expect(server.stats().total.requests).toBe(stats.requests);
    const overHttp = (await (await fetch(`${server.url}${STATS_PATH}`)).json()) as ServerStats;
    expect(overHttp.repos['basic.git']).toEqual(stats);
  });

  it('resets the counters over HTTP, without counting the stats requests themselves', async () => {
    await git(['clone', '-q', '--bare', `${server.url}/basic.git`, join(scratch, 'for-reset.git')]);
    expect(server.stats('basic.git').requests).toBeGreaterThan(0);
    const res = await fetch(`${server.url}${STATS_RESET_PATH}`, { method: 'POST' });
    expect(res.status).toBe(204);
    expect(server.stats()).toEqual({
      repos: {},
      total: emptyRepoStats(),
    });
    await fetch(`${server.url}${STATS_PATH}`).then((r) => r.json());
    expect(server.stats().total.requests).toBe(0);
  });

  it('clones the auth repository with the right credentials', async () => {
    const { user, password } = PRIVATE_REPO_CREDENTIALS;
    const dest = join(scratch, 'private');
    await git([
      'clone',
      '-q',
      `http://${user}:${password}@${server.url.slice('http://'.length)}/private.git`,
      dest,
    ]);
    expect(await git(['log', '--format=%s', '-1'], dest)).toBe('Greet less formally');
  });

  it('stops the backend and keeps serving when a client hangs up mid-answer', async () => {
    const controller = new AbortController();
    const res = await fetch(`${server.url}/features.git/git-upload-pack`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/x-git-upload-pack-request', 'Git-Protocol': 'version=2' },
      body: `0011command=fetch0001000dthin-pack000dofs-delta0032want ${await git(['--git-dir', join(fixturesDir, 'features.git'), 'rev-parse', 'main'])}\n0009done\n0000`,
      signal: controller.signal,
    });
    const reader = res.body!.getReader();
    await reader.read();
    controller.abort();
    await reader.read().catch(() => undefined);
    const again = await fetch(`${server.url}/basic.git/info/refs?service=git-upload-pack`);
    expect(again.status).toBe(200);
    await again.arrayBuffer();
  });
});

describe('authentication', () => {
  it('answers 401 with a Basic challenge when credentials are missing', async () => {
    const res = await infoRefs('private.git', { 'Git-Protocol': 'version=2' });
    expect(res.status).toBe(401);
    expect(res.headers.get('www-authenticate')).toMatch(/^Basic realm="/);
  });

  it('answers 401 for wrong credentials and 200 for the right ones', async () => {
    const wrong = await infoRefs('private.git', { Authorization: basicAuth('alice', 'guess') });
    expect(wrong.status).toBe(401);
    const { user, password } = PRIVATE_REPO_CREDENTIALS;
    const right = await infoRefs('private.git', {
      Authorization: basicAuth(user, password),
      'Git-Protocol': 'version=2',
    });
    expect(right.status).toBe(200);
    expect(await right.text()).toContain('version 2');
  });

  it('lets preflights through without credentials, as browsers send none', async () => {
    const res = await fetch(`${gitServerUrl}/private.git/info/refs`, { method: 'OPTIONS' });
    expect(res.status).toBe(204);
  });
});

describe('unknown paths', () => {
  it('answers 404 for a repository that does not exist', async () => {
    const res = await infoRefs('no-such-repo.git');
    expect(res.status).toBe(404);
    expect(await res.text()).toContain('No repository');
  });

  it('answers 404 for paths without a repository and for paths that climb out of the root', async () => {
    expect((await fetch(`${gitServerUrl}/`)).status).toBe(404);
    expect((await fetch(`${gitServerUrl}/favicon.ico`)).status).toBe(404);
    // fetch() would normalise the dots away, so send the raw path.
    const status = await new Promise<number | undefined>((resolve, reject) => {
      const req = request(`${gitServerUrl}/%2e%2e/fixtures/basic.git/info/refs`, (res) => {
        res.resume();
        resolve(res.statusCode);
      });
      req.on('error', reject);
      req.end();
    });
    expect(status).toBe(404);
  });
});

describe('receive-pack', () => {
  let root: string;
  beforeAll(async () => {
    // Pushing changes a repository: push to a copy, never to the fixtures.
    root = join(scratch, 'push-root');
    await cp(join(fixturesDir, 'basic.git'), join(root, 'basic.git'), { recursive: true });
  });

  async function pushNewBranch(server: GitServer, branch: string): Promise<void> {
    const work = join(scratch, `work-${branch}`);
    await git(['clone', '-q', `${server.url}/basic.git`, work]);
    await git(
      ['-c', 'user.name=T', '-c', 'user.email=t@example.com', 'commit', '-q', '--allow-empty', '-m', 'x'],
      work,
    );
    await git(['push', '-q', 'origin', `HEAD:refs/heads/${branch}`], work);
  }

  it('is refused as the fixtures configure it', async () => {
    const server = await startGitServer({ root });
    try {
      await expect(pushNewBranch(server, 'refused')).rejects.toThrow(/403|not allowed|unable to access/i);
    } finally {
      await server.close();
    }
  });

  it('is accepted for the repositories listed in receivePackRepos', async () => {
    const server = await startGitServer({ root, receivePackRepos: ['basic.git'] });
    try {
      await pushNewBranch(server, 'accepted');
      expect(
        await git(['--git-dir', join(root, 'basic.git'), 'rev-parse', '--verify', 'refs/heads/accepted']),
      ).toMatch(/^[0-9a-f]{40}$/);
      expect(server.stats('basic.git').pushes).toBe(1);
    } finally {
      await server.close();
    }
  });
});
