import { join } from 'node:path';
import { afterEach, describe, expect, inject, it } from 'vitest';
import { startCorsProxy } from '../server/proxy/nodeProxy.ts';
import type { CloneProgress, Engine } from '../workers/engine/types.ts';
import { RETRY_ATTEMPTS } from '../workers/transport/retryPolicy.ts';
import { RemoteError } from '../workers/wire/errors.ts';
import { expectGitDirMatches, exportRepo, lsRemoteLines, refLines } from './support/cloneOracle.ts';
import { countConnections } from './support/connectionCounter.ts';
import { SHORT_RETRY, testEngine } from './support/engine.ts';
import { git as gitCli } from './support/git.ts';
import { startRelay } from './support/relay.ts';
import { serveScratchRepo } from './support/scratchServer.ts';
import { useTmpDir } from './support/tmpDir.ts';

// Retries as the default policy makes them (as many), without its backoff of seconds: the table of waits is
// test/retryPolicy.test.ts's.
const { engine, ctx } = testEngine({ retry: SHORT_RETRY });

const serverUrl = inject('gitServerUrl');
const fixturesDir = inject('fixturesDir');
const tmp = useTmpDir('errors');

/** After a failed clone nothing of it may remain: no registry entry, no repo database. */
async function expectNothingStored(): Promise<void> {
  expect(await engine.listRepos()).toEqual([]);
  const dbs = await indexedDB.databases();
  expect(dbs.map((d) => d.name).filter((n) => n?.startsWith('blobless-repo-'))).toEqual([]);
}

afterEach(async () => {
  for (const r of await engine.listRepos()) await engine.repo(r.id).delete();
});

