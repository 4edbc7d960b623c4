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
import { BlockList, isIP } from 'node:net';

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
}

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

const privateRanges = new BlockList();
for (const [net, bits] of [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['127.0.0.0', 8],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.168.0.0', 16],
  ['192.0.0.0', 24],
  ['198.18.0.0', 15],
  ['224.0.0.0', 3],
] as const) {
  privateRanges.addSubnet(net, bits, 'ipv4');
}
for (const [net, bits] of [
  ['::', 128],
  ['::1', 128],
  ['fc00::', 7],
  ['64:ff9b::', 96],
  ['2002::', 16],
  ['fe80::', 10],
  ['ff00::', 8],
] as const) {
  privateRanges.addSubnet(net, bits, 'ipv6');
}

export function isPrivateAddress(address: string): boolean {
  const family = isIP(address);
  if (family === 0) return true;
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  if (mapped) return privateRanges.check(mapped[1], 'ipv4');
  return privateRanges.check(address, family === 6 ? 'ipv6' : 'ipv4');
}

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

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const origin = req.headers.origin;
    if (opts.allowedOrigins && origin && !opts.allowedOrigins.includes(origin)) {
      deny(res, 403, `This proxy serves ${opts.allowedOrigins.join(', ')} only.`);
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
    const { address } = await lookup(target.hostname).catch(() => ({ address: '' }));
    if (!address) {
      deny(res, 502, `The proxy could not resolve ${target.hostname}.`);
      return;
    }
    const local = localHosts.has(target.host);
    if (!opts.allowPrivate && !local && isPrivateAddress(address)) {
      deny(res, 403, `The proxy does not forward to loopback or private addresses (${target.hostname}).`);
      return;
    }
    if (opts.log)
      console.error(`[cors-proxy] ${req.method} ${target.host}${target.path.replace(/\?.*$/, '')}`);

    const headers: Record<string, string> = { host: target.host, 'user-agent': 'git/blobless-cors-proxy' };
    for (const name of REQUEST_HEADERS) {
      const value = req.headers[name];
      if (typeof value === 'string') headers[name] = value;
    }
    if (req.headers['content-length']) headers['content-length'] = req.headers['content-length'];
    else if (req.method === 'POST') headers['transfer-encoding'] = 'chunked';

    const scheme = local ? 'http' : protocol;
    const send = scheme === 'https' ? httpsRequest : httpRequest;
    // Connect to the address that passed the check, so a second DNS answer cannot point elsewhere.
    const upstream = send({
      host: address,
      servername: isIP(target.hostname) ? undefined : target.hostname,
      port: target.port ?? (scheme === 'https' ? 443 : 80),
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
      res.writeHead(up.statusCode ?? 502, out);
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
  res.setHeader('Access-Control-Expose-Headers', 'Content-Type, WWW-Authenticate');
  res.setHeader('Access-Control-Max-Age', '600');
}

function deny(res: ServerResponse, status: number, message: string): void {
  res.writeHead(status, { 'Content-Type': 'text/plain; charset=utf-8' });
  res.end(`${message}\n`);
}
