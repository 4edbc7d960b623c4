import { afterEach, describe, expect, inject, it } from 'vitest';
import { startCorsProxy } from '../server/proxy/nodeProxy.ts';
import type { Engine } from '../workers/engine/types.ts';
import { GitHttpClient } from '../workers/transport/gitHttp.ts';
import { testEngine } from './support/engine.ts';
import { git } from './support/git.ts';
import { type RedirectServer, startRedirectServer } from './support/redirectServer.ts';

const { engine, ctx } = testEngine();

const gitServer = inject('gitServerUrl');
const gitHost = new URL(gitServer).host;
const fixturesDir = inject('fixturesDir');
const alice = { username: 'alice', password: 'secret' };

const servers: { close(): Promise<void> }[] = [];
async function redirecting(...args: Parameters<typeof startRedirectServer>): Promise<RedirectServer> {
  const server = await startRedirectServer(...args);
  servers.push(server);
  return server;
}
afterEach(async () => {
  for (const s of servers.splice(0)) await s.close();
  for (const r of await engine.listRepos({ includeMinimal: true })) await engine.repo(r.id).delete();
});

async function cloneError(opts: Parameters<Engine['clone']>[0]) {
  try {
    await engine.clone(opts);
  } catch (err) {
    return err as Error & { code: string };
  }
  throw new Error('the clone succeeded');
}

describe('a repository that moved (30x on info/refs)', () => {
  it('is cloned from where info/refs landed, and only that first request is redirected', async () => {
    const moved = await redirecting([{ from: '/moved.git/', to: `${gitServer}/basic.git/` }]);
    const result = await engine.clone({ url: `${moved.url}/moved.git` });
    const head = (await git(['--git-dir', `${fixturesDir}/basic.git`, 'rev-parse', 'HEAD'])).trim();
    expect(result.head.oid).toBe(head);
    // The POSTs went to the new base: had they gone to the old one, they would have been redirected too.
    // The one POST here is the ls-refs sent with the GET (lsRefsAhead): its redirect is not followed.
    expect(moved.seen.map((r) => `${r.method} ${r.url}`).sort()).toEqual([
      'GET /moved.git/info/refs?service=git-upload-pack',
      'POST /moved.git/git-upload-pack',
    ]);
    expect(result.warnings.join('\n')).toContain(`redirected to ${gitServer}/basic.git`);
    // As git keeps remote.origin.url, the address given stays the repository's address.
    const [record] = await engine.listRepos();
    expect(record.url).toBe(`${moved.url}/moved.git`);
  });

  it('a later lazy fetch, which skips info/refs, is sent back to it and then follows the move', async () => {
    const moved = await redirecting([{ from: '/moved.git/', to: `${gitServer}/basic.git/` }]);
    const { repoId } = await engine.clone({ url: `${moved.url}/moved.git` });
    moved.seen.length = 0;
    const file = await engine.repo(repoId).readFile({ ref: 'HEAD', path: 'README.md' });
    const expected = await git(['--git-dir', `${fixturesDir}/basic.git`, 'show', 'HEAD:README.md']);
    expect(new TextDecoder().decode(file.bytes)).toBe(expected);
    expect(moved.seen.map((r) => `${r.method} ${r.url}`)).toEqual([
      'POST /moved.git/git-upload-pack',
      'GET /moved.git/info/refs?service=git-upload-pack',
    ]);
  });

  it('a POST redirected after info/refs was asked is refused, as git refuses it', async () => {
    // info/refs is served in place; only the POST is sent elsewhere.
    const odd = await redirecting(
      [{ from: '/basic.git/', to: `${gitServer}/basic.git/`, only: 'POST' }],
      gitServer,
    );
    const err = await cloneError({ url: `${odd.url}/basic.git` });
    expect(err.code).toBe('REDIRECT_REFUSED');
    expect(err.message).toMatch(/git-upload-pack request/);
  });

  it('a redirect to something that is not info/refs is refused with the address', async () => {
    const login = await redirecting([{ from: '/moved.git/', to: `${gitServer}/login?from=` }]);
    const err = await cloneError({ url: `${login.url}/moved.git` });
    expect(err.code).toBe('REDIRECT_REFUSED');
    expect(err.message).toContain(`${gitServer}/login`);
  });

  it('keeps the token on a move within the same host', async () => {
    const host = await redirecting([{ from: '/old/private.git/', to: '/private.git/' }], gitServer);
    const result = await engine.clone({ url: `${host.url}/old/private.git`, auth: alice });
    expect(result.refs.length).toBeGreaterThan(0);
    expect(host.seen.filter((r) => !r.authorization)).toEqual([]);
  });

  it('does not carry the token to another host', async () => {
    const elsewhere = await redirecting([]);
    const moved = await redirecting([{ from: '/private.git/', to: `${elsewhere.url}/private.git/` }]);
    const err = await cloneError({ url: `${moved.url}/private.git`, auth: alice });
    expect(err.code).toBe('REDIRECT_REFUSED');
    expect(err.message).toContain(elsewhere.host);
    expect(elsewhere.seen.filter((r) => r.authorization)).toEqual([]);
  });
});

