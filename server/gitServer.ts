import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { stat } from 'node:fs/promises';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { createGzip, type Gzip } from 'node:zlib';
import { type BasicCredentials, basicAuthUser, matchesBasicAuth } from './basicAuth.ts';
import { parseCgiHead } from './cgiHead.ts';
import { setGitCorsHeaders } from './cors.ts';
import { GitServerError } from './errors.ts';
import { acceptsGzip, isRefListRequest } from './proxy/refListEncoding.ts';
import {
  emptyRepoStats,
  type RepoStats,
  RepoStatsTable,
  type ServerStats,
  STATS_PATH,
  STATS_RESET_PATH,
} from './repoStats.ts';

export type { BasicCredentials } from './basicAuth.ts';
export { type RepoStats, type ServerStats, STATS_PATH, STATS_RESET_PATH } from './repoStats.ts';

export interface GitServerOptions {
  /** A folder of bare repositories; `root/basic.git` is served at `/basic.git`. */
  root: string;
  /** 0 or omitted: any free port. */
  port?: number;
  /** Defaults to 127.0.0.1. */
  host?: string;
  /**
   * Repositories (paths relative to `root`, e.g. `v0.git`) served as a server that predates protocol v2:
   * the client's `Git-Protocol` header is not handed to git, so it answers in protocol v0.
   */
  v0Repos?: string[];
  /** Repositories that answer 401 unless the request carries these Basic credentials. */
  auth?: Record<string, BasicCredentials>;
  /**
   * Repositories that accept pushes. git http-backend refuses receive-pack unless `http.receivepack` is
   * true; the fixtures set it false, and this turns it on for one server without touching the repo config.
   * Pushing changes the repository on disk: serve a copy, never the fixture cache.
   */
  receivePackRepos?: string[];
  /**
   * Repositories holding trees git's pack-objects refuses to walk (hostile fixtures): their fetches get a
   * pack of every object listed by id (server/explicitPackHook.sh, as uploadpack.packObjectsHook, which
   * git reads only from protected config such as the command line's). upload-pack itself stays git's.
   */
  explicitPackRepos?: string[];
  /** One line per request on stderr. */
  log?: boolean;
  /**
   * Repositories that moved, old name to new (`{ 'renamed.git': 'basic.git' }`): every request under the
   * old name gets a 301 to the same path under the new one, as a host answers for a renamed repository.
   */
  moved?: Record<string, string>;
  /**
   * false: no CORS headers at all, and preflights answered 405, as GitHub's and GitLab's smart-HTTP
   * endpoints do; a page reaches such a server only through the CORS proxy. Default true.
   */
  cors?: boolean;
}

export interface GitServer {
  /** `http://127.0.0.1:PORT`, without a trailing slash. */
  url: string;
  port: number;
  stats(): ServerStats;
  stats(repo: string): RepoStats;
  resetStats(): void;
  close(): Promise<void>;
}

const MAX_CGI_HEAD_BYTES = 64 * 1024;
const EXPLICIT_PACK_HOOK = fileURLToPath(new URL('./explicitPackHook.sh', import.meta.url));
const MAX_STDERR_BYTES = 64 * 1024;

/**
 * Serves the bare repositories under `root` over git's smart HTTP protocol by running the real
 * `git http-backend` as a CGI script per request, so what the client talks to is git itself.
 */
