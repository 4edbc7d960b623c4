import { infoRefsCap, type LentChunks, readAllCapped } from '../wire/pktLine.ts';
import { DEFAULT_WIRE_LIMITS } from '../wire/wireLimits.ts';
import { TransportError } from './errors.ts';
import {
  formatDelay,
  parseRetryAfter,
  type RetryNotice,
  type RetryPolicy,
  retryPolicy,
  withRetry,
} from './retryPolicy.ts';

/** HTTP Basic credentials: for most hosts a token as the password (GitHub: any user name). */
export interface HttpAuth {
  /** The user name of the Basic credentials. */
  username: string;
  /** The password or token; never logged, and kept in storage only when asked to. */
  password: string;
  /**
   * The CORS proxy the person agreed to send this token through, having seen its address (the token
   * dialog, the clone form). A token goes through a proxy only when it is this one.
   */
  proxy?: string;
}

export interface GitHttpOptions {
  /** Prefix such as `https://proxy.example/`; the repo URL without its scheme is appended to it. */
  corsProxy?: string;
  auth?: HttpAuth;
  signal?: AbortSignal;
  /** Sent as `Git-Protocol` on every request: a v2 POST without it gets an empty 200 from http-backend. */
  protocol?: 'version=2' | null;
  fetch?: typeof fetch;
  /** Told before each wait of the retry policy (retryPolicy.ts), so progress can say "retrying in 2 s…". */
  onRetry?: (notice: RetryNotice) => void;
  /** Overrides the retry policy's constants; tests use short waits. */
  retry?: Partial<RetryPolicy>;
  /** Bytes of a ref advertisement (info/refs) before it fails with LIMIT_EXCEEDED (WireLimits). */
  maxInfoRefsBytes?: number;
  /**
   * Where an earlier info/refs of this repository landed (RepoRecord.movedTo): a POST sent before any
   * info/refs (a lazy fetch) goes there, if it is on the origin given (aheadBase), instead of to the
   * address given, which would answer 301. A remembered address that answers anything but success is
   * forgotten, and the repository found again from the address given (`answer`).
   */
  movedTo?: string;
}

export type UploadService = 'git-upload-pack' | 'git-receive-pack';

/** What server/proxy/gitProxy.ts puts on the answers it makes itself (kept here: transport cannot import server/). */
const PROXY_REFUSAL_HEADER = 'X-Blobless-Proxy-Refusal';

/** Hosts on this machine: plain http to them does not cross a network. */
function isLoopbackHost(url: URL): boolean {
  const host = url.hostname;
  return (
    host === 'localhost' ||
    host.endsWith('.localhost') ||
    host === '[::1]' ||
    /^127\.\d+\.\d+\.\d+$/.test(host)
  );
}

/** Parses and checks a repository URL, so a typo fails before any request with a message that says why. */
export function parseRepoUrl(url: string): URL {
  let parsed: URL;
  try {
    parsed = new URL(url.trim());
  } catch {
    throw new TransportError('INVALID_URL', `"${url}" is not a URL. Use the repository's https:// address.`);
  }
  if (parsed.protocol !== 'https:' && parsed.protocol !== 'http:') {
    throw new TransportError(
      'INVALID_URL',
      `"${url}" uses ${parsed.protocol.replace(':', '')}; Blobless speaks git's smart HTTP only. Use the https:// address.`,
    );
  }
  if (parsed.username || parsed.password) {
    throw new TransportError(
      'INVALID_URL',
      'Put credentials in the token field, not in the URL, so they are not stored with the repository address.',
    );
  }
  parsed.hash = '';
  parsed.search = '';
  parsed.pathname = parsed.pathname.replace(/\/+$/, '');
  return parsed;
}

/** The name a person calls a repository by: the last path segment without `.git`. */
export function repoName(url: URL): string {
  const last = url.pathname.split('/').filter(Boolean).pop() ?? url.host;
  return last.replace(/\.git$/, '') || url.host;
}

/**
 * git smart-HTTP (gitprotocol-http): one GET for the advertisement, POSTs for commands.
 * Counts requests and response bytes so callers can report what a clone cost.
 */
