// The client against a scripted fetch: each rule of gitHttp.ts that needs no real server (URLs, tokens,
// statuses, redirects, content types, stalls), so a mutant of it costs no clone. The same rules against
// git http-backend are in test/redirect.test.ts, test/credentials.test.ts and test/cloneErrors.test.ts.
import { describe, expect, it, vi } from 'vitest';
import { whileOffline } from '../../test/support/offline.ts';
import { TransportError } from './errors.ts';
import {
  GitHttpClient,
  type GitHttpOptions,
  isOffline,
  isRedirect,
  parseRepoUrl,
  repoName,
} from './gitHttp.ts';

interface Asked {
  url: string;
  method: string;
  headers: Headers;
  redirect: RequestRedirect | undefined;
  credentials: RequestCredentials | undefined;
}

/** A response as fetch gives it after following redirects (`redirected`, `url`), which Response cannot be made. */
function landed(res: Response, url: string): Response {
  Object.defineProperty(res, 'redirected', { value: true });
  Object.defineProperty(res, 'url', { value: url });
  return res;
}

/** A fetch that answers each request with the next of `answers` and records what it was asked. */
function scripted(...answers: ((url: string) => Response | Promise<Response>)[]) {
  const asked: Asked[] = [];
  const fetch = (async (input: RequestInfo | URL, init?: RequestInit) => {
    const url = String(input);
    asked.push({
      url,
      method: init?.method ?? 'GET',
      headers: new Headers(init?.headers),
      redirect: init?.redirect,
      credentials: init?.credentials,
    });
    const answer = answers.shift();
    if (!answer) throw new Error(`unexpected request ${url}`);
    return answer(url);
  }) as typeof globalThis.fetch;
  return { fetch, asked };
}

// Bytes: a string body would get a text/plain type.
const ok =
  (body = 'data', type?: string) =>
  () =>
    new Response(new TextEncoder().encode(body), {
      status: 200,
      headers: type ? { 'Content-Type': type } : {},
    });
const status =
  (code: number, headers: Record<string, string> = {}) =>
  () =>
    new Response('refused', { status: code, headers });
const once: GitHttpOptions['retry'] = { attempts: 1 };
const auth = { username: 'u', password: 'secret' };
const result = 'application/x-git-upload-pack-result';

async function failure(p: Promise<unknown>): Promise<TransportError> {
  const err = await p.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(TransportError);
  return err as TransportError;
}

async function text(body: AsyncIterable<Uint8Array>): Promise<string> {
  let out = '';
  for await (const chunk of body) out += new TextDecoder().decode(chunk);
  return out;
}

describe('parseRepoUrl and repoName', () => {
  it('keeps the address without search, hash and trailing slashes', () => {
    expect(parseRepoUrl('  https://git.example/team/repo.git//?x=1#top ').href).toBe(
      'https://git.example/team/repo.git',
    );
    expect(parseRepoUrl('http://git.example/').href).toBe('http://git.example/');
    // Pasted with no-break spaces, which the URL parser does not strip itself.
    expect(parseRepoUrl('\u00a0https://git.example/r.git\u00a0').href).toBe('https://git.example/r.git');
  });

  it('refuses what is not an http(s) address without credentials, saying why', () => {
    const refused = (url: string) => {
      try {
        parseRepoUrl(url);
      } catch (err) {
        return err as TransportError;
      }
      throw new Error(`${url} was accepted`);
    };
    expect(refused('git.example/repo')).toMatchObject({
      code: 'INVALID_URL',
      message: `"git.example/repo" is not a URL. Use the repository's https:// address.`,
    });
    expect(refused('ssh://git.example/repo')).toMatchObject({
      code: 'INVALID_URL',
      message: `"ssh://git.example/repo" uses ssh; Blobless speaks git's smart HTTP only. Use the https:// address.`,
    });
    expect(refused('https://me@git.example/repo').message).toMatch(/^Put credentials in the token field/);
    expect(refused('https://:pw@git.example/repo').code).toBe('INVALID_URL');
  });

  it('names a repository by its last path segment without .git, or by its host when it has none', () => {
    expect(repoName(new URL('https://h.example/a/b.git'))).toBe('b');
    expect(repoName(new URL('https://h.example/a/b.github/'))).toBe('b.github');
    expect(repoName(new URL('https://h.example/a/b.gitx'))).toBe('b.gitx');
    expect(repoName(new URL('https://h.example/.git'))).toBe('h.example');
    expect(repoName(new URL('https://h.example:81/'))).toBe('h.example:81');
  });
});

