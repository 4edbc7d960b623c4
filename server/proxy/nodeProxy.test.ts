import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createEngine } from '../../workers/engine/engine.ts';
import { GitHttpClient } from '../../workers/transport/gitHttp.ts';
import {
  type CorsProxy,
  isPrivateAddress,
  parseTarget,
  redirectThroughProxy,
  startCorsProxy,
} from './nodeProxy.ts';
import { ipv6Bytes } from './privateAddress.ts';

const engine = createEngine();

const gitServer = inject('gitServerUrl');
const gitHost = gitServer.replace(/^http:\/\//, '');
const gitPort = Number(new URL(gitServer).port);
const infoRefs = (proxy: CorsProxy, host: string, repo = 'basic.git') =>
  `${proxy.url}/${host}/${repo}/info/refs?service=git-upload-pack`;

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
    ['100.64.0.1', true],
    ['0.0.0.0', true],
    ['255.255.255.255', true],
    ['::', true],
    ['::1', true],
    ['0:0:0:0:0:0:0:1', true],
    ['::7f00:1', true], // IPv4-compatible 127.0.0.1
    ['::127.0.0.1', true],
    ['::ffff:127.0.0.1', true],
    ['::ffff:7f00:1', true], // the same, as URL parsers spell it
    ['::ffff:0:7f00:1', true], // IPv4-translated
    ['::ffff:0:127.0.0.1', true],
    ['::ffff:a00:1', true], // mapped 10.0.0.1
    ['::ffff:c0a8:101', true], // mapped 192.168.1.1
    ['::ffff:a9fe:a9fe', true], // mapped 169.254.169.254
    ['fe80::1', true],
    ['fe80::1%eth0', true],
    ['febf:ffff::1', true], // the top of fe80::/10
    ['fec0::1', true],
    ['fc00::1', true],
    ['fd00::1', true],
    ['ff02::1', true],
    ['64:ff9b::7f00:1', true], // NAT64 of 127.0.0.1
    ['64:ff9b::10.0.0.1', true],
    ['64:ff9b:1::1', true], // local-use NAT64
    ['2002:7f00:1::1', true], // 6to4 of 127.0.0.1
    ['2002:c0a8:101::1', true], // 6to4 of 192.168.1.1
    ['2001::1', true], // Teredo
    ['2001:db8::1', true],
    ['100::1', true],
    ['not-an-ip', true],
    ['140.82.112.3', false],
    ['8.8.8.8', false],
    ['2606:4700::1111', false],
    ['2a00:1450:4001:81c::200e', false],
    ['::ffff:8c52:7003', false], // mapped 140.82.112.3
    ['64:ff9b::8c52:7003', false], // NAT64 of 140.82.112.3
    ['2002:8c52:7003::1', false], // 6to4 of 140.82.112.3
    ['fe7f::1', false], // just below fe80::/10
    ['2001:4860:4860::8888', false],
  ])('%s private: %s', (address, expected) => {
    expect(isPrivateAddress(address)).toBe(expected);
  });

  it('reads every spelling of an IPv6 address', () => {
    const hex = (a: string) => Buffer.from(ipv6Bytes(a) ?? []).toString('hex');
    expect(hex('::ffff:127.0.0.1')).toBe(hex('::ffff:7f00:1'));
    expect(hex('::1')).toBe('00000000000000000000000000000001');
    expect(hex('1::')).toBe('00010000000000000000000000000000');
    expect(hex('[fe80::1%lo]')).toBe('fe800000000000000000000000000001');
    for (const bad of ['1::2::3', '1:2:3:4:5:6:7:8:9', '12345::', '::1.2.3.256', 'g::1'])
      expect(ipv6Bytes(bad), bad).toBeNull();
  });

  it('rewrites a Location onto the proxy, relative to wherever it is served', () => {
    const from = 'https://github.com/o/r/info/refs?service=git-upload-pack';
    expect(
      redirectThroughProxy(from, 'https://github.com/o/r.git/info/refs?service=git-upload-pack'),
    ).toEqual({
      location: '/github.com/o/r.git/info/refs?service=git-upload-pack',
      host: 'github.com',
    });
    expect(redirectThroughProxy(from, '/x/r.git/info/refs?service=git-upload-pack')?.location).toBe(
      '/github.com/x/r.git/info/refs?service=git-upload-pack',
    );
    expect(redirectThroughProxy(from, 'https://gitlab.example:8443/r.git/')?.host).toBe(
      'gitlab.example:8443',
    );
    for (const bad of [undefined, 'javascript:alert(1)', 'ftp://h/r', 'https://u:p@h/r', 'http://[::1']) {
      expect(redirectThroughProxy(from, bad), String(bad)).toBeNull();
    }
  });
});

