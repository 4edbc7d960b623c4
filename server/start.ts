import { existsSync } from 'node:fs';
import { cp, mkdtemp, rm } from 'node:fs/promises';
import { createServer, type ServerResponse } from 'node:http';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import sirv from 'sirv';
import { contentSecurityPolicy, LOCAL_HTTP } from './csp.ts';
import { fixtureServerOptions } from './fixtures/fixtureServerOptions.ts';
import { ensureFixtures } from './fixtures/index.ts';
import { startGitServer } from './gitServer.ts';
import { startCorsProxy } from './proxy/nodeProxy.ts';

/**
 * `npm start`: the built app and a git server with the generated demo repos, on two localhost origins
 * (so the browser really makes cross-origin git requests, as it will against any real host).
 */
const { values } = parseArgs({
  options: {
    'app-port': { type: 'string', default: process.env.APP_PORT ?? '8080' },
    'git-port': { type: 'string', default: process.env.GIT_PORT ?? '8081' },
    'proxy-port': { type: 'string', default: process.env.PROXY_PORT ?? '8082' },
    /** A second git server that accepts pushes, serving fresh copies of PUSH_FIXTURES. */
    'push-port': { type: 'string', default: process.env.PUSH_PORT ?? '8083' },
    /** Where those copies go (emptied first); a new temporary folder when omitted. */
    'push-root': { type: 'string', default: process.env.PUSH_ROOT },
    host: { type: 'string', default: '127.0.0.1' },
  },
});

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const dist = join(root, 'dist');
if (!existsSync(join(dist, 'index.html'))) {
  console.error('No built app in dist/. Run `npm run build` first (npm start does).');
  process.exit(1);
}

const fixtures = await ensureFixtures();
const git = await startGitServer({
  ...fixtureServerOptions(fixtures.dir),
  port: Number(values['git-port']),
  host: values.host,
});

// Pushing changes a repository: the push server gets its own copies, made anew at every start, never the
// fixture cache the other server and the tests read.
const PUSH_FIXTURES = ['basic.git', 'features.git'];
const pushRoot = values['push-root'] ?? (await mkdtemp(join(tmpdir(), 'blobless-push-')));
await rm(pushRoot, { recursive: true, force: true });
for (const repo of PUSH_FIXTURES)
  await cp(join(fixtures.dir, repo), join(pushRoot, repo), { recursive: true });
const pushGit = await startGitServer({
  root: pushRoot,
  receivePackRepos: PUSH_FIXTURES,
  port: Number(values['push-port']),
  host: values.host,
});

// Real hosts are reached over https; the demo server is this machine's, so it is named as a local host.
const proxy = await startCorsProxy({
  port: Number(values['proxy-port']),
  host: values.host,
  localHosts: [new URL(git.url).host, new URL(pushGit.url).host],
  allowedOrigins: [`http://localhost:${values['app-port']}`, `http://127.0.0.1:${values['app-port']}`],
});

// The header repeats index.html's meta policy with the configured hosts named exactly (both apply, so the
// stricter wins), adds what a meta cannot carry (frame-ancestors), and covers the worker scripts, whose
// policy comes from their own response rather than the page's meta.
// Local http on any port too: this is a machine's own demo server, from which people also clone what
// `npm run serve:git` serves on another port (and the tests, their relays).
const connect = [git.url, proxy.url, ...LOCAL_HTTP];
const appPolicy = contentSecurityPolicy({ connect, frameAncestors: "'none'" });
// The widget's page is made to be framed by other sites; `/embed` is sirv's extension-less name for it.
const embedPolicy = contentSecurityPolicy({ connect, frameAncestors: '*' });
const assets = sirv(dist, {
  single: true,
  etag: true,
  gzip: true,
  setHeaders: (res, pathname) => {
    cacheHeaders(res, pathname);
    const embed = pathname === '/embed.html' || pathname === '/embed';
    res.setHeader('Content-Security-Policy', embed ? embedPolicy : appPolicy);
    res.setHeader('X-Content-Type-Options', 'nosniff');
  },
});
// The app asks for this at start: the CORS proxy to fall back on when a host refuses direct requests.
const config = JSON.stringify({ corsProxy: proxy.url });
const app = createServer((req, res) => {
  if (req.url === '/config.json') {
    res.writeHead(200, { 'Content-Type': 'application/json', 'Cache-Control': 'no-store' });
    res.end(config);
    return;
  }
  assets(req, res);
});
await new Promise<void>((resolve) => app.listen(Number(values['app-port']), values.host, resolve));
const appUrl = `http://${values.host === '127.0.0.1' ? 'localhost' : values.host}:${values['app-port']}`;
// The demo the printed URL opens is a writable copy, so the first push a newcomer tries goes through.
const demo = `${pushGit.url}/features.git`;

console.log(`Git server: ${git.url} (repos: ${fixtures.repos.join(', ')})`);
console.log(`Push server: ${pushGit.url} (fresh copies of ${PUSH_FIXTURES.join(', ')} in ${pushRoot})`);
console.log(`CORS proxy: ${proxy.url}/<host>/<repo path> (git smart-HTTP only)`);
console.log(
  `\nBlobless is running. Open (a demo repository you can push to, copied afresh at every start):\n\n  ${appUrl}/?clone=${encodeURIComponent(demo)}\n`,
);

/**
 * Hashed build files never change under their name; everything else (the service worker above all, which
 * decides when a new version arrives, and index.html, which names the hashed files) is revalidated on
 * every request.
 */
function cacheHeaders(res: ServerResponse, pathname: string): void {
  res.setHeader(
    'Cache-Control',
    pathname.startsWith('/assets/') ? 'public, max-age=31536000, immutable' : 'no-cache',
  );
}

function shutdown() {
  app.close();
  void proxy.close();
  void pushGit.close();
  void git.close().then(() => process.exit(0));
}
process.on('SIGINT', shutdown);
process.on('SIGTERM', shutdown);