describe('where a token may go', () => {
  const make =
    (url: string, opts: GitHttpOptions = {}) =>
    () =>
      new GitHttpClient(url, { auth, ...opts });

  it('not over plain http, but to this machine', () => {
    expect(make('http://git.example/r.git')).toThrow(
      new TransportError(
        'INSECURE_TRANSPORT',
        'git.example is reached over plain http, which would send the token unencrypted. Use its https:// address.',
      ),
    );
    for (const host of ['localhost', 'git.localhost', '[::1]', '127.0.0.1', '127.10.20.30']) {
      expect(make(`http://${host}:8080/r.git`)).not.toThrow();
    }
    for (const host of ['localhost.example', 'xlocalhost', '127.0.0.1.example', '10.0.0.1']) {
      expect(make(`http://${host}/r.git`)).toThrow(/plain http/);
    }
    // Without a token, plain http is the server's business.
    expect(() => new GitHttpClient('http://git.example/r.git')).not.toThrow();
  });

  it('through a CORS proxy only when it is an http(s) address, encrypted, and the one agreed to', () => {
    const proxied = (corsProxy: string, proxy?: string) =>
      make('https://git.example/r.git', { corsProxy, auth: { ...auth, proxy } });
    expect(proxied('not a url', 'not a url')).toThrow(
      new TransportError('INVALID_URL', 'The CORS proxy "not a url" is not a URL.'),
    );
    expect(proxied('ftp://proxy.example', 'ftp://proxy.example')).toThrow(
      new TransportError('INVALID_URL', 'The CORS proxy "ftp://proxy.example" must be an https:// address.'),
    );
    expect(() => new GitHttpClient('https://git.example/r.git', { corsProxy: 'ftp://p.example' })).toThrow(
      /must be an https/,
    );
    expect(proxied('http://proxy.example', 'http://proxy.example')).toThrow(
      new TransportError(
        'INSECURE_TRANSPORT',
        'The CORS proxy proxy.example is reached over plain http, which would send the token unencrypted. Use an https:// proxy, or one on this machine.',
      ),
    );
    expect(proxied('http://localhost:9999/', 'http://localhost:9999')).not.toThrow();
    expect(proxied('https://proxy.example/', 'https://proxy.example//')).not.toThrow();
    expect(proxied('https://proxy.example', 'https://other.example')).toThrow(
      new TransportError(
        'PROXY_CONSENT_REQUIRED',
        'Your token for git.example would pass through the CORS proxy at proxy.example, which you have not agreed to for this repository. Give the token again and agree to send it through proxy.example.',
      ),
    );
    expect(proxied('https://proxy.example')).toThrow(/not agreed to/);
    // Without a token, any proxy over plain http.
    expect(
      () => new GitHttpClient('https://git.example/r.git', { corsProxy: 'http://p.example' }),
    ).not.toThrow();
  });
});