describe('the proxy in front of the local git server', () => {
  let open: CorsProxy;
  let closed: CorsProxy;
  beforeAll(async () => {
    open = await startCorsProxy({ allowPrivate: true, upstreamProtocol: 'http', allowedPorts: [gitPort] });
    closed = await startCorsProxy({ upstreamProtocol: 'http' });
  });
  afterAll(async () => {
    await open.close();
    await closed.close();
  });

  it('carries a whole blob:none clone', async () => {
    const result = await engine.clone({ url: `${gitServer}/features.git`, corsProxy: open.url });
    expect(result.protocol).toBe(2);
    expect(result.filter).toBe('blob:none');
    expect(result.refs.length).toBeGreaterThan(3);
    await engine.repo(result.repoId).delete();
  });

  it('answers preflights with the headers git needs', async () => {
    const res = await fetch(`${open.url}/${gitHost}/basic.git/git-upload-pack`, {
      method: 'OPTIONS',
      headers: { Origin: 'http://app.test', 'Access-Control-Request-Method': 'POST' },
    });
    expect(res.status).toBe(204);
    expect(res.headers.get('access-control-allow-origin')).toBe('http://app.test');
    expect(res.headers.get('access-control-allow-headers')).toMatch(/Git-Protocol/);
    // Cached by the browser: a second clone or a fetch from the same host within it waits for no preflight.
    expect(Number(res.headers.get('access-control-max-age'))).toBeGreaterThan(0);
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
    const err = await engine.clone({ url: `${gitServer}/basic.git`, corsProxy: closed.url }).then(
      () => ({ code: 'none', message: 'no error' }),
      (e: Error & { code: string }) => e,
    );
    expect(err.code).toBe('PROXY_REFUSED');
    expect(err.message).toMatch(/The CORS proxy refused the request: .*loopback or private/);
  });

  it('reaches a listed local host although it is loopback', async () => {
    const listed = await startCorsProxy({ localHosts: [gitHost] });
    try {
      const result = await engine.clone({ url: `${gitServer}/basic.git`, corsProxy: listed.url });
      expect(result.refs.length).toBeGreaterThan(0);
      await engine.repo(result.repoId).delete();
    } finally {
      await listed.close();
    }
  });

  it('passes credentials through to a git host on this machine', async () => {
    const listed = await startCorsProxy({ localHosts: [gitHost] });
    try {
      const res = await fetch(infoRefs(listed, gitHost, 'private.git'), {
        headers: { Authorization: `Basic ${btoa('alice:secret')}`, 'Git-Protocol': 'version=2' },
      });
      expect(res.status).toBe(200);
      expect(await res.text()).toMatch(/version 2/);
      const denied = await fetch(infoRefs(listed, gitHost, 'private.git'));
      expect(denied.status).toBe(401);
      expect(denied.headers.get('www-authenticate')).toMatch(/Basic/);
      expect(denied.headers.get('x-blobless-proxy-refusal')).toBeNull();
    } finally {
      await listed.close();
    }
  });
});

describe("the proxy's rules", () => {
  const proxies: CorsProxy[] = [];
  const start = async (opts: Parameters<typeof startCorsProxy>[0]) => {
    const proxy = await startCorsProxy(opts);
    proxies.push(proxy);
    return proxy;
  };
  afterAll(async () => {
    for (const p of proxies) await p.close();
  });

  it('refuses a request with no Origin when it serves listed origins only', async () => {
    const strict = await start({ localHosts: [gitHost], allowedOrigins: ['http://app.test'] });
    const bare = await fetch(infoRefs(strict, gitHost), { headers: { 'Git-Protocol': 'version=2' } });
    expect(bare.status).toBe(403);
    expect(await bare.text()).toMatch(/serves pages of http:\/\/app\.test only/);
    const fromApp = await fetch(infoRefs(strict, gitHost), {
      headers: { Origin: 'http://app.test', 'Git-Protocol': 'version=2' },
    });
    expect(fromApp.status).toBe(200);
    await fromApp.arrayBuffer();
    // Without --origin, anyone may: the local development default.
    const anyone = await start({ localHosts: [gitHost] });
    const res = await fetch(infoRefs(anyone, gitHost), { headers: { 'Git-Protocol': 'version=2' } });
    expect(res.status).toBe(200);
    await res.arrayBuffer();
  });

  it('reaches ports 443 and 80 only, plus the ones it is given', async () => {
    const defaults = await start({ allowPrivate: true, upstreamProtocol: 'http' });
    const refused = await fetch(infoRefs(defaults, gitHost), { headers: { 'Git-Protocol': 'version=2' } });
    expect(refused.status).toBe(403);
    expect(await refused.text()).toMatch(new RegExp(`ports 443, 80 only, not ${gitPort}.*--port-allow`));
    const listed = await start({ allowPrivate: true, upstreamProtocol: 'http', allowedPorts: [gitPort] });
    const ok = await fetch(infoRefs(listed, gitHost), { headers: { 'Git-Protocol': 'version=2' } });
    expect(ok.status).toBe(200);
    await ok.arrayBuffer();
  });

  it.each([
    ['[::1]'],
    ['[::7f00:1]'],
    ['[::ffff:7f00:1]'],
    ['[::ffff:0:7f00:1]'],
    ['[::ffff:127.0.0.1]'],
    ['[fe80::1]'],
    ['[fd12:3456::1]'],
    ['[::ffff:a9fe:a9fe]'],
    ['[64:ff9b::7f00:1]'],
    ['[2002:7f00:1::1]'],
    ['127.1'], // URL parsers read it as 127.0.0.1
    ['2130706433'],
    ['0x7f000001'],
    ['localhost'], // a name that resolves to loopback
  ])('refuses %s, in any spelling of loopback or private', async (host) => {
    // The git server's port is allowed, so only the address can be the reason.
    const proxy = await start({ upstreamProtocol: 'http', allowedPorts: [gitPort] });
    const res = await fetch(infoRefs(proxy, `${host}:${gitPort}`), {
      headers: { 'Git-Protocol': 'version=2' },
    });
    expect(res.status).toBe(403);
    expect(await res.text()).toMatch(/loopback or private/);
  });

  it('--http does not forward credentials to another machine', async () => {
    const plain = await start({ allowPrivate: true, upstreamProtocol: 'http', allowedPorts: [gitPort] });
    const res = await fetch(infoRefs(plain, gitHost, 'private.git'), {
      headers: { Authorization: `Basic ${btoa('alice:secret')}`, 'Git-Protocol': 'version=2' },
    });
    expect(res.status).toBe(403);
    expect(await res.text()).toMatch(/plain http .*does not forward credentials/);
    const err = await engine
      .clone({
        url: `${gitServer}/private.git`,
        corsProxy: plain.url,
        auth: { username: 'alice', password: 'secret', proxy: plain.url },
      })
      .then(
        () => ({ code: 'none', message: 'no error' }),
        (e: Error & { code: string }) => e,
      );
    expect(err.code).toBe('PROXY_REFUSED');
    expect(err.message).toMatch(/does not forward credentials/);
  });
});