export class GitHttpClient {
  /** The repository's address as given; git keeps this as `remote.origin.url` even after a redirect. */
  readonly url: URL;
  requests = 0;
  bytesReceived = 0;
  /** Where an info/refs redirect moved the requests to (git's "redirecting to"), or null. */
  redirectedTo: URL | null = null;
  private base: URL;
  private readonly proxy: string | null;
  private readonly opts: GitHttpOptions;
  /** Whether info/refs was asked (and so any redirect of the repository already followed). */
  private discovered = false;
  /** Whether the base is a remembered move (GitHttpOptions.movedTo) no info/refs has confirmed. */
  private remembered = false;
  private service: UploadService = 'git-upload-pack';

  constructor(url: string, opts: GitHttpOptions = {}) {
    this.url = parseRepoUrl(url);
    this.base = this.url;
    this.opts = opts;
    this.proxy = opts.corsProxy ? opts.corsProxy.replace(/\/+$/, '') : null;
    if (opts.auth && this.url.protocol === 'http:' && !isLoopbackHost(this.url)) {
      throw new TransportError(
        'INSECURE_TRANSPORT',
        `${this.url.host} is reached over plain http, which would send the token unencrypted. Use its https:// address.`,
      );
    }
    if (this.proxy) {
      let proxyUrl: URL;
      try {
        proxyUrl = new URL(this.proxy);
      } catch {
        throw new TransportError('INVALID_URL', `The CORS proxy "${opts.corsProxy}" is not a URL.`);
      }
      if (proxyUrl.protocol !== 'https:' && proxyUrl.protocol !== 'http:') {
        throw new TransportError(
          'INVALID_URL',
          `The CORS proxy "${opts.corsProxy}" must be an https:// address.`,
        );
      }
      if (opts.auth && proxyUrl.protocol === 'http:' && !isLoopbackHost(proxyUrl)) {
        throw new TransportError(
          'INSECURE_TRANSPORT',
          `The CORS proxy ${proxyUrl.host} is reached over plain http, which would send the token unencrypted. Use an https:// proxy, or one on this machine.`,
        );
      }
      if (opts.auth && opts.auth.proxy?.replace(/\/+$/, '') !== this.proxy) {
        throw new TransportError(
          'PROXY_CONSENT_REQUIRED',
          `Your token for ${this.url.host} would pass through the CORS proxy at ${proxyUrl.host}, which you have not agreed to for this repository. Give the token again and agree to send it through ${proxyUrl.host}.`,
        );
      }
    }
    const moved = this.aheadBase(opts.movedTo);
    if (moved !== this.base) {
      this.base = moved;
      this.remembered = true;
    }
  }

  private endpoint(suffix: string, base: URL = this.base): string {
    const target = `${base.href}${suffix}`;
    if (!this.proxy) return target;
    return `${this.proxy}/${target.replace(/^https?:\/\//, '')}`;
  }

  /** Moves the base to where a redirected info/refs landed: its URL without the `/info/refs?…` suffix. */
  private moveBase(finalUrl: string): void {
    const suffix = `/info/refs?service=${this.service}`;
    let target = finalUrl;
    if (this.proxy) {
      if (!finalUrl.startsWith(`${this.proxy}/`)) {
        throw new TransportError(
          'REDIRECT_REFUSED',
          `${this.url.href} redirected away from the CORS proxy, to ${finalUrl}.`,
        );
      }
      target = `${this.base.protocol}//${finalUrl.slice(this.proxy.length + 1)}`;
    }
    // git's http.c: "unable to update url base from redirection" unless the suffix survived.
    if (!target.endsWith(suffix)) {
      throw new TransportError(
        'REDIRECT_REFUSED',
        `${this.url.href} redirected to ${target}, which is not a git repository's info/refs: check the address.`,
      );
    }
    const moved = parseRepoUrl(target.slice(0, -suffix.length));
    if (this.opts.auth && moved.origin !== this.url.origin) throw this.tokenElsewhere(finalUrl);
    if (moved.href !== this.base.href) {
      this.base = moved;
      this.redirectedTo = moved;
    }
  }

