import { cp, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { inject } from 'vitest';
import { type GitServer, type GitServerOptions, startGitServer } from '../../server/gitServer.ts';
import { git } from './git.ts';

/**
 * Tests that change repositories on the server (new commits, a rewritten history) serve copies of the
 * fixtures from a temporary folder with a git server of their own, so the shared fixtures stay as they are
 * and the byte counters count only this file's requests.
 */
export interface ServedCopies {
  server: GitServer;
  /** `http://127.0.0.1:PORT/<name>`. */
  url(name: string): string;
  /** The bare repository on disk. */
  path(name: string): string;
  /** Copies fixture `fixture` (e.g. `basic.git`) to `name` on this server. */
  copy(fixture: string, name: string): Promise<string>;
  /** Body bytes both ways for `name` since the server started, as the bench's no-op fetch cell counts a fetch. */
  bytes(name: string): number;
  close(): Promise<void>;
}

export async function serveCopies(options: Partial<GitServerOptions> = {}): Promise<ServedCopies> {
  const root = await mkdtemp(join(tmpdir(), 'blobless-served-'));
  const server = await startGitServer({ ...options, root });
  const fixturesDir = inject('fixturesDir');
  return {
    server,
    url: (name) => `${server.url}/${name}`,
    path: (name) => join(root, name),
    async copy(fixture, name) {
      await cp(join(fixturesDir, fixture), join(root, name), { recursive: true });
      return `${server.url}/${name}`;
    },
    bytes(name) {
      const s = server.stats(name);
      return s.bytesSent + s.bytesReceived;
    },
    async close() {
      await server.close();
      await rm(root, { recursive: true, force: true });
    },
  };
}

// Fixed identities and dates, so every run makes the same objects.
const IDENTITY = {
  GIT_AUTHOR_NAME: 'Server Side',
  GIT_AUTHOR_EMAIL: 'server@fixtures.blobless.test',
  GIT_COMMITTER_NAME: 'Server Side',
  GIT_COMMITTER_EMAIL: 'server@fixtures.blobless.test',
};
let clock = 1_800_000_000;

function dated(): Record<string, string> {
  clock += 60;
  return { ...IDENTITY, GIT_AUTHOR_DATE: `${clock} +0000`, GIT_COMMITTER_DATE: `${clock} +0000` };
}

/**
 * Commits on a bare repository as a push would leave it: a work tree at `branch` (or a new branch from
 * `from`), the files written (null deletes), committed, pushed back. Returns the new commit id.
 */
export async function commitOnServer(
  bare: string,
  change: { branch: string; from?: string; files: Record<string, string | null>; message: string },
): Promise<string> {
  const work = await mkdtemp(join(tmpdir(), 'blobless-work-'));
  try {
    await git(['clone', '-q', '--no-local', bare, work]);
    const start = change.from ?? `origin/${change.branch}`;
    await git(['checkout', '-q', '-B', change.branch, start], { cwd: work });
    const { mkdir, writeFile, rm: remove } = await import('node:fs/promises');
    for (const [path, content] of Object.entries(change.files)) {
      const full = join(work, path);
      if (content === null) await remove(full, { force: true });
      else {
        await mkdir(join(full, '..'), { recursive: true });
        await writeFile(full, content);
      }
    }
    await git(['add', '-A'], { cwd: work });
    await git(['commit', '-q', '--allow-empty', '-m', change.message], { cwd: work, env: dated() });
    await git(['push', '-q', '-f', 'origin', `HEAD:refs/heads/${change.branch}`], { cwd: work });
    return (await git(['rev-parse', 'HEAD'], { cwd: work })).trim();
  } finally {
    await rm(work, { recursive: true, force: true });
  }
}

/** `git <args>` in the bare repository with the fixed identity and the next date (tags, resets). */
export async function gitOnServer(bare: string, args: string[]): Promise<string> {
  return git(args, { cwd: bare, env: dated() });
}

/** A chain of `count` commits on top of `parent` (each adds a line to `chain-<label>.txt`), made with one
 * `git fast-import`; returns the tip. */
export async function commitChain(
  bare: string,
  parent: string,
  count: number,
  label: string,
): Promise<string> {
  const ref = `refs/blobless-chain/${label}`;
  let stream = '';
  let content = '';
  for (let i = 1; i <= count; i++) {
    clock += 60;
    const message = `${label} ${i}\n`;
    content += `${label} ${i}\n`;
    stream += `commit ${ref}\nmark :${i}\n`;
    stream += `committer ${IDENTITY.GIT_COMMITTER_NAME} <${IDENTITY.GIT_COMMITTER_EMAIL}> ${clock} +0000\n`;
    stream += `data ${Buffer.byteLength(message)}\n${message}`;
    stream += i === 1 ? `from ${parent}\n` : `from :${i - 1}\n`;
    stream += `M 100644 inline chain-${label}.txt\ndata ${Buffer.byteLength(content)}\n${content}\n`;
  }
  const { execFile } = await import('node:child_process');
  await new Promise<void>((resolve, reject) => {
    const child = execFile('git', ['fast-import', '--quiet'], { cwd: bare }, (err) =>
      err ? reject(err) : resolve(),
    );
    child.stdin!.end(stream);
  });
  const tip = (await git(['rev-parse', ref], { cwd: bare })).trim();
  await git(['update-ref', '-d', ref], { cwd: bare });
  return tip;
}
