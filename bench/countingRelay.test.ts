import { execFile } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { repoStats, resetStats } from '../test/support/serverStats.ts';
import { type CountingRelay, startCountingRelay } from './countingRelay.ts';

/** An upstream that knows nothing of CORS: it answers with a body of the asked size and the headers it saw. */
async function startUpstream(): Promise<{ server: Server; url: string; seen: IncomingHttpHeaders[] }> {
  const seen: IncomingHttpHeaders[] = [];
  const server = createServer((req, res) => {
    seen.push(req.headers);
    const size = Number(new URL(req.url ?? '/', 'http://x').searchParams.get('size') ?? '0');
    req.resume();
    req.on('end', () => {
      res.writeHead(200, {
        'Content-Type': 'application/octet-stream',
        'Access-Control-Allow-Origin': 'evil',
      });
      // Several writes, so the relay sees more than one chunk.
      for (let sent = 0; sent < size; sent += 10_000)
        res.write(Buffer.alloc(Math.min(10_000, size - sent), 7));
      res.end();
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, seen };
}

describe('countingRelay', () => {
  let upstream: Awaited<ReturnType<typeof startUpstream>>;
  let relay: CountingRelay;

  beforeAll(async () => {
    upstream = await startUpstream();
    relay = await startCountingRelay({ upstream: upstream.url });
  });
  afterAll(async () => {
    await relay.close();
    await new Promise((r) => upstream.server.close(r));
  });

  it('counts response bytes, request bytes and requests per phase', async () => {
    relay.setPhase('a');
    const a = await fetch(`${relay.url}/r.git/info/refs?size=123456`);
    expect((await a.arrayBuffer()).byteLength).toBe(123_456);
    const post = await fetch(`${relay.url}/r.git/git-upload-pack?size=50`, {
      method: 'POST',
      body: 'x'.repeat(77),
    });
    await post.arrayBuffer();
    relay.setPhase('b');
    await (await fetch(`${relay.url}/r.git/info/refs?size=10`)).arrayBuffer();
    await relay.idle();
    expect(relay.stats('a')).toEqual({ requests: 2, preflights: 0, bytesSent: 123_506, bytesReceived: 77 });
    expect(relay.stats('b')).toEqual({ requests: 1, preflights: 0, bytesSent: 10, bytesReceived: 0 });
    expect(relay.stats('never')).toEqual({ requests: 0, preflights: 0, bytesSent: 0, bytesReceived: 0 });
  });

  it('passes Git-Protocol and the body headers upstream, with the upstream Host', async () => {
    upstream.seen.length = 0;
    await (
      await fetch(`${relay.url}/r.git/git-upload-pack`, {
        method: 'POST',
        headers: { 'Git-Protocol': 'version=2', 'Content-Type': 'application/x-git-upload-pack-request' },
        body: '0000',
      })
    ).arrayBuffer();
    expect(upstream.seen[0]['git-protocol']).toBe('version=2');
    expect(upstream.seen[0]['content-type']).toBe('application/x-git-upload-pack-request');
    expect(upstream.seen[0].host).toBe(new URL(upstream.url).host);
  });

  it('answers CORS preflights itself, counts them apart, and sets its own CORS headers on answers', async () => {
    relay.setPhase('cors');
    upstream.seen.length = 0;
    const pre = await fetch(`${relay.url}/r.git/git-upload-pack`, {
      method: 'OPTIONS',
      headers: {
        Origin: 'http://page.test',
        'Access-Control-Request-Method': 'POST',
        'Access-Control-Request-Headers': 'git-protocol, content-type',
      },
    });
    expect(pre.status).toBe(204);
    expect(pre.headers.get('access-control-allow-origin')).toBe('http://page.test');
    expect(pre.headers.get('access-control-allow-headers')).toBe('git-protocol, content-type');
    expect(pre.headers.get('access-control-allow-methods')).toContain('POST');
    expect(upstream.seen).toHaveLength(0);

    const res = await fetch(`${relay.url}/r.git/info/refs?size=5`, {
      headers: { Origin: 'http://page.test' },
    });
    await res.arrayBuffer();
    expect(res.headers.get('access-control-allow-origin')).toBe('http://page.test');
    await relay.idle();
    expect(relay.stats('cors')).toMatchObject({ requests: 1, preflights: 1, bytesSent: 5 });
  });

  it('maps upstream repository URLs onto itself and refuses other origins', () => {
    expect(relay.relayed(`${upstream.url}/group/some.git`)).toBe(`${relay.url}/group/some.git`);
    expect(() => relay.relayed('http://elsewhere.test/some.git')).toThrow(/not on/);
  });

  it('answers 502 with a reason when the upstream is down', async () => {
    const dead = await startCountingRelay({ upstream: 'http://127.0.0.1:1' });
    try {
      const res = await fetch(`${dead.url}/x.git/info/refs`);
      expect(res.status).toBe(502);
      expect(await res.text()).toContain('could not reach');
    } finally {
      await dead.close();
    }
  });

  it("counts what the git CLI's partial clone transfers, byte for byte as the git server counts it", async () => {
    const gitServerUrl = inject('gitServerUrl');
    const relayToGit = await startCountingRelay({ upstream: gitServerUrl });
    const dest = await mkdtemp(join(tmpdir(), 'blobless-relay-clone-'));
    try {
      await resetStats();
      relayToGit.setPhase('clone');
      await promisify(execFile)(
        'git',
        [
          '-c',
          'protocol.version=2',
          'clone',
          '--bare',
          '-q',
          '--filter=blob:none',
          relayToGit.relayed(`${gitServerUrl}/features.git`),
          join(dest, 'features.git'),
        ],
        {
          env: {
            ...process.env,
            GIT_CONFIG_NOSYSTEM: '1',
            GIT_CONFIG_GLOBAL: '/dev/null',
            GIT_TERMINAL_PROMPT: '0',
          },
        },
      );
      await relayToGit.idle();
      const ours = relayToGit.stats('clone');
      const server = await repoStats('features.git');
      // v2 partial clone: the capability advertisement, ls-refs, one fetch.
      expect(ours.requests).toBe(3);
      expect(server.bytesSent).toBeGreaterThan(10_000);
      expect({
        requests: ours.requests,
        bytesSent: ours.bytesSent,
        bytesReceived: ours.bytesReceived,
      }).toEqual({
        requests: server.requests,
        bytesSent: server.bytesSent,
        bytesReceived: server.bytesReceived,
      });
    } finally {
      await relayToGit.close();
      await rm(dest, { recursive: true, force: true });
    }
  });
});
