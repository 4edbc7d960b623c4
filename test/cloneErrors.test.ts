import { mkdtemp, rm } from 'node:fs/promises';
import { createServer, request } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, inject, it } from 'vitest';
import { api } from '../workers/api.ts';
import { GITDIR, openRepoFs } from '../workers/store/repoFs.ts';
import { exportDir } from './support/exportGitDir.ts';
import { git as gitCli } from './support/git.ts';
import { startRelay } from './support/relay.ts';

const serverUrl = inject('gitServerUrl');
let tmp: string;
beforeAll(async () => {
  tmp = await mkdtemp(join(tmpdir(), 'blobless-errors-'));
});
afterAll(async () => {
  await rm(tmp, { recursive: true, force: true });
});

/** After a failed clone nothing of it may remain: no registry entry, no repo database. */
async function expectNothingStored(): Promise<void> {
  expect(await api.listRepos()).toEqual([]);
  const dbs = await indexedDB.databases();
  expect(dbs.map((d) => d.name).filter((n) => n?.startsWith('blobless-repo-'))).toEqual([]);
}

afterEach(async () => {
  for (const r of await api.listRepos()) await api.deleteRepo(r.id);
});

async function cloneError(
  opts: Parameters<typeof api.clone>[0],
  signal?: AbortSignal,
  onProgress?: Parameters<typeof api.clone>[1],
) {
  try {
    await api.clone(opts, onProgress, signal);
  } catch (err) {
    return err as Error & { code: string };
  }
  throw new Error('clone unexpectedly succeeded');
}

describe('clone failures end in a typed error and leave nothing behind', () => {
  it('a URL that is not a URL', async () => {
    const err = await cloneError({ url: 'not a url' });
    expect(err.code).toBe('INVALID_URL');
    expect(err.message).toMatch(/not a URL/);
    await expectNothingStored();
  });

  it('an ssh URL', async () => {
    const err = await cloneError({ url: 'ssh://git@example.com/repo.git' });
    expect(err.code).toBe('INVALID_URL');
  });

  it('a repository that does not exist (404)', async () => {
    const err = await cloneError({ url: `${serverUrl}/nope.git` });
    expect(err.code).toBe('HTTP_NOT_FOUND');
    expect(err.message).toMatch(/No git repository/);
    await expectNothingStored();
  });

  it('a private repository without credentials (401), then with them', async () => {
    const err = await cloneError({ url: `${serverUrl}/private.git` });
    expect(err.code).toBe('HTTP_UNAUTHORIZED');
    const wrong = await cloneError({
      url: `${serverUrl}/private.git`,
      auth: { username: 'alice', password: 'nope' },
    });
    expect(wrong.code).toBe('HTTP_UNAUTHORIZED');
    expect(wrong.message).toMatch(/refused the credentials/);
    await expectNothingStored();
    const ok = await api.clone({
      url: `${serverUrl}/private.git`,
      auth: { username: 'alice', password: 'secret' },
    });
    expect(ok.refs.length).toBeGreaterThan(0);
  });

  it('credentials over plain http to another machine', async () => {
    const err = await cloneError({
      url: 'http://git.example/repo.git',
      auth: { username: 'a', password: 'b' },
    });
    expect(err.code).toBe('INVALID_URL');
    expect(err.message).toMatch(/unencrypted/);
  });

  it('a server that is not listening', async () => {
    const err = await cloneError({ url: 'http://127.0.0.1:9/x.git' });
    expect(err.code).toBe('NETWORK_ERROR');
    await expectNothingStored();
  });

  it('a web page instead of a git server', async () => {
    const relay = await startRelay(serverUrl, { kind: 'html' });
    try {
      const err = await cloneError({ url: `${relay.url}/basic.git` });
      expect(err.code).toBe('NOT_GIT');
      await expectNothingStored();
    } finally {
      await relay.close();
    }
  });

  it('an empty repository', async () => {
    const err = await cloneError({ url: `${serverUrl}/empty.git` });
    expect(err.code).toBe('EMPTY_REPOSITORY');
    expect(err.message).toMatch(/empty/);
    await expectNothingStored();
  });

  it('a branch the remote does not have', async () => {
    const err = await cloneError({ url: `${serverUrl}/basic.git`, ref: 'no-such-branch' });
    expect(err.code).toBe('REF_NOT_FOUND');
    await expectNothingStored();
  });

  it('a connection dropped in the middle of the pack', async () => {
    const relay = await startRelay(serverUrl, { kind: 'drop', afterBytes: 3000 });
    try {
      const err = await cloneError({ url: `${relay.url}/features.git` });
      expect(['NETWORK_ERROR', 'PACK_TRUNCATED', 'PKT_LINE_INVALID', 'PROTOCOL_UNEXPECTED']).toContain(
        err.code,
      );
      await expectNothingStored();
    } finally {
      await relay.close();
    }
  });

  it('a pack corrupted on the way', async () => {
    const relay = await startRelay(serverUrl, { kind: 'corrupt-pack' });
    try {
      const err = await cloneError({ url: `${relay.url}/features.git` });
      expect(['PACK_CHECKSUM_MISMATCH', 'PACK_CORRUPT', 'PACK_DELTA_INVALID']).toContain(err.code);
      await expectNothingStored();
    } finally {
      await relay.close();
    }
  });

  it('a clone cancelled while the pack arrives', async () => {
    const controller = new AbortController();
    let received = 0;
    const err = await cloneError({ url: `${serverUrl}/small-sized.git` }, controller.signal, (p) => {
      if (p.phase === 'receiving' && ++received === 1) controller.abort();
    });
    expect(received).toBeGreaterThan(0);
    expect(err.code).toBe('ABORTED');
    await expectNothingStored();
  });
});