  private headers(extra: Record<string, string>): Headers {
    const h = new Headers(extra);
    if (this.opts.protocol) h.set('Git-Protocol', this.opts.protocol);
    const auth = this.opts.auth;
    if (auth) h.set('Authorization', `Basic ${btoa(`${auth.username}:${auth.password}`)}`);
    return h;
  }

  /** The response when it is a success or a redirect; a typed error for any other status. */
  private async request(target: string, init: RequestInit): Promise<Response> {
    const res = await this.send(target, init);
    if (isRedirect(res)) return res;
    // Where a redirect went is checked before what the new place answered (a 401 there is not ours).
    if (res.redirected && init.method === 'GET') this.moveBase(res.url);
    if (!res.ok) {
      if (this.proxy && res.headers.get(PROXY_REFUSAL_HEADER)) {
        const text = (await res.text().catch(() => '')).trim().slice(0, 500);
        // The proxy's rate limit is a wait, not a refusal: retried as the retry policy says, after Retry-After.
        if (res.status === 429)
          throw new TransportError(
            'HTTP_ERROR',
            `The CORS proxy is limiting requests (HTTP 429): ${text}`,
            429,
            {
              retryAfterMs: parseRetryAfter(res.headers.get('Retry-After')),
            },
          );
        throw new TransportError('PROXY_REFUSED', `The CORS proxy refused the request: ${text}`, res.status);
      }
      // Drain so the connection can be reused.
      await res.arrayBuffer().catch(() => undefined);
      throw statusError(res.status, this.url.href, !!this.opts.auth, res.headers.get('Retry-After'));
    }
    return res;
  }

  private async send(target: string, init: RequestInit): Promise<Response> {
    const doFetch = this.opts.fetch ?? fetch;
    const signal = this.opts.signal;
    if (signal?.aborted) throw abortError();
    // Every request of every operation comes through here, so this is where "offline" is said, before
    // trying: a fetch would fail too, but only after a timeout, and as a vague network error.
    if (isOffline()) throw offlineError(this.url.host);
    this.requests++;
    let res: Response;
    try {
      // No cache: 'no-store' here: it makes Chromium skip its preflight cache, one more round trip per request.
      res = await doFetch(target, { ...init, signal, credentials: 'omit' });
    } catch (err) {
      if (signal?.aborted) throw abortError();
      const host = this.url.host;
      throw new TransportError(
        'NETWORK_ERROR',
        `Could not reach ${host}${this.opts.corsProxy ? ' through the CORS proxy' : ''}: the server is down, the address is wrong, or it does not allow requests from this page (try a CORS proxy). (${(err as Error).message})`,
        undefined,
        { beforeResponse: true },
      );
    }
    return res;
  }

  /** `GET $GIT_URL/info/refs?service=...` (gitprotocol-http: smart clients). */
  async infoRefs(
    service: UploadService,
    maxBytes: number = this.opts.maxInfoRefsBytes ?? DEFAULT_WIRE_LIMITS.maxInfoRefsBytes,
    /** false: a reset is not retried (the caller has a fallback, e.g. a CORS proxy, to try at once). */
    retryResets = true,
  ): Promise<Uint8Array> {
    // Only this request follows redirects, and where it lands becomes the base of the POSTs that follow:
    // git's http.followRedirects=initial (http.c, update_url_from_redirect).
    this.service = service;
    const target = this.endpoint(`/info/refs?service=${service}`);
    const res = await this.retrying(
      () =>
        this.opts.auth
          ? this.discoverWithToken(target)
          : this.request(target, {
              method: 'GET',
              headers: this.headers({ Accept: '*/*' }),
              redirect: 'follow',
            }),
      retryResets,
    );
    this.discovered = true;
    return this.readAll(res, maxBytes);
  }