export async function startGitServer(opts: GitServerOptions): Promise<GitServer> {
  const root = resolve(opts.root);
  const rootStat = await stat(root).catch(() => undefined);
  if (!rootStat?.isDirectory()) {
    throw new GitServerError(
      'SERVER_ROOT_MISSING',
      `The git server root ${root} is not a folder. Run \`npm run fixtures\` or pass --root with a folder of bare repositories.`,
    );
  }
  const httpBackend = await findHttpBackend();
  const v0Repos = new Set((opts.v0Repos ?? []).map(normalizeRepo));
  const receivePackRepos = new Set((opts.receivePackRepos ?? []).map(normalizeRepo));
  const explicitPackRepos = new Set((opts.explicitPackRepos ?? []).map(normalizeRepo));
  const auth = new Map(Object.entries(opts.auth ?? {}).map(([repo, creds]) => [normalizeRepo(repo), creds]));
  const table = new RepoStatsTable();
  const children = new Set<ChildProcess>();
  const log = opts.log ?? false;

  const server = createServer((req, res) => {
    const started = performance.now();
    let sent = 0;
    if (log) {
      res.on('close', () => {
        const ms = (performance.now() - started).toFixed(0);
        const aborted = res.writableFinished ? '' : ' (aborted)';
        process.stderr.write(`${req.method} ${req.url} ${res.statusCode} ${sent}B ${ms}ms${aborted}\n`);
      });
    }
    const countSent = (n: number) => {
      sent += n;
    };
    handle(req, res, countSent).catch((err: unknown) => {
      if (!res.headersSent) sendText(res, 500, `Internal error in the git server: ${errorMessage(err)}\n`);
      else res.destroy();
    });
  });

  async function handle(req: IncomingMessage, res: ServerResponse, countSent: (n: number) => void) {
    const cors = opts.cors ?? true;
    if (cors) setGitCorsHeaders(req, res);
    const url = new URL(req.url ?? '/', 'http://localhost');
    if (url.pathname === STATS_PATH || url.pathname === STATS_RESET_PATH) {
      handleStats(req, res, url.pathname);
      return;
    }

    const path = decodePath(url.pathname);
    const named = path === undefined ? undefined : repoOf(path);
    const repo = named !== undefined && (await isBareRepo(join(root, named))) ? named : undefined;
    if (req.method === 'OPTIONS' && !cors) {
      req.resume();
      res.writeHead(405, { Allow: 'GET, POST' }).end();
      return;
    }
    if (req.method === 'OPTIONS') {
      // Preflights pass even for missing repositories: a failed preflight reaches the page as a bare
      // network error, and the client should see the 404 of the real request instead.
      if (repo !== undefined) table.counters(repo).preflights++;
      req.resume();
      res.writeHead(204).end();
      return;
    }
    const movedTo = named === undefined ? undefined : opts.moved?.[named];
    if (path !== undefined && named !== undefined && movedTo !== undefined) {
      req.resume();
      const rest = path.slice(path.indexOf(named) + named.length);
      res.writeHead(301, { Location: `/${movedTo}${rest}${url.search}` }).end();
      return;
    }
    if (path === undefined || repo === undefined) {
      req.resume();
      countSent(sendText(res, 404, `No repository at ${url.pathname}\n`));
      return;
    }

    const counters = table.counters(repo);
    const count = (n: number) => {
      counters.bytesSent += n;
      countSent(n);
    };
    counters.requests++;
    if (req.method === 'POST' && path.endsWith('/git-receive-pack')) counters.pushes++;
    const countsFetch = req.method === 'POST' && path.endsWith('/git-upload-pack');
    let first = true;
    req.on('data', (chunk: Buffer) => {
      counters.bytesReceived += chunk.length;
      // gitprotocol-v2: a request opens with its command line; v0 POSTs to upload-pack are all fetches.
      if (countsFetch && first && !chunk.subarray(0, 24).toString('latin1').includes('command=ls-refs')) {
        counters.fetches++;
      }
      first = false;
    });
    if (req.method !== 'GET' && req.method !== 'POST') {
      req.resume();
      res.setHeader('Allow', 'GET, POST, OPTIONS');
      count(sendText(res, 405, `Method ${req.method} is not allowed\n`));
      return;
    }

    const creds = auth.get(repo);
    if (creds && !matchesBasicAuth(req.headers.authorization, creds)) {
      req.resume();
      res.setHeader('WWW-Authenticate', `Basic realm="Blobless test server: ${repo}", charset="UTF-8"`);
      count(sendText(res, 401, `Authentication required for ${repo}\n`));
      return;
    }

    // The command is known from the body's first bytes, so they are read before http-backend starts: it
    // writes its CGI headers before reading the body, and whether to gzip is decided on those headers.
    const opening =
      req.method === 'POST' && !req.headers['content-encoding'] ? await firstChunk(req) : undefined;
    runHttpBackend(req, res, {
      pathInfo: path,
      opening,
      gzip: acceptsGzip(req.headers['accept-encoding']) && isRefListRequest(req.method, path, opening),
      query: url.search.slice(1),
      remoteUser: creds ? basicAuthUser(req.headers.authorization) : undefined,
      passProtocol: !v0Repos.has(repo),
      allowReceivePack: receivePackRepos.has(repo),
      explicitPack: explicitPackRepos.has(repo),
      countSent: count,
    });
  }

  function runHttpBackend(
    req: IncomingMessage,
    res: ServerResponse,
    cgi: {
      pathInfo: string;
      /** The request body's first chunk, already read (firstChunk); the rest is still in `req`. */
      opening: Buffer | undefined;
      /** Gzip a 200 answer (a ref list, to a client that takes gzip: proxy/refListEncoding.ts). */
      gzip: boolean;
      query: string;
      remoteUser: string | undefined;
      passProtocol: boolean;
      allowReceivePack: boolean;
      explicitPack: boolean;
      countSent: (n: number) => void;
    },
  ) {
    const env = baseEnv();
    env.GIT_PROJECT_ROOT = root;
    env.GIT_HTTP_EXPORT_ALL = '1';
    env.PATH_INFO = cgi.pathInfo;
    env.QUERY_STRING = cgi.query;
    env.REQUEST_METHOD = req.method ?? 'GET';
    env.REMOTE_ADDR = req.socket.remoteAddress ?? '127.0.0.1';
    if (req.headers['content-type']) env.CONTENT_TYPE = req.headers['content-type'];
    // Without CONTENT_LENGTH http-backend reads the body to EOF, which is what a chunked request needs.
    if (req.headers['content-length']) env.CONTENT_LENGTH = req.headers['content-length'];
    // http-backend inflates gzip request bodies itself when told the encoding.
    if (req.headers['content-encoding']) env.HTTP_CONTENT_ENCODING = req.headers['content-encoding'];
    if (cgi.remoteUser) env.REMOTE_USER = cgi.remoteUser;
    const protocol = req.headers['git-protocol'];
    // gitprotocol-http: the Git-Protocol header reaches upload-pack as GIT_PROTOCOL; withholding it is
    // exactly what a server without protocol v2 looks like to the client.
    if (cgi.passProtocol && typeof protocol === 'string') env.GIT_PROTOCOL = protocol;
    const config: [string, string][] = [];
    if (cgi.allowReceivePack) config.push(['http.receivepack', 'true']);
    if (cgi.explicitPack) config.push(['uploadpack.packObjectsHook', EXPLICIT_PACK_HOOK]);
    env.GIT_CONFIG_COUNT = String(config.length);
    config.forEach(([key, value], i) => {
      env[`GIT_CONFIG_KEY_${i}`] = key;
      env[`GIT_CONFIG_VALUE_${i}`] = value;
    });

    // Its own process group, so one signal stops upload-pack and pack-objects too, not just http-backend.
    const child = spawn(httpBackend, [], { env, stdio: ['pipe', 'pipe', 'pipe'], detached: true });
    children.add(child);
    let stderr = '';
    let head: Buffer | undefined = Buffer.alloc(0);
    let failed = false;
    let gzip: Gzip | undefined;

    const fail = (message: string) => {
      if (failed) return;
      failed = true;
      killTree(child);
      gzip?.destroy();
      if (!res.headersSent) cgi.countSent(sendText(res, 500, message));
      else res.destroy();
    };

    // The client went away before the whole answer was written: stop the work it asked for.
    res.on('close', () => {
      if (!res.writableFinished) killTree(child);
    });
    child.on('error', (err) => fail(`Could not run git http-backend: ${err.message}\n`));
    child.stdin.on('error', () => {
      // http-backend may answer (e.g. 403) without reading the body; the broken pipe is expected then.
    });
    if (cgi.opening) child.stdin.write(cgi.opening);
    req.pipe(child.stdin);

    child.stderr.setEncoding('utf8');
    child.stderr.on('data', (text: string) => {
      if (stderr.length < MAX_STDERR_BYTES) stderr += text;
      if (log) process.stderr.write(`[http-backend] ${text}`);
    });

    child.stdout.on('data', (chunk: Buffer) => {
      if (failed) return;
      let body = chunk;
      if (head) {
        head = Buffer.concat([head, chunk]);
        const parsed = parseCgiHead(head);
        if (!parsed) {
          if (head.length > MAX_CGI_HEAD_BYTES) fail('git http-backend wrote no end to its CGI headers\n');
          return;
        }
        body = head.subarray(parsed.bodyStart);
        head = undefined;
        for (const [name, value] of parsed.headers) res.appendHeader(name, value);
        if (cgi.gzip) res.appendHeader('Vary', 'Accept-Encoding');
        if (cgi.gzip && parsed.status === 200) {
          gzip = gzipInto(res, cgi.countSent);
          res.removeHeader('Content-Length');
          res.setHeader('Content-Encoding', 'gzip');
        }
        res.writeHead(parsed.status, parsed.statusText);
      }
      if (body.length === 0) return;
      if (gzip) {
        if (!gzip.write(body)) {
          child.stdout.pause();
          gzip.once('drain', () => child.stdout.resume());
        }
        return;
      }
      cgi.countSent(body.length);
      if (!res.write(body)) {
        child.stdout.pause();
        res.once('drain', () => child.stdout.resume());
      }
    });

    child.on('close', (code, signal) => {
      children.delete(child);
      if (failed) return;
      if (head) {
        const why = signal ? `was killed by ${signal}` : `exited with code ${code}`;
        fail(`git http-backend ${why} before answering: ${stderr.trim() || 'no message'}\n`);
        return;
      }
      if (res.destroyed) return;
      if (gzip) gzip.end();
      else res.end();
    });
  }

  function handleStats(req: IncomingMessage, res: ServerResponse, path: string) {
    req.resume();
    if (req.method === 'OPTIONS') {
      res.writeHead(204).end();
    } else if (path === STATS_PATH && req.method === 'GET') {
      res.writeHead(200, { 'Content-Type': 'application/json', 'Cache-Control': 'no-store' });
      res.end(JSON.stringify(table.snapshot()));
    } else if (path === STATS_RESET_PATH && req.method === 'POST') {
      table.reset();
      res.writeHead(204).end();
    } else {
      res.setHeader('Allow', path === STATS_PATH ? 'GET, OPTIONS' : 'POST, OPTIONS');
      sendText(res, 405, `Method ${req.method} is not allowed on ${path}\n`);
    }
  }

  const host = opts.host ?? '127.0.0.1';
  await new Promise<void>((resolveListen, rejectListen) => {
    server.once('error', (err) =>
      rejectListen(
        new GitServerError(
          'SERVER_LISTEN_FAILED',
          `Could not listen on ${host}:${opts.port ?? 0}: ${err.message}`,
        ),
      ),
    );
    server.listen(opts.port ?? 0, host, () => resolveListen());
  });
  const port = (server.address() as AddressInfo).port;

  function stats(): ServerStats;
  function stats(repo: string): RepoStats;
  function stats(repo?: string): ServerStats | RepoStats {
    const snapshot = table.snapshot();
    if (repo === undefined) return snapshot;
    return snapshot.repos[normalizeRepo(repo)] ?? emptyRepoStats();
  }

  return {
    url: `http://${urlHost(host)}:${port}`,
    port,
    stats,
    resetStats: () => table.reset(),
    close: async () => {
      for (const child of children) killTree(child);
      const closed = new Promise<void>((resolveClose) => server.close(() => resolveClose()));
      // Keep-alive connections from git or fetch would otherwise hold close() open for seconds.
      server.closeAllConnections();
      await closed;
    },
  };
}