describe("a moved repository's later fetches (RepoRecord.movedTo)", () => {
  const posts = (server: RedirectServer) => server.seen.map((r) => `${r.method} ${r.url}`);

  it('send the ls-refs that goes with the GET to where the repository moved on its host', async () => {
    const host = await redirecting([{ from: '/moved.git/', to: '/basic.git/' }], gitServer);
    const { repoId } = await engine.clone({ url: `${host.url}/moved.git` });
    const [record] = await engine.listRepos();
    expect(record.url).toBe(`${host.url}/moved.git`);
    host.seen.length = 0;
    await engine.repo(repoId).fetch();
    // Before: the ls-refs went to /moved.git/, was answered 301 and asked again at /basic.git/.
    expect(posts(host).sort()).toEqual([
      'GET /basic.git/info/refs?service=git-upload-pack',
      'GET /moved.git/info/refs?service=git-upload-pack',
      'POST /basic.git/git-upload-pack',
    ]);
  });

  it('never send it to another origin on the memory alone: only the GET redirect leads there', async () => {
    const moved = await redirecting([{ from: '/moved.git/', to: `${gitServer}/basic.git/` }]);
    const { repoId } = await engine.clone({ url: `${moved.url}/moved.git` });
    moved.seen.length = 0;
    await engine.repo(repoId).fetch();
    expect(posts(moved).sort()).toEqual([
      'GET /moved.git/info/refs?service=git-upload-pack',
      'POST /moved.git/git-upload-pack',
    ]);
  });

  it('use the answer only if the GET lands there again: a repository moved since is asked where it is', async () => {
    const rules = [{ from: '/moved.git/', to: '/basic.git/' }];
    const host = await redirecting(rules, gitServer);
    const { repoId } = await engine.clone({ url: `${host.url}/moved.git` });
    rules[0].to = '/tags.git/';
    host.seen.length = 0;
    const fetched = await engine.repo(repoId).fetch();
    // The ls-refs sent to /basic.git/ with the GET is thrown away; asked again where info/refs now lands.
    expect(posts(host).filter((p) => p.startsWith('POST /basic.git/'))).toHaveLength(1);
    expect(posts(host).filter((p) => p.startsWith('POST /tags.git/')).length).toBeGreaterThan(1);
    const tagsMain = (
      await git(['--git-dir', `${fixturesDir}/tags.git`, 'rev-parse', 'refs/heads/main'])
    ).trim();
    expect(fetched.updated.find((u) => u.name === 'refs/remotes/origin/main')?.new).toBe(tagsMain);
    host.seen.length = 0;
    await engine.repo(repoId).fetch();
    expect(posts(host).filter((p) => p.startsWith('POST /basic.git/'))).toEqual([]);
  });

  it('send a lazy blob fetch straight there: one request, where it was a 301, info/refs and the POST again', async () => {
    const host = await redirecting([{ from: '/moved.git/', to: '/basic.git/' }], gitServer);
    const { repoId } = await engine.clone({ url: `${host.url}/moved.git` });
    host.seen.length = 0;
    const file = await engine.repo(repoId).readFile({ ref: 'HEAD', path: 'README.md' });
    const expected = await git(['--git-dir', `${fixturesDir}/basic.git`, 'show', 'HEAD:README.md']);
    expect(new TextDecoder().decode(file.bytes)).toBe(expected);
    expect(posts(host)).toEqual(['POST /basic.git/git-upload-pack']);
  });

  it("send the widget's early ls-refs there too, once an earlier read of the same address learnt the move", async () => {
    const host = await redirecting([{ from: '/moved.git/', to: '/basic.git/' }], gitServer);
    const url = `${host.url}/moved.git`;
    await engine.readFileMinimal({ url, path: 'README.md' });
    host.seen.length = 0;
    const again = await engine.readFileMinimal({ url, path: 'README.md' });
    const expected = await git(['--git-dir', `${fixturesDir}/basic.git`, 'show', 'HEAD:README.md']);
    expect(new TextDecoder().decode(again.file?.bytes)).toBe(expected);
    // Before: the ls-refs went to /moved.git/, was answered 301 and asked again at /basic.git/.
    expect(posts(host).sort()).toEqual([
      'GET /basic.git/info/refs?service=git-upload-pack',
      'GET /moved.git/info/refs?service=git-upload-pack',
      'POST /basic.git/git-upload-pack',
    ]);
  });

  it('find a repository again from the address given when the remembered one no longer serves it', async () => {
    const host = await redirecting([{ from: '/moved.git/', to: '/basic.git/' }], gitServer);
    const { repoId } = await engine.clone({ url: `${host.url}/moved.git` });
    // As if it had moved on since: the remembered address answers 404 (nothing there on the git server).
    const record = await ctx.store.registry.get(repoId);
    if (!record) throw new Error('no record');
    await ctx.store.registry.put({ ...record, movedTo: `${host.url}/gone.git` });
    host.seen.length = 0;
    const file = await engine.repo(repoId).readFile({ ref: 'HEAD', path: 'README.md' });
    const expected = await git(['--git-dir', `${fixturesDir}/basic.git`, 'show', 'HEAD:README.md']);
    expect(new TextDecoder().decode(file.bytes)).toBe(expected);
    expect(posts(host)).toEqual([
      'POST /gone.git/git-upload-pack',
      'GET /moved.git/info/refs?service=git-upload-pack',
      'GET /basic.git/info/refs?service=git-upload-pack',
      'POST /basic.git/git-upload-pack',
    ]);
  });
});