  /**
   * The info/refs GET of a request that carries a token: every redirect is taken here (`redirect:
   * 'manual'`), and only to the origin the token was given for, so the token goes nowhere else whatever a
   * browser does with the header on a redirect (the Fetch standard drops it on another origin only since
   * 2022). A browser hides where a manual redirect points (an opaque-redirect response): then the same GET
   * without the token finds out, and the token follows only if that is the same origin.
   */
  private async discoverWithToken(target: string): Promise<Response> {
    const init = { method: 'GET', headers: this.headers({ Accept: '*/*' }), redirect: 'manual' } as const;
    let url = target;
    for (let hop = 0; ; hop++) {
      const res = await this.request(url, init);
      if (!isRedirect(res)) {
        if (url !== target) this.moveBase(url);
        return res;
      }
      await res.arrayBuffer().catch(() => undefined);
      if (hop === MAX_REDIRECTS) {
        throw new TransportError(
          'REDIRECT_REFUSED',
          `${this.url.href} redirected more than ${MAX_REDIRECTS} times.`,
        );
      }
      const location = res.headers.get('Location');
      const next = location !== null ? new URL(location, url).href : await this.landingWithoutToken(url);
      if (this.upstreamOrigin(next) !== this.url.origin) throw this.tokenElsewhere(next);
      url = next;
    }
  }

  /** Where `url` ends up when followed by the browser without the token (for a redirect it hides). */
  private async landingWithoutToken(url: string): Promise<string> {
    const headers = this.headers({ Accept: '*/*' });
    headers.delete('Authorization');
    const res = await this.send(url, { method: 'GET', headers, redirect: 'follow' });
    await res.arrayBuffer().catch(() => undefined);
    if (!res.redirected || !res.url) {
      throw new TransportError(
        'REDIRECT_REFUSED',
        `${this.url.href} redirected a request with a token to a place this browser does not show, and does not redirect one without it: Blobless cannot tell whether the token would stay on ${this.url.host}.`,
      );
    }
    return res.url;
  }

  /** The origin of the repository `url` names: through the proxy, the host after its prefix; null off it. */
  private upstreamOrigin(url: string): string | null {
    if (!this.proxy) return new URL(url).origin;
    if (!url.startsWith(`${this.proxy}/`)) return null;
    return new URL(`${this.base.protocol}//${url.slice(this.proxy.length + 1)}`).origin;
  }

  private tokenElsewhere(next: string): TransportError {
    const upstream = this.upstreamOrigin(next);
    const host = new URL(upstream ?? next).host;
    return new TransportError(
      'REDIRECT_REFUSED',
      `${this.url.host} redirected to ${host}; Blobless sends your token only to the host it was given for. Clone the repository from ${host} directly if you trust it.`,
    );
  }

  /** POST a command and hand back the response body as it streams. */
  async post(service: UploadService, body: Uint8Array): Promise<AsyncIterable<Uint8Array>> {
    return this.stream(await this.answer(service, body));
  }

  /**
   * POST a command whose answer carries a pack, and lend its body (LentChunks, wire/pktLine.ts): read into
   * one reused buffer where the body is a byte stream, so receiving allocates nothing per chunk. Only for
   * `readPackets` feeding a consumer that copies every packet before asking for the next (fetch's pack into
   * PackIngester); a body read whole or kept in pieces takes `post`.
   */
  async postLent(service: UploadService, body: Uint8Array): Promise<LentChunks> {
    return { lent: this.stream(await this.answer(service, body), true) };
  }

  /**
   * POST a command sent together with the info/refs GET, before its answer (a speculative ls-refs,
   * ops/sync/lsRefsCall.ts): sent once, not retried, and a redirect fails it instead of asking info/refs,
   * which the caller is doing already. The caller treats any failure as "ask again the usual way".
   * `at`: where the repository is expected to answer (aheadBase); the caller uses the answer only if the
   * GET lands there.
   */
  async postAhead(service: UploadService, body: Uint8Array, at?: URL): Promise<AsyncIterable<Uint8Array>> {
    return this.stream(await this.answer(service, body, false, at));
  }

  /**
   * What a later request may remember of where info/refs landed (RepoRecord.movedTo, for aheadBase): a move
   * within the origin given; none to another origin, which only a redirect taken at the time may lead to.
   */
  get movedOnOrigin(): string | undefined {
    return this.redirectedTo?.origin === this.url.origin ? this.redirectedTo.href : undefined;
  }

  /**
   * Where a speculative POST goes before info/refs is asked: where an earlier info/refs landed (`movedTo`,
   * RepoRecord.movedTo) when that is on the origin given, otherwise the address given. Another origin is
   * never asked on a memory alone: only the GET's own redirect, taken now, leads there.
   */
  aheadBase(movedTo?: string): URL {
    if (!movedTo || this.discovered) return this.base;
    let moved: URL;
    try {
      moved = parseRepoUrl(movedTo);
    } catch {
      return this.base;
    }
    return moved.origin === this.url.origin ? moved : this.base;
  }

