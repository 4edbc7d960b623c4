import { describe, expect, inject, it } from 'vitest';
import { startCorsProxy } from '../server/proxy/nodeProxy.ts';
import { GitHttpClient } from '../workers/transport/gitHttp.ts';
import { testEngine } from './support/engine.ts';
import { failure } from './support/repoChecks.ts';
import { linkedEngine } from './support/workerBoundary.ts';

const { engine, ctx } = testEngine();

const url = `${inject('gitServerUrl')}/private.git`;
const auth = { username: 'alice', password: 'secret' };
/** The token kept in the repo's record, which stays in the worker. */
const storedAuth = async (repoId: string) => (await ctx.store.registry.get(repoId))?.auth;

describe('credentials of a private repo', () => {
  it('serve the lazy fetches of the session without being stored', async () => {
    const { repoId } = await engine.clone({ url, auth });
    expect(await storedAuth(repoId)).toBeUndefined();
    const checkout = await engine.repo(repoId).checkout({ ref: 'HEAD' });
    expect(checkout.blobsFetched).toBeGreaterThan(0);

    // A new session (the worker restarted) has no credentials: fetching a missing blob asks for them.
    ctx.store.credentials.forget(repoId);
    const older = (await engine.repo(repoId).log({ ref: 'HEAD', limit: 10 })).commits.at(-1)!.oid;
    const diff = await engine.repo(repoId).diffCommits({ from: older, to: 'HEAD' });
    const changed = diff.files.find((f) => f.oldOid)!;
    const err = await engine
      .repo(repoId)
      .diffFile({ oldOid: changed.oldOid ?? null, newOid: changed.newOid ?? null })
      .catch((e) => e);
    expect(err.code).toBe('AUTH_REQUIRED');
    expect(err.message).toMatch(/needs a token/);
  });

  it('are kept in the repo record when asked, and used after a restart', async () => {
    const { repoId } = await engine.clone({ url, auth, rememberCredentials: true });
    expect(await storedAuth(repoId)).toEqual(auth);
    ctx.store.credentials.forget(repoId);
    const checkout = await engine.repo(repoId).checkout({ ref: 'HEAD' });
    expect(checkout.blobsFetched).toBeGreaterThan(0);
  });

  it('are asked for again after a reload, with a typed error, and then the operation goes on', async () => {
    const { repoId } = await engine.clone({ url, auth });
    ctx.store.credentials.forget(repoId);
    const older = (await engine.repo(repoId).log({ ref: 'HEAD', limit: 10 })).commits.at(-1)!.oid;
    const asked = await failure(engine.repo(repoId).readFile({ ref: older, path: 'src/greet.js' }));
    expect(asked.code).toBe('AUTH_REQUIRED');
    expect(asked).toMatchObject({ repoId, host: new URL(url).host, rejected: false });

    // A wrong token is refused as such.
    await engine.repo(repoId).setCredentials({ auth: { username: 'alice', password: 'wrong' } });
    expect(await failure(engine.repo(repoId).readFile({ ref: older, path: 'src/greet.js' }))).toMatchObject({
      code: 'AUTH_REQUIRED',
      rejected: true,
    });

    await engine.repo(repoId).setCredentials({ auth });
    const file = await engine.repo(repoId).readFile({ ref: older, path: 'src/greet.js' });
    expect(new TextDecoder().decode(file.bytes)).toContain('Hello');
    // Given for the session only: not in storage.
    expect(await storedAuth(repoId)).toBeUndefined();
    // Fetch and checkout go through the same door.
    ctx.store.credentials.forget(repoId);
    expect((await failure(engine.repo(repoId).fetch())).code).toBe('AUTH_REQUIRED');
    expect((await failure(engine.repo(repoId).checkout({ ref: 'HEAD' }))).code).toBe('AUTH_REQUIRED');
    await engine.repo(repoId).setCredentials({ auth, remember: true });
    expect(await storedAuth(repoId)).toEqual(auth);
    ctx.store.credentials.forget(repoId);
    expect((await engine.repo(repoId).fetch()).updated).toEqual([]);
    // Asked to forget it again: the stored pair goes.
    await engine.repo(repoId).setCredentials({ auth, remember: false });
    expect(await storedAuth(repoId)).toBeUndefined();
  });

  it('listRepos tells the page whether a token is kept, never the token', async () => {
    const { client } = linkedEngine(engine);
    const kept = await engine.clone({ url, auth, rememberCredentials: true });
    const session = await engine.clone({ url, auth });
    const { repoId: open } = await engine.clone({ url: `${inject('gitServerUrl')}/basic.git` });
    expect(await storedAuth(kept.repoId)).toEqual(auth);
    // What crossed the worker boundary, as the page receives it.
    const repos = await client.listRepos();
    const crossed = JSON.stringify(repos);
    expect(crossed).not.toContain(auth.password);
    expect(crossed).not.toContain('"auth"');
    const summary = (id: string) => {
      const r = repos.find((x) => x.id === id);
      return { hasRememberedToken: r?.hasRememberedToken, needsToken: r?.needsToken };
    };
    expect(summary(kept.repoId)).toEqual({ hasRememberedToken: true, needsToken: true });
    expect(summary(session.repoId)).toEqual({ hasRememberedToken: false, needsToken: true });
    expect(summary(open)).toEqual({ hasRememberedToken: false, needsToken: false });
  });

  it('are never sent in clear text to another machine, directly or through a proxy', () => {
    const token = { username: 'a', password: 'b' };
    expect(() => new GitHttpClient('http://git.example.com/r.git', { auth: token })).toThrow(/plain http/);
    expect(
      () =>
        new GitHttpClient('https://git.example.com/r.git', {
          auth: token,
          corsProxy: 'http://proxy.example.com',
        }),
    ).toThrow(/plain http/);
    // Without a token, or to this machine, plain http is fine.
    expect(
      () => new GitHttpClient('https://git.example.com/r.git', { corsProxy: 'http://proxy.example.com' }),
    ).not.toThrow();
    expect(
      () =>
        new GitHttpClient('http://127.0.0.1:9/r.git', {
          auth: { ...token, proxy: 'http://localhost:8' },
          corsProxy: 'http://localhost:8',
        }),
    ).not.toThrow();
  });
});