describe('requests', () => {
  it('ask info/refs and POST commands at the repository, or through the proxy, with the protocol and token', async () => {
    const { fetch, asked } = scripted(ok('refs'), ok('answer', result));
    const client = new GitHttpClient('https://git.example/r.git', {
      fetch,
      protocol: 'version=2',
      corsProxy: 'https://proxy.example/',
      auth: { ...auth, proxy: 'https://proxy.example' },
    });
    expect(new TextDecoder().decode(await client.infoRefs('git-upload-pack'))).toBe('refs');
    expect(await text(await client.post('git-upload-pack', new Uint8Array([1])))).toBe('answer');
    expect(asked.map((a) => [a.method, a.url, a.redirect, a.credentials])).toEqual([
      ['GET', 'https://proxy.example/git.example/r.git/info/refs?service=git-upload-pack', 'manual', 'omit'],
      ['POST', 'https://proxy.example/git.example/r.git/git-upload-pack', 'manual', 'omit'],
    ]);
    for (const a of asked) {
      expect(a.headers.get('Git-Protocol')).toBe('version=2');
      expect(a.headers.get('Authorization')).toBe(`Basic ${btoa('u:secret')}`);
    }
    expect(asked[0]?.headers.get('Accept')).toBe('*/*');
    expect(asked[1]?.headers.get('Content-Type')).toBe('application/x-git-upload-pack-request');
    expect(asked[1]?.headers.get('Accept')).toBe(result);
    expect(client.requests).toBe(2);
    expect(client.bytesReceived).toBe('refs'.length + 'answer'.length);
  });

  it('through a proxy given with trailing slashes, put one slash before the repository', async () => {
    const { fetch, asked } = scripted(ok('refs'));
    await new GitHttpClient('https://git.example/r.git', {
      fetch,
      corsProxy: 'https://proxy.example//',
    }).infoRefs('git-upload-pack');
    expect(asked[0]?.url).toBe('https://proxy.example/git.example/r.git/info/refs?service=git-upload-pack');
  });

  it('read info/refs up to the byte cap given', async () => {
    const { fetch } = scripted(ok('0'.repeat(64)));
    const client = new GitHttpClient('https://git.example/r.git', { fetch, maxInfoRefsBytes: 16 });
    await expect(client.infoRefs('git-upload-pack')).rejects.toMatchObject({ code: 'LIMIT_EXCEEDED' });
  });

  it('POST upload-pack commands again after a 5xx or a reset, never a push', async () => {
    const resetOnce = () => {
      throw new TypeError('reset');
    };
    const retry = { attempts: 2, baseDelayMs: 1, maxDelayMs: 1 };
    const upload = scripted(status(503), resetOnce, ok('a', result));
    const client = new GitHttpClient('https://git.example/r.git', {
      fetch: upload.fetch,
      retry: { ...retry, attempts: 3 },
    });
    expect(await text(await client.post('git-upload-pack', new Uint8Array()))).toBe('a');
    expect(upload.asked).toHaveLength(3);
    const push = scripted(status(503));
    const pusher = new GitHttpClient('https://git.example/r.git', { fetch: push.fetch, retry });
    expect(await failure(pusher.post('git-receive-pack', new Uint8Array()))).toMatchObject({ status: 503 });
    expect(push.asked).toHaveLength(1);
  });

  it('take a POST answer the fetch says it followed, as a fetch that ignored "manual" may', async () => {
    const { fetch } = scripted(() =>
      landed(new Response(new TextEncoder().encode('a')), 'https://git.example/x'),
    );
    const client = new GitHttpClient('https://git.example/r.git', { fetch });
    expect(await text(await client.post('git-upload-pack', new Uint8Array()))).toBe('a');
    expect(client.redirectedTo).toBeNull();
  });

  it('with a token refuse an info/refs the fetch followed to another origin', async () => {
    const { fetch } = scripted(() =>
      landed(new Response('x'), 'https://evil.example/r.git/info/refs?service=git-upload-pack'),
    );
    const client = new GitHttpClient('https://git.example/r.git', { fetch, auth });
    expect((await failure(client.infoRefs('git-upload-pack'))).message).toMatch(
      /^git\.example redirected to evil\.example; Blobless sends your token only/,
    );
  });

  it('without a protocol or token send neither header, and follow the info/refs redirect themselves', async () => {
    const { fetch, asked } = scripted(ok(), ok('', 'application/x-git-receive-pack-result'));
    const client = new GitHttpClient('http://git.example/r.git', { fetch });
    await client.infoRefs('git-receive-pack');
    await client.post('git-receive-pack', new Uint8Array());
    expect(asked.map((a) => [a.url, a.redirect])).toEqual([
      ['http://git.example/r.git/info/refs?service=git-receive-pack', 'follow'],
      ['http://git.example/r.git/git-receive-pack', 'manual'],
    ]);
    expect(asked[0]?.headers.get('Git-Protocol')).toBeNull();
    expect(asked[0]?.headers.get('Accept')).toBe('*/*');
    expect(asked[0]?.headers.get('Authorization')).toBeNull();
  });

  it('refuse an answer that is not git data, but take one without a type', async () => {
    const html = scripted(ok('<html>', 'text/html'));
    const err = await failure(
      new GitHttpClient('https://git.example/r', { fetch: html.fetch }).post(
        'git-upload-pack',
        new Uint8Array(),
      ),
    );
    expect(err).toMatchObject({
      code: 'HTTP_ERROR',
      status: 200,
      message:
        "https://git.example/r answered with text/html, not git data: the address is probably not a git repository. Check it (a repository's address usually ends in .git).",
    });
    const wrongService = scripted(ok('', 'application/x-git-receive-pack-result'));
    await failure(
      new GitHttpClient('https://git.example/r', { fetch: wrongService.fetch }).post(
        'git-upload-pack',
        new Uint8Array(),
      ),
    );
    const withParameter = scripted(ok('y', `${result}; charset=binary`));
    expect(
      await text(
        await new GitHttpClient('https://git.example/r', { fetch: withParameter.fetch }).post(
          'git-upload-pack',
          new Uint8Array(),
        ),
      ),
    ).toBe('y');
    const untyped = scripted(ok('x'));
    const body = await new GitHttpClient('https://git.example/r', { fetch: untyped.fetch }).post(
      'git-upload-pack',
      new Uint8Array(),
    );
    expect(await text(body)).toBe('x');
  });
});

