// The CORS proxy's one core: a standard fetch handler (Request in, Response out) that runs unchanged on
// Node (nodeProxy.ts), Deno (denoProxy.ts) and Cloudflare Workers (workerProxy.ts). Web-standard APIs only:
// no node: module, no platform global. server/README.md says what it forwards and refuses, and why.

import { gitContentType, parseTarget, redirectThroughProxy } from './gitTarget.ts';
import { privateAddressReason } from './privateAddress.ts';
import { DEFAULT_PROXY_LIMITS, type ProxyLimits } from './proxyLimits.ts';
import { acceptsGzip, isRefListRequest } from './refListEncoding.ts';
import type { RateLimiter } from './tokenBucket.ts';

export interface GitProxyOptions {
  /** Where the proxy is mounted on its origin: '' (the root) or a path such as `/proxy`. */
  basePath?: string;
  /**
   * Origins whose pages may use the proxy (the app's own); any origin when absent, which suits local
   * development only. It keeps other sites' pages out, nothing else: curl and servers send any Origin they
   * like. The limits and the rate limit are what bound those.
   */
  allowedOrigins?: string[];
  /** Upstream ports allowed besides 443 and 80 (`--port-allow`). */
  allowedPorts?: number[];
  /** Scheme spoken to the upstream; `http` only makes sense for local development. */
  upstreamProtocol?: 'https' | 'http';
  /**
   * `host:port`s on this machine (the dev setup's own git servers) reached over plain http although they
   * are loopback; every other host is spoken to with `upstreamProtocol`.
   */
  localHosts?: string[];
  /** Let requests reach loopback and private addresses. Off by default. */
  allowPrivate?: boolean;
  /**
   * Every address a name has, to refuse private ones (Node: dns.lookup; Deno: Deno.resolveDns). Absent
   * where the platform gives no DNS answers (Workers: docs/DEPLOY.md says what protects private ranges
   * there); IP literals and `localhost` are refused without it.
   */
  resolve?: (hostname: string) => Promise<string[]>;
  /** How upstream requests are sent (Node's pins the checked address); the global fetch by default. */
  fetch?: (url: string, init: RequestInit) => Promise<Response>;
  limits?: Partial<ProxyLimits>;
  /** Per-client allowance; none when absent. */
  rateLimit?: RateLimiter;
  /** Who is asking, the rate limit's key: the connection's address, or Workers' CF-Connecting-IP. */
  client?: string;
  /** One line per request: method, host and path, never headers or credentials. */
  log?: (line: string) => void;
}

/** Sent on every answer the proxy makes itself (not the git host's), so the client can say who refused. */
export const PROXY_REFUSAL_HEADER = 'X-Blobless-Proxy-Refusal';
const DEFAULT_PORTS = [443, 80];
const REDIRECTS = new Set([301, 302, 303, 307, 308]);
const REQUEST_HEADERS = ['authorization', 'git-protocol', 'content-type', 'accept', 'content-encoding'];
const SUCCESS_HEADERS = ['cache-control', 'expires', 'pragma'];
const ERROR_HEADERS = ['www-authenticate', 'retry-after'];

/**
 * Forwards one git smart-HTTP request to the git host it names (`<basePath>/<host[:port]>/<repo>/…`),
 * streaming both ways under the limits, and answers for the host with CORS headers. Never throws: every
 * failure is an answer (a refusal carries PROXY_REFUSAL_HEADER).
 */