  private async answer(
    service: UploadService,
    body: Uint8Array,
    discovering = true,
    at?: URL,
  ): Promise<Response> {
    const send = () =>
      this.request(this.endpoint(`/${service}`, at), {
        method: 'POST',
        headers: this.headers({
          'Content-Type': `application/x-${service}-request`,
          Accept: `application/x-${service}-result`,
        }),
        body: body as BodyInit,
        redirect: 'manual',
      });
    // upload-pack commands only read, so sending one again is safe; a push may have been applied.
    const sendRetrying = service === 'git-upload-pack' && discovering ? () => this.retrying(send) : send;
    const rediscover = !this.discovered && discovering;
    let res: Response | null;
    try {
      res = await sendRetrying();
    } catch (err) {
      // A remembered address the repository has left since (an HTTP error there): found again below.
      if (!(rediscover && this.remembered && err instanceof TransportError && err.status !== undefined))
        throw err;
      res = null;
    }
    if (res === null || (isRedirect(res) && rediscover)) {
      // A lazy fetch POSTs without asking info/refs first; a moved repository sends it back to the step
      // git always takes, whose redirect moves the base, and the POST goes again to the new place. A
      // remembered move that failed is forgotten: info/refs is asked at the address given, as git does.
      await res?.arrayBuffer().catch(() => undefined);
      if (this.remembered) {
        this.base = this.url;
        this.remembered = false;
      }
      await this.infoRefs(service);
      res = await sendRetrying();
    }
    if (isRedirect(res)) {
      await res.arrayBuffer().catch(() => undefined);
      throw new TransportError(
        'REDIRECT_REFUSED',
        `${this.base.href} redirected a ${service} request; git follows only the first info/refs redirect, so the repository's address is probably wrong.`,
        res.status,
      );
    }
    const type = res.headers.get('Content-Type') ?? '';
    if (type && !type.startsWith(`application/x-${service}-result`)) {
      await res.arrayBuffer().catch(() => undefined);
      throw new TransportError(
        'HTTP_ERROR',
        `${this.url.href} answered with ${type}, not git data: the address is probably not a git repository. Check it (a repository's address usually ends in .git).`,
        res.status,
      );
    }
    return res;
  }

  /** Sends again on what retryPolicy.ts deems transient, while no byte of the answer was handed on. */
  private retrying(send: () => Promise<Response>, resets = true): Promise<Response> {
    return withRetry(send, {
      resets,
      signal: this.opts.signal,
      onRetry: this.opts.onRetry,
      policy: this.opts.retry,
      host: this.url.host,
    });
  }

  /** The whole body; WireError `LIMIT_EXCEEDED` (maxInfoRefsBytes) once past `maxBytes`, the rest unread. */
  private readAll(res: Response, maxBytes: number): Promise<Uint8Array> {
    return readAllCapped(this.stream(res), infoRefsCap(maxBytes));
  }

