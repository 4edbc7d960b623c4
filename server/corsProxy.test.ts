import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { api } from '../workers/api.ts';
import { type CorsProxy, isPrivateAddress, parseTarget, startCorsProxy } from './corsProxy.ts';

const gitServer = inject('gitServerUrl');
const gitHost = gitServer.replace(/^http:\/\//, '');

describe('which requests the proxy forwards', () => {
  it.each([
    ['GET', '/github.com/o/r.git/info/refs?service=git-upload-pack', true],
    ['GET', '/github.com/o/r.git/info/refs?service=git-receive-pack', true],
    ['POST', '/github.com/o/r.git/git-upload-pack', true],
    ['POST', '/github.com/o/r.git/git-receive-pack', true],
    ['GET', '/github.com/o/r.git/info/refs?service=git-upload-pack&x=1', false],
    ['GET', '/github.com/o/r.git/info/refs', false],
    ['GET', '/github.com/o/r.git/HEAD', false],
    ['GET', '/github.com/login', false],
    ['POST', '/github.com/o/r.git/info/refs', false],
    ['POST', '/github.com/git-upload-pack', false],
    ['POST', '/github.com/o/r.git/git-upload-pack?x=1', false],
    ['PUT', '/github.com/o/r.git/git-upload-pack', false],
  ])('%s %s → %s', (method, url, ok) => {
    expect(parseTarget(method, url) !== null).toBe(ok);
  });

  it.each([
    ['127.0.0.1', true],
    ['10.1.2.3', true],
    ['172.20.0.1', true],
    ['192.168.1.1', true],
    ['169.254.169.254', true],
    ['::1', true],
    ['::ffff:127.0.0.1', true],
    ['fd00::1', true],
    ['140.82.112.3', false],
    ['2606:4700::1111', false],
  ])('%s private: %s', (address, expected) => {
    expect(isPrivateAddress(address)).toBe(expected);
  });
});

describe('the proxy in front of the local git server', () => {
  let open: CorsProxy;
  let closed: CorsProxy;
  beforeAll(async () => {
    open = await startCorsProxy({ allowPrivate: true, upstreamProtocol: 'http' });
    closed = await startCorsProxy({ upstreamProtocol: 'http' });
  });
  afterAll(async () => {
    await open.close();
    await closed.close();
  });

  it('carries a whole blob:none clone', async () => {
    const result = await api.clone({ url: `${gitServer}/features.git`, corsProxy: open.url });
    expect(result.protocol).toBe(2);
    expect(result.filter).toBe('blob:none');
    expect(result.refs.length).toBeGreaterThan(3);
    await api.deleteRepo(result.repoId);
  });

  it('answers preflights with the headers git needs', async () => {
    const res = await fetch(`${open.url}/${gitHost}/basic.git/git-upload-pack`, {
      method: 'OPTIONS',
      headers: { Origin: 'http://app.test', 'Access-Control-Request-Method': 'POST' },
    });
    expect(res.status).toBe(204);
    expect(res.headers.get('access-control-allow-origin')).toBe('http://app.test');
    expect(res.headers.get('access-control-allow-headers')).toMatch(/Git-Protocol/);
  });

  it('serves only the allowed origins when told', async () => {
    const strict = await startCorsProxy({ localHosts: [gitHost], allowedOrigins: ['http://app.test'] });
    try {
      const target = `${strict.url}/${gitHost}/basic.git/info/refs?service=git-upload-pack`;
      const ok = await fetch(target, { headers: { Origin: 'http://app.test', 'Git-Protocol': 'version=2' } });
      expect(ok.status).toBe(200);
      await ok.arrayBuffer();
      const other = await fetch(target, { headers: { Origin: 'http://evil.test' } });
      expect(other.status).toBe(403);
    } finally {
      await strict.close();
    }
  });

  it('refuses a host segment with credentials in it', () => {
    expect(parseTarget('GET', '/user:pw@github.com/o/r.git/info/refs?service=git-upload-pack')).toBeNull();
  });

  it('refuses any other path with 403', async () => {
    const res = await fetch(`${open.url}/${gitHost}/_blobless/stats`);
    expect(res.status).toBe(403);
    expect(await res.text()).toMatch(/git smart-HTTP requests only/);
  });

  it('refuses loopback targets unless allowed', async () => {
    const res = await fetch(`${closed.url}/${gitHost}/basic.git/info/refs?service=git-upload-pack`, {
      headers: { 'Git-Protocol': 'version=2' },
    });
    expect(res.status).toBe(403);
    expect(await res.text()).toMatch(/loopback or private/);
    const err = await api.clone({ url: `${gitServer}/basic.git`, corsProxy: closed.url }).catch((e) => e);
    expect(err.code).toBe('HTTP_FORBIDDEN');
  });

  it('reaches a listed local host although it is loopback', async () => {
    const listed = await startCorsProxy({ localHosts: [gitHost] });
    try {
      const result = await api.clone({ url: `${gitServer}/basic.git`, corsProxy: listed.url });
      expect(result.refs.length).toBeGreaterThan(0);
      await api.deleteRepo(result.repoId);
    } finally {
      await listed.close();
    }
  });

  it('passes credentials through to the git host', async () => {
    const res = await fetch(`${open.url}/${gitHost}/private.git/info/refs?service=git-upload-pack`, {
      headers: { Authorization: `Basic ${btoa('alice:secret')}`, 'Git-Protocol': 'version=2' },
    });
    expect(res.status).toBe(200);
    expect(await res.text()).toMatch(/version 2/);
    const denied = await fetch(`${open.url}/${gitHost}/private.git/info/refs?service=git-upload-pack`);
    expect(denied.status).toBe(401);
    expect(denied.headers.get('www-authenticate')).toMatch(/Basic/);
  });
});