describe('a token and a redirect, whatever the browser does with the header', () => {
  /** Every request as made: its URL, whether it carried the token, and how it asked redirects to be taken. */
  interface Made {
    url: string;
    authorization: boolean;
    redirect: RequestRedirect | undefined;
  }

  /**
   * fetch as an engine that keeps Authorization on every redirect (the Fetch standard drops it on another
   * origin only since 2022), or one that hides where a manual redirect points, as a browser does (an
   * opaque-redirect response): its Location is dropped here.
   */
  function engine(kind: 'keeps-header' | 'hides-location', made: Made[]): typeof fetch {
    const one = (url: string, init: RequestInit) => {
      made.push({
        url,
        authorization: new Headers(init.headers).has('Authorization'),
        redirect: init.redirect,
      });
      return fetch(url, { ...init, redirect: 'manual' });
    };
    return async (input, init = {}) => {
      let url = String(input);
      for (let hop = 0; hop < 20; hop++) {
        const res = await one(url, init);
        if (res.status < 300 || res.status >= 400) {
          // What a followed fetch says of itself: where it ended, and that it was redirected.
          Object.defineProperties(res, { url: { value: url }, redirected: { value: hop > 0 } });
          return res;
        }
        if (init.redirect === 'manual') {
          return kind === 'hides-location' ? new Response(null, { status: res.status }) : res;
        }
        url = new URL(res.headers.get('Location') ?? '', url).href;
      }
      throw new TypeError('too many redirects');
    };
  }

  it('is never sent to another origin: only manual redirects carry it, and none leads there', async () => {
    for (const kind of ['keeps-header', 'hides-location'] as const) {
      const elsewhere = await redirecting([], gitServer);
      const moved = await redirecting([{ from: '/private.git/', to: `${elsewhere.url}/private.git/` }]);
      const made: Made[] = [];
      const client = new GitHttpClient(`${moved.url}/private.git`, {
        auth: alice,
        fetch: engine(kind, made),
      });
      const err = await client.infoRefs('git-upload-pack').catch((e) => e);
      expect([kind, err.code]).toEqual([kind, 'REDIRECT_REFUSED']);
      expect(err.message).toContain(elsewhere.host);
      expect(elsewhere.seen.filter((r) => r.authorization)).toEqual([]);
      expect(made.filter((m) => m.authorization && m.redirect !== 'manual')).toEqual([]);
    }
  });

  it('follows a move on the same origin with the token, the browser showing where or not', async () => {
    for (const kind of ['keeps-header', 'hides-location'] as const) {
      const host = await redirecting([{ from: '/old/private.git/', to: '/private.git/' }], gitServer);
      const made: Made[] = [];
      const client = new GitHttpClient(`${host.url}/old/private.git`, {
        auth: alice,
        fetch: engine(kind, made),
      });
      expect((await client.infoRefs('git-upload-pack')).length).toBeGreaterThan(0);
      expect(client.redirectedTo?.href).toBe(`${host.url}/private.git`);
      // Where the browser hides the Location, one GET without the token, followed, found it.
      const probe = made.filter((m) => !m.authorization).map((m) => new URL(m.url).pathname);
      const expected =
        kind === 'hides-location' ? ['/old/private.git/info/refs', '/private.git/info/refs'] : [];
      expect([kind, probe]).toEqual([kind, expected]);
      expect(made.filter((m) => m.authorization && m.redirect !== 'manual')).toEqual([]);
    }
  });
});