  /**
   * The body's chunks as they arrive. `lend`: each chunk is read into the memory of the one before, which
   * the caller must be done with (LentChunks); where the body is not a byte stream, fresh chunks as usual.
   */
  private async *stream(res: Response, lend = false): AsyncGenerator<Uint8Array> {
    if (!res.body) return;
    let byob: ReadableStreamBYOBReader | null = null;
    if (lend) {
      try {
        byob = res.body.getReader({ mode: 'byob' });
      } catch {
        // Not a byte stream (a body some fetch implementations build otherwise): default reads.
      }
    }
    const reader = byob ?? res.body.getReader();
    let into = byob ? new Uint8Array(LENT_CHUNK_BYTES) : null;
    const read = (): Promise<ReadableStreamReadResult<Uint8Array>> =>
      byob && into ? byob.read(into) : (reader as ReadableStreamDefaultReader<Uint8Array>).read();
    const signal = this.opts.signal;
    const stallMs = retryPolicy(this.opts.retry).stallTimeoutMs;
    let finished = false;
    try {
      while (true) {
        let step: ReadableStreamReadResult<Uint8Array>;
        let timer: ReturnType<typeof setTimeout> | undefined;
        try {
          const stalled = new Promise<never>((_, reject) => {
            timer = setTimeout(
              () =>
                reject(
                  new TransportError(
                    'TIMEOUT',
                    `${this.url.host} sent nothing for ${formatDelay(stallMs)} in the middle of its answer, so Blobless gave up. The server or the network is overloaded; try again later.`,
                  ),
                ),
              stallMs,
            );
          });
          step = await Promise.race([read(), stalled]);
        } catch (err) {
          if (err instanceof TransportError) throw err;
          if (signal?.aborted) throw abortError();
          throw new TransportError(
            'NETWORK_ERROR',
            `The connection to ${this.url.host} broke during the transfer (${(err as Error).message}). Nothing was stored; try again.`,
          );
        } finally {
          clearTimeout(timer);
        }
        if (step.done) {
          finished = true;
          return;
        }
        this.bytesReceived += step.value.length;
        // The read moved the memory to the chunk's buffer: the next read takes it back.
        if (into) into = new Uint8Array(step.value.buffer as ArrayBuffer);
        yield step.value;
      }
    } finally {
      // A consumer that stopped early (a corrupt pack, a server error) must not leave the download running.
      if (!finished) await reader.cancel().catch(() => undefined);
      reader.releaseLock();
    }
  }
}

/**
 * The buffer a lent body is read into (LentChunks). A read returns what has arrived, up to this; each read's
 * last packet, cut at the end, is copied to join the next (up to 64 KiB, pktLine.ts keepUnread). It is held
 * at the clone's peak (the end of receiving); at 256 KiB large.git's 39 MB arrive in about 150 reads, whose
 * cost did not show next to the clone's 2.1-2.7 s receive (HEAPPROBE, Chromium, three runs each).
 */
const LENT_CHUNK_BYTES = 256 * 1024;

/** How many redirects one request follows, as git's http.c tells curl (CURLOPT_MAXREDIRS, 20). */
const MAX_REDIRECTS = 20;

/** `navigator.onLine` in a window or a worker; where there is no navigator (Node), online is assumed. */
export function isOffline(): boolean {
  return (globalThis as { navigator?: { onLine?: boolean } }).navigator?.onLine === false;
}

export function offlineError(host: string): TransportError {
  return new TransportError(
    'OFFLINE',
    `This device is offline, so ${host} was not contacted. Connect to the network and try again.`,
  );
}

export function isRedirect(res: Response): boolean {
  return res.type === 'opaqueredirect' || (res.status >= 300 && res.status < 400);
}

function abortError(): TransportError {
  return new TransportError('ABORTED', 'The operation was cancelled.');
}

function statusError(
  status: number,
  url: string,
  hadAuth: boolean,
  retryAfter: string | null,
): TransportError {
  if (status === 401)
    return new TransportError(
      'HTTP_UNAUTHORIZED',
      hadAuth
        ? `${url} refused the credentials (401). Check the user name and token.`
        : `${url} needs credentials (401). Give a user name and token for this repository.`,
      status,
    );
  if (status === 403)
    return new TransportError(
      'HTTP_FORBIDDEN',
      `${url} refused access (403). The token may lack read permission for this repository.`,
      status,
    );
  if (status === 404)
    return new TransportError(
      'HTTP_NOT_FOUND',
      `No git repository at ${url} (404). Check the address; private repositories may also answer 404 without credentials.`,
      status,
    );
  const retryAfterMs = parseRetryAfter(retryAfter);
  if (status === 429)
    return new TransportError(
      'HTTP_ERROR',
      `${url} is limiting requests (HTTP 429, too many requests). Wait a minute, then try again.`,
      status,
      { retryAfterMs },
    );
  if (status >= 500)
    return new TransportError(
      'HTTP_ERROR',
      `${url} failed on its side (HTTP ${status}). The server or a proxy in front of it is in trouble; try again later.`,
      status,
      { retryAfterMs },
    );
  return new TransportError('HTTP_ERROR', `${url} answered HTTP ${status}. Try again later.`, status);
}
