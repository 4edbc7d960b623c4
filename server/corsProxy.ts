import { lookup } from 'node:dns/promises';
import {
  createServer,
  Agent as HttpAgent,
  request as httpRequest,
  type IncomingMessage,
  type ServerResponse,
} from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import type { AddressInfo } from 'node:net';
import { isIP } from 'node:net';
import { privateAddressReason } from './privateAddress.ts';

export { isPrivateAddress } from './privateAddress.ts';

export interface CorsProxyOptions {
  port?: number;
  host?: string;
  /** Let requests reach loopback and private addresses. Off by default. */
  allowPrivate?: boolean;
  /**
   * `host:port`s on this machine (the dev setup's own git server) that may be reached although they are
   * loopback, over plain HTTP; every other host is spoken to with `upstreamProtocol`.
   */
  localHosts?: string[];
  /** Scheme spoken to the upstream; `http` only makes sense for local development. */
  upstreamProtocol?: 'https' | 'http';
  /** One line per request on stderr: method, host and path, never headers or credentials. */
  log?: boolean;
  /**
   * Origins whose pages may use the proxy (the app's own); any origin when absent, which suits local
   * development only: a public proxy open to every site is an anonymous relay to every git host.
   */
  allowedOrigins?: string[];
  /** Upstream inactivity limit, so a stalled host does not hold a socket forever. */
  timeoutMs?: number;
  /**
   * Upstream ports allowed besides 443 and 80 (`--port-allow`). Any other port is refused, so the proxy
   * cannot be pointed at a host's mail, database or admin services.
   */
  allowedPorts?: number[];
}

/** Sent on every answer the proxy makes itself (not the git host's), so the client can say who refused. */
export const PROXY_REFUSAL_HEADER = 'X-Blobless-Proxy-Refusal';
const DEFAULT_PORTS = [443, 80];
const REDIRECTS = new Set([301, 302, 303, 307, 308]);

export interface CorsProxy {
  url: string;
  port: number;
  close(): Promise<void>;
}

// gitprotocol-http: the only requests a smart-HTTP client makes.
const SERVICES = new Set(['git-upload-pack', 'git-receive-pack']);
const REQUEST_HEADERS = ['authorization', 'git-protocol', 'content-type', 'accept', 'content-encoding'];
const RESPONSE_HEADERS = [
  'content-type',
  'content-encoding',
  'content-length',
  'cache-control',
  'expires',
  'pragma',
  'www-authenticate',
];

interface Target {
  host: string;
  port: number | undefined;
  path: string;
  hostname: string;
}

/** `/<host[:port]>/<repo path>/info/refs?service=…` or `/<host>/<repo path>/git-upload-pack`, nothing else. */
export function parseTarget(method: string, rawUrl: string): Target | null {
  const url = new URL(rawUrl, 'http://proxy.invalid');
  const match = /^\/([^/]+)(\/.+)$/.exec(url.pathname);
  if (!match) return null;
  const [, host, path] = match;
  let hostname: string;
  let port: number | undefined;
  try {
    const parsed = new URL(`http://${host}`);
    if (parsed.username || parsed.password) return null;
    hostname = parsed.hostname.replace(/^\[|\]$/g, '');
    port = parsed.port ? Number(parsed.port) : undefined;
  } catch {
    return null;
  }
  if (method === 'GET' && path.endsWith('/info/refs')) {
    const service = url.searchParams.get('service');
    if (!service || !SERVICES.has(service) || [...url.searchParams.keys()].length !== 1) return null;
    return { host, hostname, port, path: `${path}?service=${service}` };
  }
  if (method === 'POST' && !url.search) {
    const service = path.slice(path.lastIndexOf('/') + 1);
    if (SERVICES.has(service) && path.length > service.length + 1) return { host, hostname, port, path };
  }
  return null;
}

/**
 * A CORS proxy for git hosts that send no CORS headers (GitHub, GitLab). It forwards git smart-HTTP
 * requests only, streams both ways, passes only the headers git needs, and will not be turned into a way
 * into the machine's own network unless told to.
 */
