// Which requests the proxy forwards, and where. Web-standard only: the core runs on Node, Deno and Workers.

/** gitprotocol-http: the two services a smart-HTTP client asks for. */
export type GitService = 'git-upload-pack' | 'git-receive-pack';
const SERVICES = new Set<string>(['git-upload-pack', 'git-receive-pack']);

export interface GitTarget {
  /** `host[:port]` as the request named it. */
  host: string;
  /** The host without brackets (`::1`) or port. */
  hostname: string;
  port: number | undefined;
  /** The path (and for info/refs the one `service` query) to ask the git host for. */
  path: string;
  service: GitService;
  /** `info/refs` (the advertisement GET) or the service's POST. */
  kind: 'advertisement' | 'command';
}

/**
 * `/<host[:port]>/<repo path>/info/refs?service=…` (GET) or `/<host>/<repo path>/git-upload-pack` (POST),
 * nothing else: the only requests a smart-HTTP client makes (gitprotocol-http), so the proxy is no
 * general relay. `pathAndQuery` is relative to where the proxy is mounted.
 */
export function parseTarget(method: string, pathAndQuery: string): GitTarget | null {
  const url = new URL(pathAndQuery, 'http://proxy.invalid');
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
    return {
      host,
      hostname,
      port,
      path: `${path}?service=${service}`,
      service: service as GitService,
      kind: 'advertisement',
    };
  }
  if (method === 'POST' && !url.search) {
    const service = path.slice(path.lastIndexOf('/') + 1);
    if (SERVICES.has(service) && path.length > service.length + 1)
      return { host, hostname, port, path, service: service as GitService, kind: 'command' };
  }
  return null;
}

/**
 * The only `Content-Type` a successful answer to this request may have (gitprotocol-http: "Smart
 * Clients", "Smart Service git-upload-pack"): anything else is not git, and is not passed on.
 */
export function gitContentType(target: GitTarget): string {
  return `application/x-${target.service}-${target.kind === 'advertisement' ? 'advertisement' : 'result'}`;
}

/**
 * A git host's `Location`, as a path on this proxy (`<basePath>/<host>/<path>`), so the browser's next
 * request comes back through it. Relative to the proxy's own address, so it holds wherever it is served.
 */
export function redirectThroughProxy(
  requested: string,
  location: string | null | undefined,
  basePath = '',
): { location: string; host: string } | null {
  if (!location) return null;
  let to: URL;
  try {
    to = new URL(location, requested);
  } catch {
    return null;
  }
  if ((to.protocol !== 'https:' && to.protocol !== 'http:') || to.username || to.password) return null;
  return { location: `${basePath}/${to.host}${to.pathname}${to.search}`, host: to.host };
}
