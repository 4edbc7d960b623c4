import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { type GitServer, startGitServer } from '../../server/gitServer.ts';
import { git } from './git.ts';

/**
 * Builds one bare repository with `script` (git commands run in a fresh working repository `work`, `init`
 * given `initArgs`), and serves it with the real `git http-backend` at `${url}/repo.git`. For shapes the shared
 * fixtures must not take (another object format, a detached remote HEAD).
 */
export async function serveScratchRepo(
  dir: string,
  initArgs: string[],
  script: (
    run: (args: string[], env?: Record<string, string>) => Promise<string>,
    work: string,
  ) => Promise<void>,
  opts: { acceptPushes?: boolean } = {},
): Promise<GitServer & { bare: string }> {
  const work = join(dir, 'work');
  const root = join(dir, 'root');
  await mkdir(root, { recursive: true });
  const env = { GIT_CONFIG_GLOBAL: '/dev/null', GIT_CONFIG_NOSYSTEM: '1' };
  await git(['init', '-q', '-b', 'main', ...initArgs, work], { env });
  // `more` adds to the environment of one command (GIT_COMMITTER_DATE: the order blame walks in).
  const run = (args: string[], more: Record<string, string> = {}) =>
    git(['-c', 'user.name=Ada Fixture', '-c', 'user.email=ada@fixtures.blobless.test', ...args], {
      cwd: work,
      env: { ...env, ...more },
    });
  await script(run, work);
  const bare = join(root, 'repo.git');
  await git(['clone', '-q', '--bare', '--no-local', work, bare], { env });
  await git(['config', 'uploadpack.allowFilter', 'true'], { cwd: bare, env });
  await git(['config', 'uploadpack.allowAnySHA1InWant', 'true'], { cwd: bare, env });
  const server = await startGitServer({ root, receivePackRepos: opts.acceptPushes ? ['repo.git'] : [] });
  return Object.assign(server, { bare });
}