describe('a repository the test git server moved (renamed.git → basic.git)', () => {
  it('answers 301 on every path with the same path under the new name', async () => {
    const res = await fetch(`${gitServer}/renamed.git/info/refs?service=git-upload-pack`, {
      redirect: 'manual',
    });
    expect(res.status).toBe(301);
    expect(res.headers.get('location')).toBe('/basic.git/info/refs?service=git-upload-pack');
    const post = await fetch(`${gitServer}/renamed.git/git-upload-pack`, {
      method: 'POST',
      redirect: 'manual',
    });
    expect(post.headers.get('location')).toBe('/basic.git/git-upload-pack');
  });

  it('is cloned, the POSTs going to the new name', async () => {
    const result = await engine.clone({ url: `${gitServer}/renamed.git` });
    expect(result.warnings.join('\n')).toContain(`redirected to ${gitServer}/basic.git`);
    // info/refs, ls-refs, fetch, and the ls-refs sent with the GET (lsRefsAhead), redirected and so unused.
    expect(result.requests).toBe(4);
  });
});

describe('a moved repository through the CORS proxy', () => {
  it('gets a Location rewritten to the proxy, and the clone follows it there', async () => {
    const moved = await redirecting([{ from: '/moved.git/', to: `${gitServer}/basic.git/` }]);
    const proxy = await startCorsProxy({ localHosts: [moved.host, gitHost] });
    servers.push(proxy);
    const res = await fetch(`${proxy.url}/${moved.host}/moved.git/info/refs?service=git-upload-pack`, {
      redirect: 'manual',
    });
    expect(res.status).toBe(301);
    expect(res.headers.get('location')).toBe(`/${gitHost}/basic.git/info/refs?service=git-upload-pack`);

    moved.seen.length = 0;
    const result = await engine.clone({ url: `${moved.url}/moved.git`, corsProxy: proxy.url });
    expect(result.refs.length).toBeGreaterThan(0);
    // The POST is the ls-refs sent with the GET (lsRefsAhead), whose redirect is not followed.
    expect(moved.seen.map((r) => r.method).sort()).toEqual(['GET', 'POST']);
  });

  it('refuses to carry a token to the host a redirect names', async () => {
    const elsewhere = await redirecting([]);
    const moved = await redirecting([{ from: '/private.git/', to: `${elsewhere.url}/private.git/` }]);
    const proxy = await startCorsProxy({ localHosts: [moved.host, elsewhere.host, gitHost] });
    servers.push(proxy);
    const err = await cloneError({
      url: `${moved.url}/private.git`,
      auth: { ...alice, proxy: proxy.url },
      corsProxy: proxy.url,
    });
    expect(err.code).toBe('PROXY_REFUSED');
    expect(err.message).toContain(`redirects to ${elsewhere.host}`);
    expect(elsewhere.seen).toEqual([]);
  });
});