/**
 * The repository a request is for: the path up to and including its first `*.git` segment
 * (`/group/basic.git/info/refs` -> `group/basic.git`).
 */
export function repoOf(path: string): string | undefined {
  const segments = path.split('/').filter((s) => s !== '');
  if (segments.some((s) => s === '.' || s === '..' || s.includes('\\') || s.includes('\0'))) return undefined;
  const end = segments.findIndex((s) => s.endsWith('.git') && s.length > 4);
  return end < 0 ? undefined : segments.slice(0, end + 1).join('/');
}

/**
 * The request body's first chunk (undefined if it is empty), with the request paused after it so nothing
 * more is lost before it is piped on.
 */
function firstChunk(req: IncomingMessage): Promise<Buffer | undefined> {
  return new Promise((resolveChunk) => {
    const done = (chunk: Buffer | undefined) => {
      req.off('data', done);
      req.off('end', done);
      req.off('error', ended);
      if (chunk) req.pause();
      resolveChunk(chunk);
    };
    const ended = () => done(undefined);
    req.on('data', done);
    req.once('end', done);
    req.once('error', ended);
  });
}

/** A gzip stream whose output goes to `res` (counted as sent), ending it when the input ends. */
function gzipInto(res: ServerResponse, countSent: (n: number) => void): Gzip {
  const gzip = createGzip();
  gzip.on('data', (chunk: Buffer) => {
    countSent(chunk.length);
    if (!res.write(chunk)) {
      gzip.pause();
      res.once('drain', () => gzip.resume());
    }
  });
  gzip.on('end', () => res.end());
  gzip.on('error', () => res.destroy());
  return gzip;
}

