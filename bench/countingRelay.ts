import {
  createServer,
  Agent as HttpAgent,
  request as httpRequest,
  type IncomingHttpHeaders,
  type IncomingMessage,
  type ServerResponse,
} from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import type { AddressInfo } from 'node:net';
import { setGitCorsHeaders } from '../server/cors.ts';

/** What one phase cost on the wire, as the relay saw it. */
export interface PhaseStats {
  /** Requests forwarded upstream (GET and POST), whatever their status. */
  requests: number;
  /** CORS preflights, answered by the relay itself and never forwarded. */
  preflights: number;
  /** Response body bytes written to the client (as upstream sent them, compressed or not). */
  bytesSent: number;
  /** Request body bytes received from the client. */
  bytesReceived: number;
}

export interface CountingRelay {
  /** `http://127.0.0.1:PORT`: a repository `upstream/x.git` is reached at `url/x.git`. */
  url: string;
  /** The upstream origin every request is forwarded to. */
  upstream: string;
  /** Maps an upstream repository URL to the same repository through the relay. */
  relayed(upstreamUrl: string): string;
  /** Requests that start from now on are counted under `name`, until the next call. */
  setPhase(name: string): void;
  stats(name: string): PhaseStats;
  /** Resolves once every request started so far has finished, so a phase's counts are final. */
  idle(): Promise<void>;
  close(): Promise<void>;
}

export function emptyPhaseStats(): PhaseStats {
  return { requests: 0, preflights: 0, bytesSent: 0, bytesReceived: 0 };
}

// RFC 9110 7.6.1: connection-specific headers describe one hop and are not forwarded.
const HOP_BY_HOP = new Set([
  'connection',
  'keep-alive',
  'proxy-authenticate',
  'proxy-authorization',
  'proxy-connection',
  'te',
  'trailer',
  'transfer-encoding',
  'upgrade',
  'host',
]);

/**
 * An HTTP relay the benchmark puts in front of every git server, its own fixture server included, so the
 * git CLI, isomorphic-git and Blobless are counted by one meter: requests and body bytes per phase. It
 * streams both ways (a pack is never held whole) and answers CORS itself, so a page can reach a server
 * that knows nothing of browsers.
 */
export async function startCountingRelay(opts: { upstream: string; port?: number }): Promise<CountingRelay> {
  const upstream = new URL(opts.upstream);
  if (upstream.protocol !== 'http:' && upstream.protocol !== 'https:') {
    throw new Error(
      `The relay forwards http:// and https:// only, not ${upstream.protocol} (${opts.upstream}).`,
    );
  }
  const secure = upstream.protocol === 'https:';
  const agent = secure ? new HttpsAgent({ keepAlive: true }) : new HttpAgent({ keepAlive: true });
  const phases = new Map<string, PhaseStats>();
  let phase = 'default';
  const inFlight = new Set<Promise<void>>();

  const countersFor = (name: string) => {
    let stats = phases.get(name);
    if (!stats) {
      stats = emptyPhaseStats();
      phases.set(name, stats);
    }
    return stats;
  };

  const server = createServer((req, res) => {
    // A request belongs to the phase it started in, even if it ends after the next one began.
    const counters = countersFor(phase);
    const done = new Promise<void>((resolveDone) => {
      res.on('close', resolveDone);
    });
    inFlight.add(done);
    done.then(() => inFlight.delete(done));
    setGitCorsHeaders(req, res, { echoRequestedHeaders: true });
    if (req.method === 'OPTIONS') {
      counters.preflights++;
      req.resume();
      res.writeHead(204).end();
      return;
    }
    counters.requests++;
    forward(req, res, counters);
  });

  function forward(req: IncomingMessage, res: ServerResponse, counters: PhaseStats) {
    const target = new URL(req.url ?? '/', upstream);
    const send = secure ? httpsRequest : httpRequest;
    const upstreamReq = send(target, {
      method: req.method,
      headers: forwardedHeaders(req.headers, upstream),
      agent,
    });
    upstreamReq.on('response', (upstreamRes) => {
      const headers: Record<string, string | string[]> = {};
      for (const [name, value] of Object.entries(upstreamRes.headers)) {
        // The relay's own CORS answer stands: the upstream may know nothing of browsers.
        if (value === undefined || HOP_BY_HOP.has(name) || name.startsWith('access-control-')) continue;
        headers[name] = value;
      }
      res.writeHead(upstreamRes.statusCode ?? 502, upstreamRes.statusMessage, headers);
      upstreamRes.on('data', (chunk: Buffer) => {
        counters.bytesSent += chunk.length;
        if (!res.write(chunk)) {
          upstreamRes.pause();
          res.once('drain', () => upstreamRes.resume());
        }
      });
      upstreamRes.on('end', () => res.end());
      upstreamRes.on('error', () => res.destroy());
    });
    upstreamReq.on('error', (err) => {
      if (res.headersSent) {
        res.destroy();
        return;
      }
      const body = Buffer.from(`The counting relay could not reach ${target.origin}: ${err.message}\n`);
      res.writeHead(502, { 'Content-Type': 'text/plain; charset=utf-8', 'Content-Length': body.length });
      res.end(body);
    });
    // The client went away (a worker was terminated at its time cap): stop the upstream work too.
    res.on('close', () => {
      if (!res.writableFinished) upstreamReq.destroy();
    });
    req.on('data', (chunk: Buffer) => {
      counters.bytesReceived += chunk.length;
    });
    req.pipe(upstreamReq);
  }

  await new Promise<void>((resolveListen, rejectListen) => {
    server.once('error', rejectListen);
    server.listen(opts.port ?? 0, '127.0.0.1', () => resolveListen());
  });
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  return {
    url,
    upstream: upstream.origin,
    relayed(upstreamUrl: string) {
      const u = new URL(upstreamUrl);
      if (u.origin !== upstream.origin) {
        throw new Error(`${upstreamUrl} is not on ${upstream.origin}, the origin this relay forwards to.`);
      }
      return `${url}${u.pathname}${u.search}`;
    },
    setPhase(name: string) {
      phase = name;
    },
    stats(name: string) {
      return { ...(phases.get(name) ?? emptyPhaseStats()) };
    },
    async idle() {
      while (inFlight.size > 0) await Promise.all([...inFlight]);
    },
    async close() {
      const closed = new Promise<void>((resolveClose) => server.close(() => resolveClose()));
      server.closeAllConnections();
      agent.destroy();
      await closed;
    },
  };
}

function forwardedHeaders(headers: IncomingHttpHeaders, upstream: URL): Record<string, string | string[]> {
  const out: Record<string, string | string[]> = {};
  for (const [name, value] of Object.entries(headers)) {
    // Git-Protocol, Content-Type, Content-Encoding, Authorization and Accept pass unchanged; Origin too,
    // so an upstream that checks it sees the page's.
    if (value !== undefined && !HOP_BY_HOP.has(name)) out[name] = value;
  }
  out.host = upstream.host;
  return out;
}