describe('a token for a repository reached through a CORS proxy', () => {
  it('is refused until the person agrees to that proxy, and the record then names it', async () => {
    const proxy = await startCorsProxy({ localHosts: [new URL(url).host], rateLimit: false });
    try {
      const { repoId } = await engine.clone({
        url,
        corsProxy: proxy.url,
        auth: { ...auth, proxy: proxy.url },
      });
      const record = async () => (await engine.listRepos()).find((r) => r.id === repoId)!;
      expect((await record()).tokenProxy).toBe(proxy.url);
      ctx.store.credentials.forget(repoId);
      const older = (await engine.repo(repoId).log({ ref: 'HEAD', limit: 10 })).commits.at(-1)!.oid;
      // Asked for with the proxy named, so the dialog can show it.
      const asked = await failure(engine.repo(repoId).readFile({ ref: older, path: 'src/greet.js' }));
      expect(asked).toMatchObject({ code: 'AUTH_REQUIRED', rejected: false, proxy: proxy.url });
      // A token without the agreement, or agreeing to another proxy, is refused and not kept.
      for (const given of [auth, { ...auth, proxy: 'https://other.example' }]) {
        expect((await failure(engine.repo(repoId).setCredentials({ auth: given }))).code).toBe(
          'PROXY_CONSENT_REQUIRED',
        );
        expect((await failure(engine.repo(repoId).readFile({ ref: older, path: 'src/greet.js' }))).code).toBe(
          'AUTH_REQUIRED',
        );
      }
      await engine.repo(repoId).setCredentials({ auth: { ...auth, proxy: proxy.url } });
      const file = await engine.repo(repoId).readFile({ ref: older, path: 'src/greet.js' });
      expect(new TextDecoder().decode(file.bytes)).toContain('Hello');
      expect((await record()).tokenProxy).toBe(proxy.url);
      await engine.repo(repoId).delete();
    } finally {
      await proxy.close();
    }
  });
});
