/**
 * Test support, Node only: real git as the oracle for the wire layer. Builds small repositories with git
 * commands and answers requests with `git http-backend` run by hand as a CGI program, exactly as a web
 * server would run it. Never imported by runtime code.
 */

import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export type CgiResponse = { headers: string; body: Uint8Array };

export type GitOracle = {
  root: string;
  /** Runs git with a clean, fixed environment; returns stdout. Throws with stderr on failure. */
  git(args: string[], options?: { cwd?: string; env?: Record<string, string> }): string;
  /** Like `git`, but returns stderr too and does not throw (for traces). */
  gitRaw(
    args: string[],
    options?: { cwd?: string; env?: Record<string, string> },
  ): { status: number | null; stdout: string; stderr: string };
  /** GET /<repo>/info/refs?service=git-upload-pack with the given Git-Protocol value (none for v0). */
  infoRefs(repo: string, gitProtocol?: string): CgiResponse;
  /** POST /<repo>/git-upload-pack with a request body, as protocol v2. */
  uploadPack(repo: string, request: Uint8Array): CgiResponse;
  cleanup(): void;
};

const FIXED_DATE = '1700000000 +0000';

export function createGitOracle(): GitOracle {
  const root = mkdtempSync(join(tmpdir(), 'blobless-wire-'));
  const baseEnv: Record<string, string> = {
    PATH: process.env.PATH ?? '/usr/bin:/bin',
    HOME: root,
    // Keep the machine's own git configuration out of the oracle.
    GIT_CONFIG_NOSYSTEM: '1',
    GIT_CONFIG_GLOBAL: join(root, 'gitconfig'),
    LANG: 'C',
    LC_ALL: 'C',
    GIT_AUTHOR_NAME: 'Wire Test',
    GIT_AUTHOR_EMAIL: 'wire@example.com',
    GIT_COMMITTER_NAME: 'Wire Test',
    GIT_COMMITTER_EMAIL: 'wire@example.com',
    GIT_AUTHOR_DATE: FIXED_DATE,
    GIT_COMMITTER_DATE: FIXED_DATE,
  };
  writeFileSync(join(root, 'gitconfig'), '[init]\n\tdefaultBranch = main\n');

  const gitRaw: GitOracle['gitRaw'] = (args, options = {}) => {
    const result = spawnSync('git', args, {
      cwd: options.cwd ?? root,
      env: { ...baseEnv, ...options.env },
      encoding: 'utf8',
      maxBuffer: 64 * 1024 * 1024,
    });
    return { status: result.status, stdout: result.stdout, stderr: result.stderr };
  };

  const git: GitOracle['git'] = (args, options) => {
    const result = gitRaw(args, options);
    if (result.status !== 0) throw new Error(`git ${args.join(' ')} failed: ${result.stderr}`);
    return result.stdout;
  };

  const httpBackend = (env: Record<string, string>, input?: Uint8Array): CgiResponse => {
    const result = spawnSync('git', ['http-backend'], {
      env: { ...baseEnv, GIT_PROJECT_ROOT: root, GIT_HTTP_EXPORT_ALL: '1', ...env },
      input,
      maxBuffer: 256 * 1024 * 1024,
    });
    const out = new Uint8Array(result.stdout);
    // CGI output: headers, a blank line (CRLF CRLF), then the body as the client would receive it.
    const split = Buffer.from(out).indexOf('\r\n\r\n');
    if (split < 0) throw new Error(`git http-backend wrote no CGI headers: ${result.stderr.toString()}`);
    return { headers: Buffer.from(out.subarray(0, split)).toString('latin1'), body: out.subarray(split + 4) };
  };

  return {
    root,
    git,
    gitRaw,
    infoRefs: (repo, gitProtocol) =>
      httpBackend({
        REQUEST_METHOD: 'GET',
        PATH_INFO: `/${repo}/info/refs`,
        QUERY_STRING: 'service=git-upload-pack',
        ...(gitProtocol === undefined ? {} : { GIT_PROTOCOL: gitProtocol }),
      }),
    uploadPack: (repo, request) =>
      httpBackend(
        {
          REQUEST_METHOD: 'POST',
          PATH_INFO: `/${repo}/git-upload-pack`,
          CONTENT_TYPE: 'application/x-git-upload-pack-request',
          CONTENT_LENGTH: String(request.length),
          GIT_PROTOCOL: 'version=2',
        },
        request,
      ),
    cleanup: () => rmSync(root, { recursive: true, force: true }),
  };
}

