/**
 * A `fetch` whose answers are real git's: `git upload-pack --stateless-rpc` run on a bare repo of this machine
 * for each request, as git http-backend runs it (gitprotocol-http: the Git-Protocol header reaches it as
 * GIT_PROTOCOL), but with no HTTP server or CGI between. A test that fetches from it costs a few git processes
 * per request and no server: fast enough to run against every mutant of the fetch (stryker.config.mjs).
 */
import { spawn } from 'node:child_process';

/** One request the fetch answered: the service asked and the request body as text (empty for a GET). */
export interface UploadPackRequest {
  repo: string;
  what: 'info/refs' | 'git-upload-pack';
  body: string;
}

export interface UploadPackFetch {
  fetch: typeof globalThis.fetch;
  requests: UploadPackRequest[];
  /** The base URL: `${base}/<name>` is the bare repo `repoPath(name)`. */
  base: string;
}

function run(args: string[], env: Record<string, string>, input?: Uint8Array): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const child = spawn('git', args, { env: { ...process.env, ...env }, stdio: ['pipe', 'pipe', 'pipe'] });
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    child.stdout.on('data', (c: Buffer) => out.push(c));
    child.stderr.on('data', (c: Buffer) => err.push(c));
    child.on('error', reject);
    child.on('close', (code) =>
      code === 0
        ? resolve(Buffer.concat(out))
        : reject(new Error(`git ${args.join(' ')}: ${Buffer.concat(err).toString()}`)),
    );
    // The advertisement reads nothing: its stdin may close before the (empty) end is written.
    child.stdin.on('error', () => undefined);
    child.stdin.end(input);
  });
}

/**
 * Serves each bare repo `repoPath(name)` at `https://git.test/<name>` (name: one path segment); `env` is added
 * to upload-pack's environment (GIT_CONFIG_COUNT for the protected config a packObjectsHook needs).
 */
export function uploadPackFetch(
  repoPath: (name: string) => string,
  extraEnv: Record<string, string> = {},
): UploadPackFetch {
  const base = 'https://git.test';
  const requests: UploadPackRequest[] = [];
  const fetch = (async (input: RequestInfo | URL, init?: RequestInit) => {
    const url = new URL(input instanceof Request ? input.url : String(input));
    const match = /^\/([^/]+)\/(info\/refs|git-upload-pack)$/.exec(url.pathname);
    if (url.origin !== base || !match) return new Response(null, { status: 404 });
    // As http-backend: info/refs of another service (or none) is not upload-pack's advertisement.
    if (match[2] === 'info/refs' && url.searchParams.get('service') !== 'git-upload-pack')
      return new Response(null, { status: 403 });
    const [, name, what] = match as unknown as [string, string, UploadPackRequest['what']];
    const protocol = new Headers(init?.headers).get('Git-Protocol');
    const env: Record<string, string> = { ...extraEnv, ...(protocol ? { GIT_PROTOCOL: protocol } : {}) };
    const dir = repoPath(name);
    if (what === 'info/refs') {
      requests.push({ repo: name, what, body: '' });
      const ad = await run(['upload-pack', '--stateless-rpc', '--advertise-refs', dir], env);
      return new Response(new Uint8Array(ad), {
        headers: { 'Content-Type': 'application/x-git-upload-pack-advertisement' },
      });
    }
    const body = new Uint8Array(await new Response(init?.body).arrayBuffer());
    requests.push({ repo: name, what, body: Buffer.from(body).toString('latin1') });
    const answer = await run(['upload-pack', '--stateless-rpc', dir], env, body);
    return new Response(new Uint8Array(answer), {
      headers: { 'Content-Type': 'application/x-git-upload-pack-result' },
    });
  }) as typeof globalThis.fetch;
  return { fetch, requests, base };
}
