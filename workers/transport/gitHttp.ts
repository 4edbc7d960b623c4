import { concatBytes, responseTooLarge } from '../wire/pktLine.ts';
import { DEFAULT_WIRE_LIMITS } from '../wire/wireLimits.ts';
import { TransportError } from './errors.ts';

export interface HttpAuth {
  username: string;
  password: string;
}

export interface GitHttpOptions {
  /** Prefix such as `https://proxy.example/`; the repo URL without its scheme is appended to it. */
  corsProxy?: string;
  auth?: HttpAuth;
  signal?: AbortSignal;
  /** Sent as `Git-Protocol` on every request: a v2 POST without it gets an empty 200 from http-backend. */
  protocol?: 'version=2' | null;
  fetch?: typeof fetch;
}

export type UploadService = 'git-upload-pack' | 'git-receive-pack';

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
  readonly url: URL;
  requests = 0;
  bytesReceived = 0;
  private readonly opts: GitHttpOptions;

  constructor(url: string, opts: GitHttpOptions = {}) {
    this.url = parseRepoUrl(url);
    this.opts = opts;
    const local = ['localhost', '127.0.0.1', '[::1]'].includes(this.url.hostname);
    if (opts.auth && this.url.protocol === 'http:' && !local) {
      throw new TransportError(
        'INVALID_URL',
        `${this.url.host} is reached over plain http, which would send the token unencrypted. Use its https:// address.`,
      );
    }
  }

  private endpoint(suffix: string): string {
    const base = `${this.url.href}${suffix}`;
    const proxy = this.opts.corsProxy;
    if (!proxy) return base;
    return `${proxy.replace(/\/+$/, '')}/${base.replace(/^https?:\/\//, '')}`;
  }

  private headers(extra: Record<string, string>): Headers {
    const h = new Headers(extra);
    if (this.opts.protocol) h.set('Git-Protocol', this.opts.protocol);
    const auth = this.opts.auth;
    if (auth) h.set('Authorization', `Basic ${btoa(`${auth.username}:${auth.password}`)}`);
    return h;
  }

  private async request(target: string, init: RequestInit): Promise<Response> {
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
      );
    }
    if (!res.ok) {
      // Drain so the connection can be reused.
      await res.arrayBuffer().catch(() => undefined);
      throw statusError(res.status, this.url.href, !!this.opts.auth);
    }
    return res;
  }

  /** `GET $GIT_URL/info/refs?service=...` (gitprotocol-http: smart clients). */
  async infoRefs(
    service: UploadService,
    maxBytes: number = DEFAULT_WIRE_LIMITS.maxInfoRefsBytes,
  ): Promise<Uint8Array> {
    const res = await this.request(this.endpoint(`/info/refs?service=${service}`), {
      method: 'GET',
      headers: this.headers({ Accept: '*/*' }),
    });
    return this.readAll(res, maxBytes);
  }

  /** POST a command and hand back the response body as it streams. */
  async post(service: UploadService, body: Uint8Array): Promise<AsyncIterable<Uint8Array>> {
    const res = await this.request(this.endpoint(`/${service}`), {
      method: 'POST',
      headers: this.headers({
        'Content-Type': `application/x-${service}-request`,
        Accept: `application/x-${service}-result`,
      }),
      body: body as BodyInit,
    });
    const type = res.headers.get('Content-Type') ?? '';
    if (type && !type.startsWith(`application/x-${service}-result`)) {
      await res.arrayBuffer().catch(() => undefined);
      throw new TransportError(
        'HTTP_ERROR',
        `${this.url.href} answered with ${type}, not git data: the address is probably not a git repository.`,
        res.status,
      );
    }
    return this.stream(res);
  }

  /** The whole body; WireError `LIMIT_EXCEEDED` (maxInfoRefsBytes) once past `maxBytes`, the rest unread. */
  private async readAll(res: Response, maxBytes: number): Promise<Uint8Array> {
    const parts: Uint8Array[] = [];
    let total = 0;
    for await (const chunk of this.stream(res)) {
      total += chunk.length;
      if (total > maxBytes) {
        throw responseTooLarge({
          maxBytes,
          limit: 'maxInfoRefsBytes',
          what: 'ref advertisement (info/refs)',
        });
      }
      parts.push(chunk);
    }
    return concatBytes(parts);
  }

  private async *stream(res: Response): AsyncGenerator<Uint8Array> {
    if (!res.body) return;
    const reader = res.body.getReader();
    const signal = this.opts.signal;
    let finished = false;
    try {
      while (true) {
        let step: ReadableStreamReadResult<Uint8Array>;
        try {
          step = await reader.read();
        } catch (err) {
          if (signal?.aborted) throw abortError();
          throw new TransportError(
            'NETWORK_ERROR',
            `The connection to ${this.url.host} broke during the transfer (${(err as Error).message}). Nothing was stored; try again.`,
          );
        }
        if (step.done) {
          finished = true;
          return;
        }
        this.bytesReceived += step.value.length;
        yield step.value;
      }
    } finally {
      // A consumer that stopped early (a corrupt pack, a server error) must not leave the download running.
      if (!finished) await reader.cancel().catch(() => undefined);
      reader.releaseLock();
    }
  }
}

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

function abortError(): TransportError {
  return new TransportError('ABORTED', 'The operation was cancelled.');
}

function statusError(status: number, url: string, hadAuth: boolean): TransportError {
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
  return new TransportError('HTTP_ERROR', `${url} answered HTTP ${status}. Try again later.`, status);
}
