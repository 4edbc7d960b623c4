import { createServer, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { setGitCorsHeaders } from '../../server/cors.ts';

export interface RedirectRule {
  /** Path prefix on this server, e.g. `/moved.git/`. */
  from: string;
  /** What the prefix becomes: an absolute URL prefix (`http://host/new.git/`) or a path on this server. */
  to: string;
  status?: 301 | 302 | 303 | 307 | 308;
  /** Which requests are redirected; the others are relayed to `relayTo` (default: all are redirected). */
  only?: 'GET' | 'POST';
}

export interface SeenRequest {
  method: string;
  url: string;
  /** Whether the request carried an Authorization header: a redirect must not carry a token elsewhere. */
  authorization: boolean;
}

export interface RedirectServer {
  url: string;
  host: string;
  /** Every request this server answered, in order. */
  seen: SeenRequest[];
  close(): Promise<void>;
}

/**
 * A host that moved a repository, in front of the real git server: it answers matching requests with a
 * 30x and a Location, and relays any other request to `relayTo` unchanged (so a same-origin move works).
 */
export async function startRedirectServer(rules: RedirectRule[], relayTo?: string): Promise<RedirectServer> {
  const seen: SeenRequest[] = [];
  const server: Server = createServer((req, res) => {
    const url = req.url ?? '/';
    seen.push({ method: req.method ?? '', url, authorization: !!req.headers.authorization });
    setGitCorsHeaders(req, res);
    if (req.method === 'OPTIONS') {
      res.writeHead(204);
      res.end();
      return;
    }
    const rule = rules.find((r) => url.startsWith(r.from) && (!r.only || r.only === req.method));
    if (rule) {
      req.resume();
      res.writeHead(rule.status ?? 301, { Location: rule.to + url.slice(rule.from.length) });
      res.end();
      return;
    }
    if (!relayTo) {
      req.resume();
      res.writeHead(404, { 'Content-Type': 'text/plain' });
      res.end('no such repository\n');
      return;
    }
    const upstream = new URL(relayTo);
    const up = request(
      {
        host: upstream.hostname,
        port: upstream.port,
        method: req.method,
        path: url,
        headers: { ...req.headers, host: upstream.host },
      },
      (upRes) => {
        res.writeHead(upRes.statusCode ?? 502, upRes.headers);
        upRes.pipe(res);
      },
    );
    up.on('error', () => res.destroy());
    req.pipe(up);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    host: `127.0.0.1:${port}`,
    seen,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
