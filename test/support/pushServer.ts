import { cp, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { inject } from 'vitest';
import { type GitServer, startGitServer } from '../../server/gitServer.ts';

export interface PushServer {
  server: GitServer;
  /** The writable bare repositories, by name: what the git CLI checks after a push. */
  bare(repo: string): string;
  url(repo: string): string;
  close(): Promise<void>;
}

/**
 * A git server that accepts pushes, serving fresh copies of the named fixtures (pushing changes a
 * repository: never the shared fixture cache). Its counters are read in-process: `server.stats(repo)`.
 */
export async function startPushServer(repos: string[]): Promise<PushServer> {
  const fixturesDir = inject('fixturesDir');
  const root = await mkdtemp(join(tmpdir(), 'blobless-push-'));
  for (const repo of repos) await cp(join(fixturesDir, repo), join(root, repo), { recursive: true });
  const server = await startGitServer({ root, receivePackRepos: repos });
  return {
    server,
    bare: (repo) => join(root, repo),
    url: (repo) => `${server.url}/${repo}`,
    close: async () => {
      await server.close();
      await rm(root, { recursive: true, force: true });
    },
  };
}
