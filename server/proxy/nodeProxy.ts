import { lookup } from 'node:dns';
import { createServer } from 'node:http';
import type { AddressInfo, LookupFunction } from 'node:net';
import { createRequestListener } from '@remix-run/node-fetch-server';
import { Agent, fetch as undiciFetch } from 'undici';
import { type GitProxyOptions, handleGitProxy } from './gitProxy.ts';
import { privateAddressReason } from './privateAddress.ts';
import { DEFAULT_RATE_LIMIT, type ProxyLimits } from './proxyLimits.ts';
import { type TokenBucketOptions, tokenBucket } from './tokenBucket.ts';

export { PROXY_REFUSAL_HEADER } from './gitProxy.ts';
export { parseTarget, redirectThroughProxy } from './gitTarget.ts';
export { isPrivateAddress } from './privateAddress.ts';

export interface CorsProxyOptions {
  port?: number;
  host?: string;
  /** Let requests reach loopback and private addresses. Off by default. */
  allowPrivate?: boolean;
  /** `host:port`s on this machine (the dev setup's git servers) reached over plain http although loopback. */
  localHosts?: string[];
  /** Scheme spoken to the upstream; `http` only makes sense for local development. */
  upstreamProtocol?: 'https' | 'http';
  /** One line per request on stderr: method, host and path, never headers or credentials. */
  log?: boolean;
  /** Origins whose pages may use the proxy; any when absent (see GitProxyOptions.allowedOrigins). */
  allowedOrigins?: string[];
  /** Upstream ports allowed besides 443 and 80 (`--port-allow`). */
  allowedPorts?: number[];
  limits?: Partial<ProxyLimits>;
  /** The per-client token bucket (DEFAULT_RATE_LIMIT when absent); false: none. */
  rateLimit?: TokenBucketOptions | false;
  /** Where the proxy is mounted (`/proxy`); the root when absent. */
  basePath?: string;
  /**
   * Behind a reverse proxy (TLS in front, deploy/node/Caddyfile): the client's address for the rate limit
   * is the one it puts in X-Forwarded-For, not the reverse proxy's. Never without one: clients could
   * pick any address they like.
   */
  trustProxy?: boolean;
}

export interface CorsProxy {
  url: string;
  port: number;
  close(): Promise<void>;
}

/** A standard fetch handler with the connection's address, as node-fetch-server hands it over. */
export type NodeFetchHandler = (request: Request, client: { address: string }) => Promise<Response>;

/**
 * The proxy on Node: handleGitProxy behind node:http (node-fetch-server turns Node's request into a
 * standard one), with DNS answers checked. Every address a name resolves to is checked when the upstream
 * connection is made, and the connection goes to a checked one: a second DNS answer cannot point it
 * elsewhere (DNS rebinding).
 */
export async function startCorsProxy(opts: CorsProxyOptions = {}): Promise<CorsProxy> {
  const node = nodeProxyOptions(opts);
  const served = await serveFetchHandler(
    (request, client) => handleGitProxy(request, { ...node.options, client: client.address }),
    opts,
  );
  return { ...served, close: () => served.close().then(node.close) };
}

/** The handler's options on Node: DNS checked, upstream connections pinned to the checked address. */
export function nodeProxyOptions(opts: CorsProxyOptions): {
  options: GitProxyOptions;
  close(): Promise<void>;
} {
  const localNames = new Set((opts.localHosts ?? []).map((h) => new URL(`http://${h}`).hostname));
  const agent = new Agent({
    connections: 32,
    connect: { lookup: opts.allowPrivate ? lookup : checkedLookup(localNames) },
  });
  const options: GitProxyOptions = {
    basePath: opts.basePath,
    allowedOrigins: opts.allowedOrigins,
    allowedPorts: opts.allowedPorts,
    upstreamProtocol: opts.upstreamProtocol,
    localHosts: opts.localHosts,
    allowPrivate: opts.allowPrivate,
    limits: opts.limits,
    resolve: resolveAll,
    rateLimit: opts.rateLimit === false ? undefined : tokenBucket(opts.rateLimit ?? DEFAULT_RATE_LIMIT),
    fetch: (url, init) =>
      undiciFetch(url, { ...(init as object), dispatcher: agent }) as unknown as Promise<Response>,
    log: opts.log ? (line) => console.error(`[cors-proxy] ${line}`) : undefined,
  };
  return { options, close: () => agent.close() };
}

/** Serves a standard fetch handler on node:http. */
export async function serveFetchHandler(
  handler: NodeFetchHandler,
  at: { host?: string; port?: number; trustProxy?: boolean } = {},
): Promise<CorsProxy> {
  const server = createServer(createRequestListener(handler, { trustProxy: at.trustProxy }));
  const host = at.host ?? '127.0.0.1';
  await new Promise<void>((resolve) => server.listen(at.port ?? 0, host, resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://${host}:${port}`,
    port,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

function resolveAll(hostname: string): Promise<string[]> {
  return new Promise((resolve, reject) =>
    lookup(hostname, { all: true, verbatim: true }, (err, addresses) =>
      err ? reject(err) : resolve(addresses.map((a) => a.address)),
    ),
  );
}

/** dns.lookup, failing for a name with any private address unless it is one of this machine's git servers. */
function checkedLookup(localNames: Set<string>): LookupFunction {
  return (hostname, options, callback) => {
    lookup(hostname, { ...options, all: true, verbatim: true }, (err, addresses) => {
      if (err) return callback(err, '', 4);
      if (!localNames.has(hostname)) {
        for (const { address } of addresses) {
          const why = privateAddressReason(address);
          if (why)
            return callback(
              Object.assign(new Error(`${hostname} resolves to ${address}: ${why}`), { code: 'EPRIVATE' }),
              '',
              4,
            );
        }
      }
      if (options.all) (callback as unknown as (e: null, a: typeof addresses) => void)(null, addresses);
      else callback(null, addresses[0].address, addresses[0].family);
    });
  };
}