export async function handleGitProxy(request: Request, options: GitProxyOptions = {}): Promise<Response> {
  const limits = { ...DEFAULT_PROXY_LIMITS, ...options.limits };
  const url = new URL(request.url);
  // A browser always sends Origin on the cross-origin requests the app makes; on same-origin GETs it sends
  // none but says Sec-Fetch-Site (the app and proxy on one origin, deploy/cloudflare).
  const origin =
    request.headers.get('origin') ??
    (request.headers.get('sec-fetch-site') === 'same-origin' ? url.origin : null);
  const base = responseHeaders(origin);
  const deny = (status: number, message: string, extra: Record<string, string> = {}) =>
    refusal(base, status, message, extra);

  if (options.allowedOrigins && (!origin || !options.allowedOrigins.includes(origin)))
    return deny(403, `This proxy serves pages of ${options.allowedOrigins.join(', ')} only.`);
  const basePath = (options.basePath ?? '').replace(/\/+$/, '');
  const method =
    request.method === 'OPTIONS'
      ? (request.headers.get('access-control-request-method') ?? '')
      : request.method;
  const mounted = url.pathname === basePath || url.pathname.startsWith(`${basePath}/`);
  const target = mounted ? parseTarget(method, `${url.pathname.slice(basePath.length)}${url.search}`) : null;
  if (!target)
    return deny(
      403,
      'This proxy forwards git smart-HTTP requests only (info/refs, git-upload-pack, git-receive-pack).',
    );
  if (request.method === 'OPTIONS') return new Response(null, { status: 204, headers: base });

  if (options.rateLimit && options.client !== undefined) {
    // A limiter that fails (a platform binding's outage) counts as a refusal, not as a free pass.
    const wait = await Promise.resolve()
      .then(() => options.rateLimit?.take(options.client ?? '') ?? 0)
      .catch(() => 1);
    if (wait > 0) {
      const seconds = Math.max(1, Math.ceil(wait));
      return deny(429, `This proxy is limiting requests from your address; try again in ${seconds} s.`, {
        'Retry-After': String(seconds),
      });
    }
  }

  const local = options.localHosts?.includes(target.host) ?? false;
  const scheme = local ? 'http' : (options.upstreamProtocol ?? 'https');
  const port = target.port ?? (scheme === 'https' ? 443 : 80);
  // Credentials cross the network in the clear over http; only a host on this machine may get them.
  if (scheme === 'http' && !local && request.headers.has('authorization'))
    return deny(
      403,
      `The proxy speaks plain http to git hosts (--http), so it does not forward credentials to ${target.hostname}.`,
    );
  if (!local && !options.allowPrivate) {
    const problem = await addressProblem(target.hostname, options.resolve);
    if (problem) return deny(problem.status, problem.message);
  }
  const ports = new Set([...DEFAULT_PORTS, ...(options.allowedPorts ?? [])]);
  if (!local && !ports.has(port))
    return deny(
      403,
      `The proxy forwards to ports ${[...ports].join(', ')} only, not ${port} (${target.hostname}); its operator can allow more with --port-allow.`,
    );
  const maxBody = target.service === 'git-receive-pack' ? limits.maxPushBytes : limits.maxRequestBytes;
  const tooLarge = () =>
    deny(
      413,
      `The proxy takes request bodies of up to ${maxBody} bytes for ${target.service}; this one is larger.`,
    );
  if (Number(request.headers.get('content-length') ?? 0) > maxBody) return tooLarge();
  options.log?.(`${request.method} ${target.host}${target.path.replace(/\?.*$/, '')}`);

  const upstreamUrl = `${scheme}://${target.host}${target.path}`;
  const headers = new Headers({ 'user-agent': 'git/blobless-cors-proxy' });
  for (const name of REQUEST_HEADERS) {
    const value = request.headers.get(name);
    if (value !== null) headers.set(name, value);
  }
  const timer = new RequestTimer(limits);
  // The page went away (Cancel, a closed tab): so does the request to the git host.
  request.signal?.addEventListener('abort', () => timer.cancel(), { once: true });
  let bodyOver = false;
  let body =
    request.method === 'POST' && request.body
      ? countBytes(request.body, maxBody, () => {
          bodyOver = true;
        })
      : undefined;
  const takesGzip = acceptsGzip(request.headers.get('accept-encoding'));
  // The command (ls-refs or fetch) is in the body's first pkt-line; a gzipped body is not looked into.
  let opening: Uint8Array | undefined;
  if (body && takesGzip && !request.headers.has('content-encoding')) {
    try {
      ({ first: opening, body } = await peekFirstChunk(body));
    } catch (err) {
      timer.stop();
      if (bodyOver) return tooLarge();
      return deny(400, `The proxy could not read the request body: ${errorText(err)}`);
    }
  }
  const gzip = takesGzip && isRefListRequest(request.method, target.path.replace(/\?.*$/, ''), opening);
  let upstream: Response;
  try {
    upstream = await (options.fetch ?? fetch)(upstreamUrl, {
      method: request.method,
      headers,
      body,
      redirect: 'manual',
      signal: timer.signal,
      // A streamed request body (fetch spec): Node and Deno want it said.
      duplex: 'half',
    } as RequestInit);
  } catch (err) {
    timer.stop();
    if (bodyOver) return tooLarge();
    if (timer.expired) return deny(504, timer.expired);
    return deny(502, `The proxy could not reach ${target.hostname}: ${errorText(err)}`);
  }

  if (bodyOver) {
    // workerd ends an errored request body as if it were whole, and the host may have answered it.
    timer.stop();
    await upstream.body?.cancel().catch(() => undefined);
    return tooLarge();
  }
  const status = upstream.status;
  if (REDIRECTS.has(status)) {
    timer.stop();
    await upstream.body?.cancel().catch(() => undefined);
    const moved = redirectThroughProxy(upstreamUrl, upstream.headers.get('location'), basePath);
    if (!moved) return deny(502, `${target.hostname} answered ${status} with no usable Location.`);
    // git (curl) does not send credentials to another host it is redirected to, and the browser would:
    // it sees only the proxy's origin. So a redirect to another host is refused here.
    if (request.headers.has('authorization') && moved.host !== target.host)
      return deny(
        403,
        `${target.host} redirects to ${moved.host}; the proxy does not carry credentials to another host. Use the repository's address on ${moved.host}.`,
      );
    return new Response(null, { status, headers: { ...base, Location: moved.location } });
  }
  if (status < 200 || status > 299) {
    // The status and what the client acts on (a token challenge, a wait) go through; the body, a page
    // of the host's that may hold anything, does not.
    timer.stop();
    await upstream.body?.cancel().catch(() => undefined);
    const out = { ...base, 'Content-Type': 'text/plain; charset=utf-8' };
    for (const name of ERROR_HEADERS) copyHeader(upstream.headers, out, name);
    return new Response(`${target.host} answered HTTP ${status}.\n`, { status, headers: out });
  }
  const expected = gitContentType(target);
  const type = upstream.headers.get('content-type') ?? '';
  if (type.split(';')[0].trim().toLowerCase() !== expected) {
    timer.stop();
    await upstream.body?.cancel().catch(() => undefined);
    return deny(
      502,
      `${target.host} answered ${type ? `with ${type}` : 'with no Content-Type'}, not git data (${expected}); the proxy passes git's own answers only.`,
    );
  }
  const declared = Number(upstream.headers.get('content-length') ?? 0);
  if (declared > limits.maxResponseBytes && !upstream.headers.has('content-encoding')) {
    timer.stop();
    await upstream.body?.cancel().catch(() => undefined);
    return deny(
      502,
      `${target.host} announced ${declared} bytes; the proxy passes answers of up to ${limits.maxResponseBytes} bytes.`,
    );
  }
  const out: Record<string, string> = { ...base, 'Content-Type': type };
  for (const name of SUCCESS_HEADERS) copyHeader(upstream.headers, out, name);
  // fetch hands over the body decoded whatever the host sent (gzip included), so the limit above counts
  // decoded bytes; a ref list is gzipped again for the page, with the platform's CompressionStream.
  let answer = upstream.body ? timer.guard(upstream.body, limits.maxResponseBytes) : null;
  if (gzip) {
    out['Content-Encoding'] = 'gzip';
    out.Vary = `${out.Vary}, Accept-Encoding`;
    answer = answer?.pipeThrough(gzipStream()) ?? null;
  }
  // encodeBody 'manual' (workerd): the body is already encoded as Content-Encoding says; without it
  // workerd would gzip it a second time. Node and Deno send the bytes as they are and ignore the field.
  return new Response(answer, { status, headers: out, encodeBody: 'manual' } as ResponseInit);
}