describe('statuses', () => {
  const failed = async (answer: () => Response, opts: GitHttpOptions = {}) => {
    const { fetch } = scripted(answer);
    return failure(
      new GitHttpClient('https://git.example/r.git', { fetch, retry: once, ...opts }).infoRefs(
        'git-upload-pack',
      ),
    );
  };

  it('each get the code and the advice that fit them', async () => {
    expect(await failed(status(401))).toMatchObject({
      code: 'HTTP_UNAUTHORIZED',
      status: 401,
      message:
        'https://git.example/r.git needs credentials (401). Give a user name and token for this repository.',
    });
    expect(await failed(status(401), { auth })).toMatchObject({
      code: 'HTTP_UNAUTHORIZED',
      message: 'https://git.example/r.git refused the credentials (401). Check the user name and token.',
    });
    expect(await failed(status(403))).toMatchObject({
      code: 'HTTP_FORBIDDEN',
      status: 403,
      message:
        'https://git.example/r.git refused access (403). The token may lack read permission for this repository.',
    });
    expect(await failed(status(404))).toMatchObject({
      code: 'HTTP_NOT_FOUND',
      status: 404,
      message:
        'No git repository at https://git.example/r.git (404). Check the address; private repositories may also answer 404 without credentials.',
    });
    expect(await failed(status(429, { 'Retry-After': '30' }))).toMatchObject({
      code: 'HTTP_ERROR',
      status: 429,
      retryAfterMs: 30_000,
      message:
        'https://git.example/r.git is limiting requests (HTTP 429, too many requests). Wait a minute, then try again. (1 attempts. The server asked to wait 30 s.)',
    });
    expect(await failed(status(500, { 'Retry-After': '2' }))).toMatchObject({
      code: 'HTTP_ERROR',
      status: 500,
      retryAfterMs: 2000,
      message: expect.stringMatching(
        /^https:\/\/git\.example\/r\.git failed on its side \(HTTP 500\)\. The server/,
      ),
    });
    const teapot = await failed(status(418, { 'Retry-After': '2' }));
    expect(teapot).toMatchObject({
      code: 'HTTP_ERROR',
      status: 418,
      retryAfterMs: undefined,
      message: 'https://git.example/r.git answered HTTP 418. Try again later.',
    });
    expect((await failed(status(499))).message).toMatch(/answered HTTP 499/);
  });

  it("from the CORS proxy itself are the proxy's refusal, or its rate limit as a wait", async () => {
    const opts = { corsProxy: 'https://proxy.example' };
    const refusal = { 'X-Blobless-Proxy-Refusal': '1' };
    const long = `  ${'no. '.repeat(200)}`;
    const refused = await failed(() => new Response(long, { status: 403, headers: refusal }), opts);
    expect(refused).toMatchObject({ code: 'PROXY_REFUSED', status: 403 });
    expect(refused.message).toBe(`The CORS proxy refused the request: ${long.trim().slice(0, 500)}`);
    const limited = await failed(status(429, { ...refusal, 'Retry-After': '3' }), opts);
    expect(limited).toMatchObject({ code: 'HTTP_ERROR', status: 429, retryAfterMs: 3000 });
    expect(limited.message).toMatch(
      /^The CORS proxy is limiting requests \(HTTP 429\): refused \(1 attempts/,
    );
    const unreadable = () =>
      new Response(
        new ReadableStream({
          pull(c) {
            c.error(new Error('gone'));
          },
        }),
        { status: 403, headers: refusal },
      );
    expect((await failed(unreadable, opts)).message).toBe('The CORS proxy refused the request: ');
    // The header means nothing without a proxy: then it is the git host's answer.
    expect((await failed(status(403, refusal))).code).toBe('HTTP_FORBIDDEN');
  });

  it('a 5xx is sent again; a 4xx is not', async () => {
    const { fetch, asked } = scripted(status(503), status(502), ok('refs'));
    const client = new GitHttpClient('https://git.example/r.git', {
      fetch,
      retry: { attempts: 3, baseDelayMs: 1, maxDelayMs: 1 },
    });
    expect(new TextDecoder().decode(await client.infoRefs('git-upload-pack'))).toBe('refs');
    expect(asked).toHaveLength(3);
  });
});

describe('failures before an answer', () => {
  const refusing = (message: string) =>
    (async () => {
      throw new TypeError(message);
    }) as typeof fetch;

  it('a fetch that throws is a NETWORK_ERROR that may be sent again, saying whether a proxy was in the way', async () => {
    const client = new GitHttpClient('https://git.example/r.git', {
      fetch: refusing('Failed to fetch'),
      retry: once,
    });
    const err = await failure(client.infoRefs('git-upload-pack'));
    expect(err).toMatchObject({ code: 'NETWORK_ERROR', beforeResponse: true });
    expect(err.message).toBe(
      'Could not reach git.example: the server is down, the address is wrong, or it does not allow requests from this page (try a CORS proxy). (Failed to fetch) (1 attempts.)',
    );
    expect(client.requests).toBe(1);
    const proxied = new GitHttpClient('https://git.example/r.git', {
      fetch: refusing('x'),
      retry: once,
      corsProxy: 'https://p.example',
    });
    expect((await failure(proxied.infoRefs('git-upload-pack'))).message).toMatch(
      /^Could not reach git\.example through the CORS proxy: /,
    );
    // A reset is sent again unless told otherwise.
    let calls = 0;
    const counting = (async () => {
      calls++;
      throw new TypeError('reset');
    }) as typeof fetch;
    const retrying = new GitHttpClient('https://git.example/r.git', {
      fetch: counting,
      retry: { attempts: 2, baseDelayMs: 1, maxDelayMs: 1 },
    });
    await failure(retrying.infoRefs('git-upload-pack', 1000, false));
    expect(calls).toBe(1);
    await failure(retrying.infoRefs('git-upload-pack'));
    expect(calls).toBe(3);
  });

  it('cancelled is ABORTED, before sending and when the fetch fails because of it', async () => {
    const controller = new AbortController();
    controller.abort();
    const { fetch, asked } = scripted(ok());
    const before = new GitHttpClient('https://git.example/r.git', { fetch, signal: controller.signal });
    expect(await failure(before.infoRefs('git-upload-pack'))).toMatchObject({
      code: 'ABORTED',
      message: 'The operation was cancelled.',
    });
    expect(asked).toEqual([]);
    expect(before.requests).toBe(0);

    const during = new AbortController();
    const aborting = (async () => {
      during.abort();
      throw new DOMException('aborted', 'AbortError');
    }) as typeof globalThis.fetch;
    const client = new GitHttpClient('https://git.example/r.git', { fetch: aborting, signal: during.signal });
    expect(await failure(client.infoRefs('git-upload-pack'))).toMatchObject({ code: 'ABORTED' });
  });
});

describe('redirects', () => {
  it('of info/refs move the base the POSTs go to; git keeps the address given', async () => {
    const { fetch, asked } = scripted(
      (url) => landed(new Response('refs'), url.replace('/old.git', '/new.git')),
      ok('', result),
    );
    const client = new GitHttpClient('https://git.example/old.git', { fetch });
    await client.infoRefs('git-upload-pack');
    expect(client.redirectedTo?.href).toBe('https://git.example/new.git');
    expect(client.url.href).toBe('https://git.example/old.git');
    await client.post('git-upload-pack', new Uint8Array());
    expect(asked[1]?.url).toBe('https://git.example/new.git/git-upload-pack');
  });

  it('to the same place change nothing', async () => {
    const { fetch } = scripted((url) => landed(new Response('refs'), url));
    const client = new GitHttpClient('https://git.example/r.git', { fetch });
    await client.infoRefs('git-upload-pack');
    expect(client.redirectedTo).toBeNull();
  });

  it('are refused where the info/refs suffix did not survive, or away from the proxy', async () => {
    const elsewhere = scripted(() => landed(new Response('x'), 'https://git.example/login'));
    expect(
      await failure(
        new GitHttpClient('https://git.example/r.git', { fetch: elsewhere.fetch }).infoRefs(
          'git-upload-pack',
        ),
      ),
    ).toMatchObject({
      code: 'REDIRECT_REFUSED',
      message:
        "https://git.example/r.git redirected to https://git.example/login, which is not a git repository's info/refs: check the address.",
    });
    const otherService = scripted((url) => landed(new Response('x'), url.replace('upload', 'receive')));
    expect(
      (
        await failure(
          new GitHttpClient('https://git.example/r.git', { fetch: otherService.fetch }).infoRefs(
            'git-upload-pack',
          ),
        )
      ).code,
    ).toBe('REDIRECT_REFUSED');

    const away = scripted(() =>
      landed(new Response('x'), 'https://evil.example/r.git/info/refs?service=git-upload-pack'),
    );
    const proxied = new GitHttpClient('https://git.example/r.git', {
      fetch: away.fetch,
      corsProxy: 'https://proxy.example',
    });
    expect(await failure(proxied.infoRefs('git-upload-pack'))).toMatchObject({
      code: 'REDIRECT_REFUSED',
      message:
        'https://git.example/r.git redirected away from the CORS proxy, to https://evil.example/r.git/info/refs?service=git-upload-pack.',
    });

    const within = scripted(
      () =>
        landed(
          new Response('x'),
          'https://proxy.example/git2.example/moved.git/info/refs?service=git-upload-pack',
        ),
      ok('', result),
    );
    const followed = new GitHttpClient('http://git.example/r.git', {
      fetch: within.fetch,
      corsProxy: 'https://proxy.example',
    });
    await followed.infoRefs('git-upload-pack');
    // The scheme of the repository's address: the proxy's path does not carry one.
    expect(followed.redirectedTo?.href).toBe('http://git2.example/moved.git');
    await followed.post('git-upload-pack', new Uint8Array());
    expect(within.asked[1]?.url).toBe('https://proxy.example/git2.example/moved.git/git-upload-pack');
  });

  it('of a POST before info/refs send it back to info/refs once, then to where that landed', async () => {
    const { fetch, asked } = scripted(
      status(301, { Location: 'https://git.example/new.git/git-upload-pack' }),
      (url) => landed(new Response('refs'), url.replace('/old.git', '/new.git')),
      ok('answer', result),
    );
    const client = new GitHttpClient('https://git.example/old.git', { fetch });
    expect(await text(await client.post('git-upload-pack', new Uint8Array()))).toBe('answer');
    expect(asked.map((a) => a.url)).toEqual([
      'https://git.example/old.git/git-upload-pack',
      'https://git.example/old.git/info/refs?service=git-upload-pack',
      'https://git.example/new.git/git-upload-pack',
    ]);
  });

  it('of a POST after info/refs are refused, as git refuses them', async () => {
    const { fetch, asked } = scripted(ok('refs'), status(302, { Location: '/elsewhere' }));
    const client = new GitHttpClient('https://git.example/r.git', { fetch });
    await client.infoRefs('git-receive-pack');
    expect(await failure(client.post('git-receive-pack', new Uint8Array()))).toMatchObject({
      code: 'REDIRECT_REFUSED',
      status: 302,
      message:
        "https://git.example/r.git redirected a git-receive-pack request; git follows only the first info/refs redirect, so the repository's address is probably wrong.",
    });
    expect(asked).toHaveLength(2);
  });

  it('with a token are followed by hand within its origin, and refused off it', async () => {
    const moved = scripted(
      status(301, { Location: '/moved.git/info/refs?service=git-upload-pack' }),
      status(307, { Location: 'https://git.example/final.git/info/refs?service=git-upload-pack' }),
      ok('refs'),
    );
    const client = new GitHttpClient('https://git.example/r.git', { fetch: moved.fetch, auth });
    await client.infoRefs('git-upload-pack');
    expect(moved.asked.map((a) => a.url)).toEqual([
      'https://git.example/r.git/info/refs?service=git-upload-pack',
      'https://git.example/moved.git/info/refs?service=git-upload-pack',
      'https://git.example/final.git/info/refs?service=git-upload-pack',
    ]);
    expect(moved.asked.every((a) => a.headers.get('Authorization') !== null)).toBe(true);
    expect(client.redirectedTo?.href).toBe('https://git.example/final.git');

    const away = scripted(
      status(302, { Location: 'https://evil.example:444/r.git/info/refs?service=git-upload-pack' }),
    );
    const refused = new GitHttpClient('https://git.example/r.git', { fetch: away.fetch, auth });
    expect(await failure(refused.infoRefs('git-upload-pack'))).toMatchObject({
      code: 'REDIRECT_REFUSED',
      message:
        'git.example redirected to evil.example:444; Blobless sends your token only to the host it was given for. Clone the repository from evil.example:444 directly if you trust it.',
    });
    expect(away.asked).toHaveLength(1);
  });

  it('with a token stop after 20 hops', async () => {
    const loop = Array.from({ length: 21 }, (_, i) =>
      status(302, { Location: `/r${i + 1}.git/info/refs?service=git-upload-pack` }),
    );
    const { fetch, asked } = scripted(...loop);
    const client = new GitHttpClient('https://git.example/r.git', { fetch, auth });
    expect(await failure(client.infoRefs('git-upload-pack'))).toMatchObject({
      code: 'REDIRECT_REFUSED',
      message: 'https://git.example/r.git redirected more than 20 times.',
    });
    expect(asked).toHaveLength(21);
  });

  it('with a token that the browser hides are found out without the token', async () => {
    const opaque = () => {
      const res = new Response(null, { status: 200 });
      Object.defineProperty(res, 'type', { value: 'opaqueredirect' });
      return res;
    };
    const hidden = scripted(
      opaque,
      () => landed(new Response(''), 'https://git.example/moved.git/info/refs?service=git-upload-pack'),
      ok('refs'),
    );
    const client = new GitHttpClient('https://git.example/r.git', { fetch: hidden.fetch, auth });
    await client.infoRefs('git-upload-pack');
    expect(
      hidden.asked.map((a) => [a.method, a.url, a.headers.get('Authorization') !== null, a.redirect]),
    ).toEqual([
      ['GET', 'https://git.example/r.git/info/refs?service=git-upload-pack', true, 'manual'],
      ['GET', 'https://git.example/r.git/info/refs?service=git-upload-pack', false, 'follow'],
      ['GET', 'https://git.example/moved.git/info/refs?service=git-upload-pack', true, 'manual'],
    ]);
    expect(hidden.asked.map((a) => a.headers.get('Accept'))).toEqual(['*/*', '*/*', '*/*']);

    const noWhere = scripted(opaque, () => landed(new Response(''), ''));
    const blind = new GitHttpClient('https://git.example/r.git', { fetch: noWhere.fetch, auth });
    expect((await failure(blind.infoRefs('git-upload-pack'))).code).toBe('REDIRECT_REFUSED');

    const nowhere = scripted(opaque, ok(''));
    const stuck = new GitHttpClient('https://git.example/r.git', { fetch: nowhere.fetch, auth });
    expect(await failure(stuck.infoRefs('git-upload-pack'))).toMatchObject({
      code: 'REDIRECT_REFUSED',
      message: expect.stringMatching(
        /^https:\/\/git\.example\/r\.git redirected a request with a token to a place this browser does not show/,
      ),
    });
  });

  it('with a token through the proxy stay on the proxy and the origin', async () => {
    const proxy = 'https://proxy.example';
    const opts = { auth: { ...auth, proxy }, corsProxy: proxy };
    const within = scripted(
      status(302, { Location: `${proxy}/git.example/moved.git/info/refs?service=git-upload-pack` }),
      ok('refs'),
    );
    const client = new GitHttpClient('https://git.example/r.git', { ...opts, fetch: within.fetch });
    await client.infoRefs('git-upload-pack');
    expect(client.redirectedTo?.href).toBe('https://git.example/moved.git');

    const offProxy = scripted(
      status(302, { Location: 'https://git.example/r2.git/info/refs?service=git-upload-pack' }),
    );
    const off = new GitHttpClient('https://git.example/r.git', { ...opts, fetch: offProxy.fetch });
    expect((await failure(off.infoRefs('git-upload-pack'))).message).toMatch(
      /^git\.example redirected to git\.example;/,
    );

    const otherHost = scripted(
      status(302, { Location: `${proxy}/evil.example/r.git/info/refs?service=git-upload-pack` }),
    );
    const other = new GitHttpClient('https://git.example/r.git', { ...opts, fetch: otherHost.fetch });
    expect((await failure(other.infoRefs('git-upload-pack'))).message).toMatch(
      /^git\.example redirected to evil\.example;/,
    );
  });
});

describe('bodies', () => {
  it('that send nothing for the stall timeout end with TIMEOUT, and the download is cancelled', async () => {
    let cancelled = false;
    const silent = () =>
      new Response(
        new ReadableStream({
          start(c) {
            c.enqueue(new TextEncoder().encode('00'));
          },
          cancel() {
            cancelled = true;
          },
        }),
      );
    const { fetch } = scripted(silent);
    const client = new GitHttpClient('https://git.example/r.git', { fetch, retry: { stallTimeoutMs: 40 } });
    expect(await failure(client.infoRefs('git-upload-pack'))).toMatchObject({
      code: 'TIMEOUT',
      message:
        'git.example sent nothing for 0 s in the middle of its answer, so Blobless gave up. The server or the network is overloaded; try again later.',
    });
    expect(cancelled).toBe(true);
    expect(client.bytesReceived).toBe(2);
  });

  it('that arrive leave no stall timer behind', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    try {
      const client = new GitHttpClient('https://git.example/r.git', { fetch: scripted(ok('refs')).fetch });
      expect(new TextDecoder().decode(await client.infoRefs('git-upload-pack'))).toBe('refs');
      expect(vi.getTimerCount()).toBe(0);
    } finally {
      vi.useRealTimers();
    }
  });

  it('that break are a NETWORK_ERROR, or ABORTED when cancelled', async () => {
    const breaking = () =>
      new Response(
        new ReadableStream({
          pull(c) {
            c.error(new Error('socket hang up'));
          },
        }),
      );
    const client = new GitHttpClient('https://git.example/r.git', { fetch: scripted(breaking).fetch });
    expect(await failure(client.infoRefs('git-upload-pack'))).toMatchObject({
      code: 'NETWORK_ERROR',
      beforeResponse: undefined,
      message:
        'The connection to git.example broke during the transfer (socket hang up). Nothing was stored; try again.',
    });
    const controller = new AbortController();
    const aborted = () =>
      new Response(
        new ReadableStream({
          pull(c) {
            controller.abort();
            c.error(new Error('aborted'));
          },
        }),
      );
    const cancelled = new GitHttpClient('https://git.example/r.git', {
      fetch: scripted(aborted).fetch,
      signal: controller.signal,
    });
    expect((await failure(cancelled.infoRefs('git-upload-pack'))).code).toBe('ABORTED');
  });

  it('of a consumer that stops early are cancelled; an empty body is no chunks', async () => {
    let cancelled = false;
    const endless = () =>
      new Response(
        new ReadableStream({
          pull(c) {
            c.enqueue(new Uint8Array(8));
          },
          cancel() {
            cancelled = true;
          },
        }),
        { headers: { 'Content-Type': result } },
      );
    const client = new GitHttpClient('https://git.example/r.git', { fetch: scripted(endless).fetch });
    for await (const _ of await client.post('git-upload-pack', new Uint8Array())) break;
    expect(cancelled).toBe(true);

    const empty = scripted(() => new Response(null, { status: 204, headers: { 'Content-Type': result } }));
    const none = new GitHttpClient('https://git.example/r.git', { fetch: empty.fetch });
    expect(await text(await none.post('git-upload-pack', new Uint8Array()))).toBe('');
  });

  it('lent are read into one buffer where the body is a byte stream, else as they come', async () => {
    const bytes = () =>
      new Response(
        new ReadableStream({
          type: 'bytes',
          start(c) {
            c.enqueue(new TextEncoder().encode('ab'));
            c.enqueue(new TextEncoder().encode('cd'));
            c.close();
          },
        }),
        { headers: { 'Content-Type': result } },
      );
    const client = new GitHttpClient('https://git.example/r.git', { fetch: scripted(bytes).fetch });
    const { lent } = await client.postLent('git-upload-pack', new Uint8Array());
    const seen: string[] = [];
    const buffers: ArrayBufferLike[] = [];
    for await (const chunk of lent) {
      seen.push(new TextDecoder().decode(chunk));
      buffers.push(chunk.buffer);
      expect(chunk.buffer.byteLength).toBe(256 * 1024);
    }
    expect(seen.join('')).toBe('abcd');
    // The first chunk's memory went to the second read.
    expect(buffers[0]?.byteLength).toBe(0);
  });
});

describe('isRedirect', () => {
  it('is a 3xx or the opaque answer of a manual redirect', () => {
    const codes = [200, 299, 300, 301, 399, 400];
    expect(codes.map((s) => isRedirect(new Response(null, { status: s })))).toEqual([
      false,
      false,
      true,
      true,
      true,
      false,
    ]);
    const opaque = new Response(null, { status: 200 });
    Object.defineProperty(opaque, 'type', { value: 'opaqueredirect' });
    expect(isRedirect(opaque)).toBe(true);
  });
});

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

describe('isOffline', () => {
  it('is online where there is no navigator (Node)', () => {
    const nav = Object.getOwnPropertyDescriptor(globalThis, 'navigator');
    Reflect.deleteProperty(globalThis, 'navigator');
    try {
      expect(isOffline()).toBe(false);
    } finally {
      if (nav) Object.defineProperty(globalThis, 'navigator', nav);
    }
  });
});