/** Run the http-backend program itself: `git http-backend` would put a wrapper process in between. */
async function findHttpBackend(): Promise<string> {
  try {
    const { stdout } = await promisify(execFile)('git', ['--exec-path']);
    return join(stdout.trim(), 'git-http-backend');
  } catch (err) {
    throw new GitServerError(
      'SERVER_GIT_MISSING',
      `Could not run git, which serves the repositories: ${errorMessage(err)}`,
    );
  }
}

/**
 * Stops http-backend and everything it started. Closing our ends of the pipes as well means nothing is
 * left blocked writing to a reader that is gone.
 */
function killTree(child: ChildProcess): void {
  if (child.pid !== undefined && child.exitCode === null && child.signalCode === null) {
    try {
      process.kill(-child.pid, 'SIGKILL');
    } catch {
      child.kill('SIGKILL');
    }
  }
  child.stdout?.destroy();
  child.stdin?.destroy();
}

function normalizeRepo(repo: string): string {
  return repo.replace(/^\/+|\/+$/g, '');
}

function decodePath(pathname: string): string | undefined {
  try {
    return decodeURIComponent(pathname);
  } catch {
    return undefined;
  }
}

async function isBareRepo(dir: string): Promise<boolean> {
  const head = await stat(join(dir, 'HEAD')).catch(() => undefined);
  return head?.isFile() ?? false;
}

/**
 * The child's environment starts empty: inherited GIT_DIR, GIT_PROTOCOL and the like (set when tests run
 * from a git hook) would change what http-backend serves.
 */
function baseEnv(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const name of ['PATH', 'HOME', 'LANG', 'LC_ALL', 'TMPDIR', 'SYSTEMROOT']) {
    const value = process.env[name];
    if (value !== undefined) env[name] = value;
  }
  return env;
}

/** Writes a plain-text answer and returns the body's byte count, for the counters. */
function sendText(res: ServerResponse, status: number, text: string): number {
  const body = Buffer.from(text, 'utf8');
  res.writeHead(status, { 'Content-Type': 'text/plain; charset=utf-8', 'Content-Length': body.length });
  res.end(body);
  return body.length;
}

function urlHost(host: string): string {
  if (host === '0.0.0.0' || host === '::') return '127.0.0.1';
  return host.includes(':') ? `[${host}]` : host;
}

function errorMessage(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