export async function startCorsProxy(opts: CorsProxyOptions = {}): Promise<CorsProxy> {
  const protocol = opts.upstreamProtocol ?? 'https';
  const agent =
    protocol === 'https'
      ? new HttpsAgent({ keepAlive: true, maxSockets: 32 })
      : new HttpAgent({ keepAlive: true, maxSockets: 32 });

  const localHosts = new Set(opts.localHosts ?? []);
  const localAgent = new HttpAgent({ keepAlive: true, maxSockets: 32 });

  const server = createServer((req, res) => {
    void handle(req, res).catch((err: Error) => {
      if (!res.headersSent) deny(res, 502, `The proxy could not reach the git host: ${err.message}`);
      else res.destroy();
    });
  });

  const ports = new Set([...DEFAULT_PORTS, ...(opts.allowedPorts ?? [])]);

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const origin = req.headers.origin;
    // A browser always sends Origin on the cross-origin requests the app makes; a request without one
    // comes from curl or a server, which the allowlist exists to keep out.
    if (opts.allowedOrigins && (!origin || !opts.allowedOrigins.includes(origin))) {
      deny(res, 403, `This proxy serves pages of ${opts.allowedOrigins.join(', ')} only.`);
      return;
    }
    setCors(req, res);
    const method =
      req.method === 'OPTIONS' ? (req.headers['access-control-request-method'] ?? '') : (req.method ?? '');
    const target = parseTarget(method, req.url ?? '/');
    if (!target) {
      deny(
        res,
        403,
        'This proxy forwards git smart-HTTP requests only (info/refs, git-upload-pack, git-receive-pack).',
      );
      return;
    }
    if (req.method === 'OPTIONS') {
      res.writeHead(204);
      res.end();
      return;
    }
    const local = localHosts.has(target.host);
    const scheme = local ? 'http' : protocol;
    const port = target.port ?? (scheme === 'https' ? 443 : 80);
    // Credentials cross the network in the clear over http; only a host on this machine may get them.
    if (scheme === 'http' && !local && req.headers.authorization) {
      deny(
        res,
        403,
        `The proxy speaks plain http to git hosts (--http), so it does not forward credentials to ${target.hostname}.`,
      );
      return;
    }
    // Every address the name has is checked, and the connection goes to the one checked: a second DNS
    // answer cannot point it elsewhere (DNS rebinding).
    const addresses = await lookup(target.hostname, { all: true, verbatim: true }).catch(() => []);
    if (addresses.length === 0) {
      deny(res, 502, `The proxy could not resolve ${target.hostname}.`);
      return;
    }
    if (!opts.allowPrivate && !local) {
      for (const { address } of addresses) {
        const why = privateAddressReason(address);
        if (why) {
          deny(
            res,
            403,
            `The proxy does not forward to loopback or private addresses (${target.hostname} is ${address}: ${why}).`,
          );
          return;
        }
      }
    }
    if (!local && !ports.has(port)) {
      deny(
        res,
        403,
        `The proxy forwards to ports ${[...ports].join(', ')} only, not ${port} (${target.hostname}); its operator can allow more with --port-allow.`,
      );
      return;
    }
    const address = addresses[0].address;
    if (opts.log)
      console.error(`[cors-proxy] ${req.method} ${target.host}${target.path.replace(/\?.*$/, '')}`);

    const headers: Record<string, string> = { host: target.host, 'user-agent': 'git/blobless-cors-proxy' };
    for (const name of REQUEST_HEADERS) {
      const value = req.headers[name];
      if (typeof value === 'string') headers[name] = value;
    }
    if (req.headers['content-length']) headers['content-length'] = req.headers['content-length'];
    else if (req.method === 'POST') headers['transfer-encoding'] = 'chunked';

    const send = scheme === 'https' ? httpsRequest : httpRequest;
    const upstream = send({
      host: address,
      servername: isIP(target.hostname) ? undefined : target.hostname,
      port,
      method: req.method,
      path: target.path,
      headers,
      agent: scheme === protocol ? agent : localAgent,
    });
    upstream.setTimeout(opts.timeoutMs ?? 60_000, () =>
      upstream.destroy(new Error('the git host stopped answering')),
    );
    upstream.on('response', (up) => {
      const out: Record<string, string | string[]> = {};
      for (const name of RESPONSE_HEADERS) {
        const value = up.headers[name];
        if (value !== undefined) out[name] = value;
      }
      const status = up.statusCode ?? 502;
      if (REDIRECTS.has(status)) {
        const moved = redirectThroughProxy(`${scheme}://${target.host}${target.path}`, up.headers.location);
        if (!moved) {
          up.resume();
          deny(res, 502, `${target.hostname} answered ${status} with no usable Location.`);
          return;
        }
        // git (curl) does not send credentials to another host it is redirected to, and the browser
        // would: it sees only the proxy's origin. So a redirect to another host is refused here.
        if (req.headers.authorization && moved.host !== target.host) {
          up.resume();
          deny(
            res,
            403,
            `${target.host} redirects to ${moved.host}; the proxy does not carry credentials to another host. Use the repository's address on ${moved.host}.`,
          );
          return;
        }
        out.location = moved.location;
      }
      res.writeHead(status, out);
      up.pipe(res);
      res.on('close', () => up.destroy());
    });
    upstream.on('error', (err) => {
      if (!res.headersSent) deny(res, 502, `The proxy could not reach ${target.hostname}: ${err.message}`);
      else res.destroy();
    });
    req.on('aborted', () => upstream.destroy());
    req.pipe(upstream);
  }

  await new Promise<void>((resolve) => server.listen(opts.port ?? 0, opts.host ?? '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://${opts.host ?? '127.0.0.1'}:${port}`,
    port,
    close: () =>
      new Promise((resolve) => {
        agent.destroy();
        localAgent.destroy();
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

function setCors(req: IncomingMessage, res: ServerResponse): void {
  res.setHeader('Access-Control-Allow-Origin', req.headers.origin ?? '*');
  res.setHeader('Vary', 'Origin');
  res.setHeader('Access-Control-Allow-Methods', 'GET, POST, OPTIONS');
  res.setHeader(
    'Access-Control-Allow-Headers',
    'Authorization, Git-Protocol, Content-Type, Accept, Content-Encoding',
  );
  res.setHeader('Access-Control-Expose-Headers', `Content-Type, WWW-Authenticate, ${PROXY_REFUSAL_HEADER}`);
  res.setHeader('Access-Control-Max-Age', '600');
}

/**
 * A git host's `Location`, as a path on this proxy (`/<host>/<path>`), so the browser's next request comes
 * back through it. Relative to the proxy's own address, so it holds wherever the proxy is served.
 */
export function redirectThroughProxy(
  requested: string,
  location: string | undefined,
): { location: string; host: string } | null {
  if (!location) return null;
  let to: URL;
  try {
    to = new URL(location, requested);
  } catch {
    return null;
  }
  if ((to.protocol !== 'https:' && to.protocol !== 'http:') || to.username || to.password) return null;
  return { location: `/${to.host}${to.pathname}${to.search}`, host: to.host };
}

function deny(res: ServerResponse, status: number, message: string): void {
  res.writeHead(status, { 'Content-Type': 'text/plain; charset=utf-8', [PROXY_REFUSAL_HEADER]: '1' });
  res.end(`${message}\n`);
}
