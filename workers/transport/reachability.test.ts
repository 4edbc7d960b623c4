import { createServer } from 'node:net';
import { describe, expect, it } from 'vitest';
import { TransportError } from './errors.ts';
import { diagnoseUnreachable } from './reachability.ts';

describe('diagnoseUnreachable', () => {
  it('says CORS_REFUSED when the probe is answered, having sent it without credentials and let go of its body', async () => {
    const asked: { url: string; init: RequestInit | undefined }[] = [];
    let cancelled = false;
    const controller = new AbortController();
    const answering = (async (input: RequestInfo | URL, init?: RequestInit) => {
      asked.push({ url: String(input), init });
      const body = new ReadableStream({
        cancel: () => {
          cancelled = true;
        },
      });
      return new Response(body, { status: 200 });
    }) as typeof fetch;
    const err = await diagnoseUnreachable(
      new URL('https://git.example:8443/team/repo.git'),
      'Failed to fetch',
      {
        fetch: answering,
        signal: controller.signal,
      },
    );
    expect(err).toBeInstanceOf(TransportError);
    expect(err).toMatchObject({ code: 'CORS_REFUSED', beforeResponse: true, status: undefined });
    expect(err.message).toBe(
      'git.example:8443 answered, but does not let other web pages read its answers (it sends no CORS headers), so a browser cannot clone from it directly.',
    );
    expect(asked).toEqual([
      {
        url: 'https://git.example:8443/team/repo.git/info/refs?service=git-upload-pack',
        init: { mode: 'no-cors', credentials: 'omit', signal: controller.signal },
      },
    ]);
    expect(cancelled).toBe(true);
  });

  it('says CORS_REFUSED for the opaque answer a browser gives a no-cors probe, which has no body', async () => {
    const opaque = (async () => new Response(null, { status: 200 })) as typeof fetch;
    const err = await diagnoseUnreachable(new URL('https://git.example/r.git'), 'Failed to fetch', {
      fetch: opaque,
    });
    expect(err.code).toBe('CORS_REFUSED');
  });

  it('says HOST_UNREACHABLE with the first failure when nothing answers the probe either', async () => {
    const failing = (async () => {
      throw new TypeError('fetch failed');
    }) as typeof fetch;
    const err = await diagnoseUnreachable(new URL('https://nowhere.example/r.git'), 'Failed to fetch', {
      fetch: failing,
    });
    expect(err).toMatchObject({ code: 'HOST_UNREACHABLE', beforeResponse: true, status: undefined });
    expect(err.message).toBe(
      'Could not reach nowhere.example: the host was not found, nothing answers there, or this page may not connect to it. (Failed to fetch)',
    );
  });

  it("probes with the platform's fetch when given none", async () => {
    // A port that was free a moment ago: nothing listens there, so the connection is refused.
    const server = createServer();
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as { port: number };
    await new Promise((resolve) => server.close(resolve));
    const err = await diagnoseUnreachable(new URL(`http://127.0.0.1:${port}/r.git`), 'ECONNREFUSED');
    expect(err.code).toBe('HOST_UNREACHABLE');
  });
});
