import { describe, expect, it } from 'vitest';
import { whileOffline } from '../../test/support/offline.ts';
import { TransportError } from './errors.ts';
import { GitHttpClient } from './gitHttp.ts';

/** A fetch that records what it was asked and answers an empty v2 advertisement. */
function recordingFetch(): { fetch: typeof fetch; urls: string[] } {
  const urls: string[] = [];
  const fake = (async (input: RequestInfo | URL) => {
    urls.push(String(input));
    return new Response(new Uint8Array(0), { status: 200 });
  }) as typeof fetch;
  return { fetch: fake, urls };
}

describe('GitHttpClient offline', () => {
  it('says OFFLINE before sending anything when navigator.onLine is false', async () => {
    const rec = recordingFetch();
    const client = new GitHttpClient('https://git.example/repo.git', { fetch: rec.fetch });
    const err = await whileOffline(() => client.infoRefs('git-upload-pack').catch((e: unknown) => e));
    expect(err).toBeInstanceOf(TransportError);
    expect((err as TransportError).code).toBe('OFFLINE');
    expect((err as TransportError).message).toMatch(/offline, so git\.example was not contacted/);
    const post = await whileOffline(() =>
      client.post('git-upload-pack', new Uint8Array([48, 48, 48, 48])).catch((e: unknown) => e),
    );
    expect((post as TransportError).code).toBe('OFFLINE');
    expect(rec.urls).toEqual([]);
    expect(client.requests).toBe(0);
  });

  it('sends the request once the device is online again', async () => {
    const rec = recordingFetch();
    const client = new GitHttpClient('https://git.example/repo.git', { fetch: rec.fetch });
    await whileOffline(() => client.infoRefs('git-upload-pack').catch(() => undefined));
    await client.infoRefs('git-upload-pack');
    expect(rec.urls).toEqual(['https://git.example/repo.git/info/refs?service=git-upload-pack']);
  });
});