describe('fallbacks and options', () => {
  it('a host that refuses direct requests is retried through the fallback CORS proxy, with a warning', async () => {
    // The "proxy" drops the /<host> segment and forwards to the real server, so the dead direct host
    // (as a browser sees a host without CORS headers) is reachable only through it.
    const upstream = new URL(serverUrl);
    const proxy = createServer((req, res) => {
      const path = (req.url ?? '/').replace(/^\/[^/]+/, '');
      const up = request(
        {
          host: upstream.hostname,
          port: upstream.port,
          method: req.method,
          path,
          headers: { ...req.headers, host: upstream.host },
        },
        (r) => {
          res.writeHead(r.statusCode ?? 502, r.headers);
          r.pipe(res);
        },
      );
      req.pipe(up);
    });
    await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
    const proxyUrl = `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`;
    try {
      const result = await api.clone({ url: 'http://127.0.0.1:9/basic.git', fallbackCorsProxy: proxyUrl });
      expect(result.warnings[0]).toMatch(/CORS proxy at http:\/\/127\.0\.0\.1/);
      expect(result.refs.length).toBeGreaterThan(0);
      expect((await api.listRepos())[0].corsProxy).toBe(proxyUrl);
      const err = await cloneError({ url: 'http://127.0.0.1:9/basic.git' });
      expect(err.code).toBe('NETWORK_ERROR');
    } finally {
      proxy.closeAllConnections();
      proxy.close();
    }
  });

  it('a server without protocol v2 gets a full v1 clone, with a warning', async () => {
    const url = `${serverUrl}/v0.git`;
    const result = await api.clone({ url });
    expect(result.protocol).toBe(1);
    expect(result.filter).toBeNull();
    expect(result.warnings.join(' ')).toMatch(/protocol v2/);
    expect(result.objects.blob).toBeGreaterThan(0);
    const lsRemote = (await gitCli(['ls-remote', '--heads', '--tags', url])).trim().split('\n').length;
    expect(
      result.refs.filter((r) => r.name !== 'HEAD').length + result.refs.filter((r) => r.peeled).length,
    ).toBe(lsRemote);
    const log = await api.log(result.repoId, 'HEAD', { limit: 100 });
    expect(log.commits.map((c) => c.oid).join('\n')).toBe(
      (
        await gitCli(['rev-list', `${result.head.oid}`], { cwd: join(inject('fixturesDir'), 'v0.git') })
      ).trim(),
    );
  });

  it('a v2 server without `filter` gets a full v2 clone, with a warning', async () => {
    const result = await api.clone({ url: `${serverUrl}/nofilter.git` });
    expect(result.protocol).toBe(2);
    expect(result.filter).toBeNull();
    expect(result.warnings.join(' ')).toMatch(/partial clone/);
    expect(result.objects.blob).toBeGreaterThan(0);
  });

  it('depth 1 makes a shallow clone that real git reads', async () => {
    const result = await api.clone({ url: `${serverUrl}/features.git`, depth: 1, singleBranch: true });
    const dir = join(tmp, 'shallow');
    await exportDir(openRepoFs(result.repoId), GITDIR, dir);
    expect((await gitCli(['rev-list', '--count', 'HEAD'], { cwd: dir })).trim()).toBe('1');
    await gitCli(['fsck', '--connectivity-only', '--no-progress'], { cwd: dir });
    const log = await api.log(result.repoId, 'HEAD');
    expect(log.commits).toHaveLength(1);
    expect(log.more).toBe(false);
  });

  it('a single-branch clone of a named branch asks for and keeps only that branch', async () => {
    const result = await api.clone({
      url: `${serverUrl}/features.git`,
      ref: 'dev',
      singleBranch: true,
      tags: false,
    });
    expect(result.head.branch).toBe('dev');
    expect(result.refs.map((r) => r.name).filter((n) => n !== 'HEAD')).toEqual(['refs/heads/dev']);
    const tree = await api.readTree(result.repoId, 'dev');
    expect(tree.entries.length).toBeGreaterThan(0);
  });

  it('lists and deletes repos', async () => {
    const result = await api.clone({ url: `${serverUrl}/basic.git` });
    const repos = await api.listRepos();
    expect(repos.map((r) => r.id)).toEqual([result.repoId]);
    expect(repos[0].sizeBytes).toBeGreaterThan(0);
    await api.deleteRepo(result.repoId);
    await expectNothingStored();
  });
});