describe('a token never crosses the network in plain http', () => {
  const auth = { username: 'alice', password: 'secret' };
  it.each([
    ['https://github.com/o/r.git', 'http://proxy.example', 'INSECURE_TRANSPORT'],
    ['https://github.com/o/r.git', 'http://10.0.0.5:8082', 'INSECURE_TRANSPORT'],
    ['http://git.example/r.git', 'https://proxy.example', 'INSECURE_TRANSPORT'],
    ['http://git.example/r.git', undefined, 'INSECURE_TRANSPORT'],
    ['https://github.com/o/r.git', 'ftp://proxy.example', 'INVALID_URL'],
    ['https://github.com/o/r.git', 'https://proxy.example', null],
    ['https://github.com/o/r.git', 'http://localhost:8082', null],
    ['https://github.com/o/r.git', 'http://127.0.0.1:8082', null],
    ['http://127.0.0.1:8081/r.git', undefined, null],
  ])('%s through %s: %s', (url, corsProxy, code) => {
    let error: { code?: string } | null = null;
    try {
      // The person agreed to this proxy: only the transport's own rules are left to say no.
      new GitHttpClient(url, { corsProxy, auth: { ...auth, proxy: corsProxy } });
    } catch (err) {
      error = err as { code?: string };
    }
    expect(error?.code ?? null).toBe(code);
    // Without a token, any of these is only a request.
    expect(
      () => new GitHttpClient(url, { corsProxy: code === 'INVALID_URL' ? undefined : corsProxy }),
    ).not.toThrow();
  });

  it('a token goes through a proxy only if the person agreed to that proxy, before any request', async () => {
    let requests = 0;
    const counting = (() => {
      requests++;
      return Promise.reject(new Error('no request expected'));
    }) as typeof fetch;
    const through = (proxy?: string) =>
      new GitHttpClient('https://github.com/o/r.git', {
        corsProxy: 'https://proxy.example',
        auth: { ...auth, proxy },
        fetch: counting,
      });
    for (const proxy of [undefined, 'https://other-proxy.example']) {
      expect(() => through(proxy)).toThrow(
        expect.objectContaining({
          code: 'PROXY_CONSENT_REQUIRED',
          message: expect.stringMatching(/through the CORS proxy at proxy\.example/),
        }),
      );
    }
    expect(() => through('https://proxy.example/')).not.toThrow();
    const err = await engine
      .clone({ url: 'https://github.com/o/r.git', corsProxy: 'https://proxy.example', auth })
      .then(
        () => ({ code: 'none', message: 'no error' }),
        (e: Error & { code: string }) => e,
      );
    expect(err.code).toBe('PROXY_CONSENT_REQUIRED');
    expect(requests).toBe(0);
  });

  it('the clone says so before any request', async () => {
    const err = await engine
      .clone({ url: 'https://github.com/o/r.git', corsProxy: 'http://proxy.example', auth })
      .then(
        () => ({ code: 'none', message: 'no error' }),
        (e: Error & { code: string }) => e,
      );
    expect(err.code).toBe('INSECURE_TRANSPORT');
    expect(err.message).toMatch(/proxy\.example is reached over plain http/);
  });
});