/**
 * The stream's first chunk (undefined if it is empty), and a stream of the whole, that chunk included. An
 * error reading that chunk (the page went away, the body cap) is thrown.
 */
async function peekFirstChunk(
  stream: ReadableStream<Uint8Array>,
): Promise<{ first: Uint8Array | undefined; body: ReadableStream<Uint8Array> }> {
  const reader = stream.getReader();
  const step = await reader.read();
  let pending = step.done ? undefined : step.value;
  const first = pending;
  const body = new ReadableStream<Uint8Array>({
    pull: async (out) => {
      if (pending) {
        out.enqueue(pending);
        pending = undefined;
        return;
      }
      const next = await reader.read();
      if (next.done) out.close();
      else out.enqueue(next.value);
    },
    cancel: (reason) => reader.cancel(reason),
  });
  return { first, body };
}

/** Why the proxy will not go to `hostname`, or null. */
async function addressProblem(
  hostname: string,
  resolve: GitProxyOptions['resolve'],
): Promise<{ status: number; message: string } | null> {
  const refuse = (address: string, why: string) => ({
    status: 403,
    message: `The proxy does not forward to loopback or private addresses (${hostname} is ${address}: ${why}).`,
  });
  const name = hostname.toLowerCase();
  // RFC 6761: localhost names are this machine, whatever a resolver says.
  if (name === 'localhost' || name.endsWith('.localhost')) return refuse(name, 'loopback');
  // URL parsing already turned 127.1, 2130706433 and 0x7f000001 into 127.0.0.1.
  if (/^[\d.]+$/.test(name) || name.includes(':')) {
    const why = privateAddressReason(name);
    return why ? refuse(name, why) : null;
  }
  if (!resolve) return null;
  const addresses = await resolve(hostname).catch(() => []);
  if (addresses.length === 0) return { status: 502, message: `The proxy could not resolve ${hostname}.` };
  for (const address of addresses) {
    const why = privateAddressReason(address);
    if (why) return refuse(address, why);
  }
  return null;
}