async function cloneError(
  opts: Parameters<Engine['clone']>[0],
  signal?: AbortSignal,
  onProgress?: (p: CloneProgress) => void,
) {
  try {
    await engine.clone(opts, { onProgress, signal });
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
    const ok = await engine.clone({
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
    expect(err.code).toBe('INSECURE_TRANSPORT');
    expect(err.message).toMatch(/unencrypted/);
  });

  it('a server that is not listening is HOST_UNREACHABLE, said without naming a proxy', async () => {
    const err = await cloneError({
      url: 'http://127.0.0.1:9/x.git',
      fallbackCorsProxy: 'http://127.0.0.1:9',
    });
    expect(err.code).toBe('HOST_UNREACHABLE');
    expect(err.message).toContain('Could not reach 127.0.0.1:9');
    expect(err.message).not.toMatch(/proxy/i);
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

  it('a connection cut in the middle of the pack is NETWORK_ERROR', async () => {
    const relay = await startRelay(serverUrl, { kind: 'drop', afterBytes: 3000 });
    try {
      const err = await cloneError({ url: `${relay.url}/features.git` });
      expect(err.code).toBe('NETWORK_ERROR');
      await expectNothingStored();
    } finally {
      await relay.close();
    }
  });

  it('a bit flipped in the pack trailer is PACK_CHECKSUM_MISMATCH', async () => {
    const relay = await startRelay(serverUrl, { kind: 'corrupt-pack', where: 'trailer', seed: 1 });
    try {
      const err = await cloneError({ url: `${relay.url}/features.git` });
      expect(relay.flipped?.offset).toBeGreaterThanOrEqual((relay.flipped?.packLength ?? 0) - 20);
      expect(err.code).toBe('PACK_CHECKSUM_MISMATCH');
      await expectNothingStored();
    } finally {
      await relay.close();
    }
  });

  it.each([1, 2, 3])(
    'a bit flipped inside the objects (seed %i) is caught before anything is stored',
    async (seed) => {
      const relay = await startRelay(serverUrl, { kind: 'corrupt-pack', where: 'objects', seed });
      try {
        const err = await cloneError({ url: `${relay.url}/features.git` });
        // Which check sees it depends on what the bit was (zlib data, an object header, a delta), but it is
        // one of the object's own checks: the trailer, which would catch any flip, has its own test above,
        // and a flip caught only there would mean the object checks (Adler-32, sizes, delta bounds) let it by.
        expect(['PACK_CORRUPT', 'PACK_DELTA_INVALID'], err.message).toContain(err.code);
        await expectNothingStored();
      } finally {
        await relay.close();
      }
    },
  );

  it.each([
    {
      what: 'an HTML page',
      status: 200,
      type: 'text/html',
      code: 'HTTP_ERROR',
      says: /text\/html, not git data/,
    },
    {
      what: 'HTML, no Content-Type',
      status: 200,
      type: null,
      code: 'PKT_LINE_INVALID',
      says: /not git protocol/,
    },
    {
      what: 'HTTP 502',
      status: 502,
      type: 'text/plain',
      code: 'HTTP_ERROR',
      says: /failed on its side \(HTTP 502\)/,
    },
    {
      what: 'HTTP 500, git type',
      status: 500,
      type: 'application/x-git-upload-pack-result',
      code: 'HTTP_ERROR',
      says: /failed on its side \(HTTP 500\)/,
    },
  ] as const)(
    'a POST answered with $what is $code, and stores nothing',
    async ({ status, type, code, says }) => {
      const body = '<!doctype html><title>Sign in</title><p>Sign in to continue</p>';
      const relay = await startRelay(serverUrl, { kind: 'post-answer', status, contentType: type, body });
      try {
        const err = await cloneError({ url: `${relay.url}/features.git` });
        expect(err.code, err.message).toBe(code);
        expect(err.message).toMatch(says);
        await expectNothingStored();
      } finally {
        await relay.close();
      }
    },
  );

  it.each(['err-packet', 'sideband-3'] as const)(
    'a server failing with %s in the middle of the pack is a RemoteError with its text, and stores nothing',
    async (as) => {
      const text = 'upload-pack: out of memory';
      const relay = await startRelay(serverUrl, { kind: 'fail-mid-pack', as, text });
      try {
        const err = await cloneError({ url: `${relay.url}/features.git` });
        expect(err).toBeInstanceOf(RemoteError);
        expect(err.code).toBe('REMOTE_ERROR');
        expect((err as unknown as RemoteError).channel).toBe(as);
        expect((err as unknown as RemoteError).remoteMessage).toBe(text);
        await expectNothingStored();
      } finally {
        await relay.close();
      }
    },
  );

  it('a SHA-256 repository is UNSUPPORTED_OBJECT_FORMAT, before anything is stored', async () => {
    const server = await serveScratchRepo(join(tmp(), 'sha256'), ['--object-format=sha256'], async (run) => {
      await run(['commit', '-q', '--allow-empty', '-m', 'one']);
    });
    try {
      const err = await cloneError({ url: `${server.url}/repo.git` });
      expect(err.code).toBe('UNSUPPORTED_OBJECT_FORMAT');
      expect(err.message).toMatch(/sha256/);
      // info/refs, and the ls-refs sent with it (lsRefsAhead), whose answer is never read.
      expect(server.stats('repo.git').requests).toBe(2);
      await expectNothingStored();
    } finally {
      await server.close();
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

describe('the fallback CORS proxy (server/proxy/nodeProxy.ts, as `npm start` serves it)', () => {
  const PROXY_AGENT = 'git/blobless-cors-proxy';

  /** A git host that cuts every direct request, as a browser sees a host without CORS headers. */
  async function corsLessHost() {
    const host = await startRelay(serverUrl, { kind: 'only-for', userAgent: PROXY_AGENT });
    const proxy = await startCorsProxy({ upstreamProtocol: 'http', localHosts: [new URL(host.url).host] });
    const counted = await countConnections(proxy.port);
    return {
      host,
      proxy: counted,
      close: async () => {
        await counted.close();
        await proxy.close();
        await host.close();
      },
    };
  }

  it('a host that refuses direct requests is retried through it, with a warning', async () => {
    const { host, proxy, close } = await corsLessHost();
    try {
      const url = `${host.url}/basic.git`;
      const result = await engine.clone({ url, fallbackCorsProxy: proxy.url });
      expect(result.warnings[0]).toContain(`CORS proxy at ${proxy.url}`);
      expect(refLines(result.refs)).toEqual(await lsRemoteLines(`${serverUrl}/basic.git`));
      expect((await engine.listRepos())[0].corsProxy).toBe(proxy.url);
      expect(proxy.connections).toBeGreaterThan(0);
      // The proxy is tried at once: one direct request, not sent again first (a reset is retried only where
      // there is no fallback), with its speculative ls-refs (lsRefsAhead), then info/refs, ls-refs and
      // fetch through the proxy.
      expect(host.requests).toBe(5);
      // Without the fallback the host is diagnosed. Node's fetch has no CORS, so the relay's refusal (a
      // reset) is a host that does not answer; e2e/errors.spec.ts has a browser tell CORS apart.
      const err = await cloneError({ url });
      expect(err.code).toBe('HOST_UNREACHABLE');
    } finally {
      await close();
    }
  });

  it('a clone with a token never falls back: no request reaches the proxy', async () => {
    const { host, proxy, close } = await corsLessHost();
    try {
      const err = await cloneError({
        url: `${host.url}/private.git`,
        auth: { username: 'alice', password: 'secret' },
        fallbackCorsProxy: proxy.url,
      });
      expect(err.code).toBe('HOST_UNREACHABLE');
      // Without a fallback, a connection cut before any byte is sent again (retryPolicy.ts); then one
      // no-cors request asks whether anything answers there (transport/reachability.ts). The ls-refs sent
      // with the first GET (lsRefsAhead) is sent once, never again.
      expect(host.requests).toBe(RETRY_ATTEMPTS + 2);
      expect(proxy.connections).toBe(0);
      await expectNothingStored();
    } finally {
      await close();
    }
  });
});

describe('clone options, checked with the clone test oracle (ls-remote, rev-list --objects, fsck, .idx)', () => {
  it('a server without protocol v2 gets a full v1 clone, with a warning', async () => {
    const url = `${serverUrl}/v0.git`;
    const result = await engine.clone({ url });
    expect(result.protocol).toBe(1);
    expect(result.filter).toBeNull();
    expect(result.warnings.join(' ')).toMatch(/protocol v2/);
    expect(refLines(result.refs.filter((r) => r.name !== 'HEAD'))).toEqual(
      await lsRemoteLines(url, ['--heads', '--tags']),
    );
    await expectGitDirMatches({
      ctx,
      repoId: result.repoId,
      bare: join(fixturesDir, 'v0.git'),
      revList: ['--all'],
      scratch: tmp(),
    });
  });

  it('a v2 server without `filter` gets a full v2 clone, with a warning', async () => {
    const url = `${serverUrl}/nofilter.git`;
    const result = await engine.clone({ url });
    expect(result.protocol).toBe(2);
    expect(result.filter).toBeNull();
    expect(result.warnings.join(' ')).toMatch(/partial clone/);
    expect(refLines(result.refs)).toEqual(await lsRemoteLines(url));
    await expectGitDirMatches({
      ctx,
      repoId: result.repoId,
      bare: join(fixturesDir, 'nofilter.git'),
      revList: ['--all'],
      scratch: tmp(),
    });
  });

  it('a full clone chosen by the person (filter: null) holds every object, and no promisor marks', async () => {
    const url = `${serverUrl}/features.git`;
    const result = await engine.clone({ url, filter: null });
    expect(result.filter).toBeNull();
    expect(result.warnings).toEqual([]);
    expect(refLines(result.refs)).toEqual(await lsRemoteLines(url));
    const dir = await expectGitDirMatches({
      ctx,
      repoId: result.repoId,
      bare: join(fixturesDir, 'features.git'),
      revList: ['--all'],
      scratch: tmp(),
    });
    await expect(gitCli(['config', 'remote.origin.promisor'], { cwd: dir })).rejects.toThrow();
    expect((await engine.listRepos())[0].filter).toBeNull();
  });

  it('depth 1 makes a shallow clone that real git reads', async () => {
    const result = await engine.clone({ url: `${serverUrl}/features.git`, depth: 1, singleBranch: true });
    const dir = await exportRepo(ctx, result.repoId, tmp(), 'shallow');
    expect((await gitCli(['rev-list', '--count', 'HEAD'], { cwd: dir })).trim()).toBe('1');
    await gitCli(['fsck', '--connectivity-only', '--no-progress'], { cwd: dir });
    const log = await engine.repo(result.repoId).log({ ref: 'HEAD' });
    expect(log.commits).toHaveLength(1);
    expect(log.more).toBe(false);
  });

  it("depth against a server without `shallow` clones its branch's whole history, with a warning", async () => {
    const relay = await startRelay(serverUrl, { kind: 'hide-fetch-capability', capability: 'shallow' });
    try {
      const result = await engine.clone({ url: `${relay.url}/features.git`, depth: 1 });
      expect(result.warnings.join(' ')).toMatch(/shallow/);
      const bare = join(fixturesDir, 'features.git');
      await expectGitDirMatches({
        ctx,
        repoId: result.repoId,
        bare,
        // Depth makes the clone single-branch, as git's: main's history and the tags on it (all four are).
        revList: ['--filter=blob:none', 'refs/heads/main', '--tags'],
        scratch: tmp(),
      });
      const log = await engine.repo(result.repoId).log({ ref: 'HEAD', limit: 1000 });
      expect(log.commits.length).toBe(
        Number((await gitCli(['rev-list', '--count', 'HEAD'], { cwd: bare })).trim()),
      );
    } finally {
      await relay.close();
    }
  });

  it('a single-branch clone of a named branch keeps only that branch and its objects', async () => {
    const url = `${serverUrl}/features.git`;
    const result = await engine.clone({ url, ref: 'dev', singleBranch: true, tags: false });
    expect(result.head.branch).toBe('dev');
    expect(refLines(result.refs)).toEqual(await lsRemoteLines(url, ['--heads'], ['dev']));
    await expectGitDirMatches({
      ctx,
      repoId: result.repoId,
      bare: join(fixturesDir, 'features.git'),
      revList: ['--filter=blob:none', 'refs/heads/dev'],
      scratch: tmp(),
    });
  });

  it('a clone at a tag detaches HEAD at the commit it names, as git clone --branch does', async () => {
    const url = `${serverUrl}/features.git`;
    const bare = join(fixturesDir, 'features.git');
    const result = await engine.clone({ url, ref: 'v0.1-approved' });
    const commit = (await gitCli(['rev-parse', 'v0.1-approved^{commit}'], { cwd: bare })).trim();
    expect(result.head).toEqual({ branch: null, oid: commit });
    const dir = await exportRepo(ctx, result.repoId, tmp(), 'at-tag');
    expect((await gitCli(['rev-parse', 'HEAD'], { cwd: dir })).trim()).toBe(commit);
    await expect(gitCli(['symbolic-ref', '-q', 'HEAD'], { cwd: dir })).rejects.toThrow();
    expect((await engine.repo(result.repoId).log({ ref: 'HEAD', limit: 1 })).commits[0].oid).toBe(commit);
  });

  it('a clone at a commit id detaches HEAD there', async () => {
    const url = `${serverUrl}/features.git`;
    const bare = join(fixturesDir, 'features.git');
    // A commit no ref names directly: two behind dev.
    const commit = (await gitCli(['rev-parse', 'dev~2'], { cwd: bare })).trim();
    const result = await engine.clone({ url, ref: commit });
    expect(result.head).toEqual({ branch: null, oid: commit });
    const dir = await exportRepo(ctx, result.repoId, tmp(), 'at-commit');
    expect((await gitCli(['rev-parse', 'HEAD'], { cwd: dir })).trim()).toBe(commit);
    await expect(gitCli(['symbolic-ref', '-q', 'HEAD'], { cwd: dir })).rejects.toThrow();
    await gitCli(['fsck', '--connectivity-only', '--no-progress'], { cwd: dir });
  });

  it('a remote HEAD that names no branch: HEAD as git clone leaves it', async () => {
    const server = await serveScratchRepo(join(tmp(), 'detached'), [], async (run) => {
      await run(['commit', '-q', '--allow-empty', '-m', 'one']);
      await run(['commit', '-q', '--allow-empty', '-m', 'two']);
      await run(['branch', 'other', 'HEAD~1']);
    });
    try {
      // Detach the served HEAD at a commit no branch points at.
      const loose = (await gitCli(['rev-parse', 'main'], { cwd: server.bare })).trim();
      await gitCli(['commit-tree', '-m', 'three', '-p', loose, `${loose}^{tree}`], { cwd: server.bare }).then(
        (oid) => gitCli(['update-ref', '--no-deref', 'HEAD', oid.trim()], { cwd: server.bare }),
      );
      const url = `${server.url}/repo.git`;
      const oracle = join(tmp(), 'detached-oracle');
      await gitCli(['clone', '-q', '--bare', '--filter=blob:none', url, oracle]);
      const result = await engine.clone({ url });
      const dir = await exportRepo(ctx, result.repoId, tmp(), 'detached');
      expect((await gitCli(['rev-parse', 'HEAD'], { cwd: dir })).trim()).toBe(
        (await gitCli(['rev-parse', 'HEAD'], { cwd: oracle })).trim(),
      );
      const symbolic = (d: string) =>
        gitCli(['symbolic-ref', '-q', 'HEAD'], { cwd: d }).catch(() => 'detached');
      expect(await symbolic(dir)).toBe(await symbolic(oracle));
    } finally {
      await server.close();
    }
  });

  it('lists and deletes repos', async () => {
    const result = await engine.clone({ url: `${serverUrl}/basic.git` });
    const repos = await engine.listRepos();
    expect(repos.map((r) => r.id)).toEqual([result.repoId]);
    expect(repos[0].sizeBytes).toBeGreaterThan(0);
    await engine.repo(result.repoId).delete();
    await expectNothingStored();
  });
});