export type FixtureRepos = {
  /** Bare repo `full.git`: three commits on main (the last adds a 300 KB incompressible file), an annotated
   * tag v1.0 and a lightweight tag `light`; partial clone allowed. */
  full: string;
  /** Bare repo `empty.git`: no commits, HEAD -> refs/heads/main. */
  empty: string;
  commits: { first: string; second: string; third: string };
  tag: { oid: string; peeled: string };
};

/** Makes the fixture repositories with plain git commands, so the fixture documents how it was made. */
export function makeFixtureRepos(oracle: GitOracle): FixtureRepos {
  const { root, git } = oracle;
  const work = join(root, 'work');
  git(['init', '-q', '--bare', 'full.git']);
  git(['-C', 'full.git', 'config', 'uploadpack.allowFilter', 'true']);
  git(['init', '-q', '--bare', 'empty.git']);
  git(['init', '-q', 'work']);
  writeFileSync(join(work, 'README.md'), 'hello\n');
  git(['add', '.'], { cwd: work });
  git(['commit', '-q', '-m', 'first'], { cwd: work });
  mkdirSync(join(work, 'src'));
  writeFileSync(join(work, 'src', 'a.txt'), 'a\n');
  git(['add', '.'], { cwd: work });
  git(['commit', '-q', '-m', 'second'], { cwd: work });
  git(['tag', 'light'], { cwd: work });
  // Incompressible, so the pack needs several maximum-size (65520-byte) pkt-lines.
  writeFileSync(join(work, 'big.bin'), pseudoRandomBytes(300_000, 42));
  git(['add', '.'], { cwd: work });
  git(['commit', '-q', '-m', 'third'], { cwd: work });
  git(['tag', '-a', 'v1.0', '-m', 'release'], { cwd: work });
  git(['push', '-q', join(root, 'full.git'), 'main', 'v1.0', 'light'], { cwd: work });
  const revParse = (rev: string) => git(['rev-parse', rev], { cwd: work }).trim();
  return {
    full: 'full.git',
    empty: 'empty.git',
    commits: { first: revParse('HEAD~2'), second: revParse('HEAD~1'), third: revParse('HEAD') },
    tag: { oid: revParse('v1.0'), peeled: revParse('v1.0^{}') },
  };
}

/** Deterministic bytes that do not compress (xorshift32). */
export function pseudoRandomBytes(length: number, seed: number): Uint8Array {
  const out = new Uint8Array(length);
  let state = seed >>> 0 || 1;
  for (let i = 0; i < length; i++) {
    state ^= state << 13;
    state ^= state >>> 17;
    state ^= state << 5;
    out[i] = state & 0xff;
  }
  return out;
}

/** Splits bytes into chunks at the given offsets (sorted, within range). */
export function splitAt(bytes: Uint8Array, offsets: number[]): Uint8Array[] {
  const chunks: Uint8Array[] = [];
  let start = 0;
  for (const offset of offsets) {
    chunks.push(bytes.subarray(start, offset));
    start = offset;
  }
  chunks.push(bytes.subarray(start));
  return chunks;
}

export async function* asStream(chunks: Uint8Array[]): AsyncGenerator<Uint8Array> {
  for (const chunk of chunks) yield chunk;
}

export async function collect<T>(iterable: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const item of iterable) out.push(item);
  return out;
}