/** The total and idle time limits of one request, and the response cap, over the answer's stream. */
class RequestTimer {
  readonly signal: AbortSignal;
  /** Why the request was given up, once it was. */
  expired: string | null = null;
  private readonly controller = new AbortController();
  private readonly total: ReturnType<typeof setTimeout>;
  private idle: ReturnType<typeof setTimeout> | undefined;

  constructor(private readonly limits: ProxyLimits) {
    this.signal = this.controller.signal;
    this.total = setTimeout(
      () => this.expire(`The request took longer than the proxy's ${limits.maxTotalMs / 1000} s limit.`),
      limits.maxTotalMs,
    );
    this.touch();
  }

  private expire(why: string): void {
    this.expired = why;
    this.stop();
    this.controller.abort(new Error(why));
  }

  private touch(): void {
    clearTimeout(this.idle);
    this.idle = setTimeout(
      () => this.expire(`The git host sent nothing for ${this.limits.idleTimeoutMs / 1000} s.`),
      this.limits.idleTimeoutMs,
    );
  }

  stop(): void {
    clearTimeout(this.total);
    clearTimeout(this.idle);
  }

  cancel(): void {
    this.stop();
    this.controller.abort(new Error('The page cancelled the request.'));
  }

  /**
   * The answer's body as it arrives, cut (errored, so the client sees a broken transfer rather than a
   * short answer that looks whole) past `maxBytes` or when a time limit runs out.
   */
  guard(body: ReadableStream<Uint8Array>, maxBytes: number): ReadableStream<Uint8Array> {
    const reader = body.getReader();
    let sent = 0;
    return new ReadableStream<Uint8Array>({
      pull: async (out) => {
        let step: ReadableStreamReadResult<Uint8Array>;
        try {
          step = await reader.read();
        } catch (err) {
          this.stop();
          out.error(err);
          return;
        }
        if (step.done) {
          this.stop();
          out.close();
          return;
        }
        sent += step.value.byteLength;
        if (sent > maxBytes) {
          this.expire(`The answer passed the proxy's limit of ${maxBytes} bytes.`);
          await reader.cancel().catch(() => undefined);
          out.error(new Error(this.expired ?? 'cut'));
          return;
        }
        this.touch();
        out.enqueue(step.value);
      },
      cancel: async (reason) => {
        this.stop();
        await reader.cancel(reason).catch(() => undefined);
      },
    });
  }
}

/** The request body, errored past `maxBytes` (a body sent without Content-Length, in chunks). */
function countBytes(
  body: ReadableStream<Uint8Array>,
  maxBytes: number,
  onOver: () => void,
): ReadableStream<Uint8Array> {
  let seen = 0;
  return body.pipeThrough(
    new TransformStream<Uint8Array, Uint8Array>({
      transform(chunk, out) {
        seen += chunk.byteLength;
        if (seen > maxBytes) {
          onOver();
          out.error(new Error('request body over the limit'));
          return;
        }
        out.enqueue(chunk);
      },
    }),
  );
}

/** CORS for the app's pages, and what makes any answer inert if opened as a page on the proxy's origin. */
function responseHeaders(origin: string | null): Record<string, string> {
  return {
    'Access-Control-Allow-Origin': origin ?? '*',
    Vary: 'Origin',
    'Access-Control-Allow-Methods': 'GET, POST, OPTIONS',
    'Access-Control-Allow-Headers': 'Authorization, Git-Protocol, Content-Type, Accept, Content-Encoding',
    'Access-Control-Expose-Headers': `Content-Type, WWW-Authenticate, Retry-After, ${PROXY_REFUSAL_HEADER}`,
    'Access-Control-Max-Age': '600',
    // An upstream that answers text/html with <script> must not get a page on this origin: git's types
    // only (above), no sniffing, no script or plugin even if opened, a download rather than a page.
    'X-Content-Type-Options': 'nosniff',
    'Content-Security-Policy': "default-src 'none'; frame-ancestors 'none'; sandbox",
    'Content-Disposition': 'attachment',
  };
}

function refusal(
  base: Record<string, string>,
  status: number,
  message: string,
  extra: Record<string, string>,
): Response {
  return new Response(`${message}\n`, {
    status,
    headers: { ...base, ...extra, 'Content-Type': 'text/plain; charset=utf-8', [PROXY_REFUSAL_HEADER]: '1' },
  });
}

function copyHeader(from: Headers, to: Record<string, string>, name: string): void {
  const value = from.get(name);
  if (value !== null) to[name] = value;
}

function errorText(err: unknown): string {
  const e = err as { message?: string; cause?: { message?: string } };
  return [e?.message, e?.cause?.message].filter(Boolean).join(': ') || String(err);
}

/** The platform's gzip, typed as what it is: lib.dom types its writable side as BufferSource. */
function gzipStream(): TransformStream<Uint8Array, Uint8Array> {
  return new CompressionStream('gzip') as unknown as TransformStream<Uint8Array, Uint8Array>;
}
