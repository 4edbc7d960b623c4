import { createHash } from 'node:crypto';
import { mkdir, mkdtemp, rename, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type GitServer, startGitServer } from '../../server/gitServer.ts';
import { git } from './git.ts';

/** What builds a scratch repository: git commands run in a fresh working repository `work`. */
export type ScratchScript = (
  run: (args: string[], env?: Record<string, string>) => Promise<string>,
  work: string,
) => Promise<void>;

/**
 * Builds one bare repository `${dir}/root/repo.git` with `script` (`init` given `initArgs`), ready to serve
 * with filters and any wanted id.
 */
export async function buildScratchRepo(
  dir: string,
  initArgs: string[],
  script: ScratchScript,
): Promise<string> {
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
  return bare;
}

/**
 * The bare repository `script` builds, built once per machine and kept in the temp folder under a name of
 * the script's text and git's version: a test file a mutation run repeats for every mutant (stryker.config.mjs)
 * then pays for its git commands once. The script must give every commit its dates.
 */
export async function cachedScratchRepo(name: string, script: ScratchScript): Promise<string> {
  const key = createHash('sha1')
    .update(`${await git(['--version'])}\0${script.toString()}`)
    .digest('hex')
    .slice(0, 16);
  const kept = join(tmpdir(), `blobless-${name}-${key}`);
  const bare = join(kept, 'root', 'repo.git');
  if (await stat(bare).catch(() => null)) return bare;
  // Built aside and renamed into place: a run stopped halfway, or another building it, leaves no half repo.
  const dir = await mkdtemp(join(tmpdir(), `blobless-${name}-build-`));
  try {
    await buildScratchRepo(dir, [], script);
    await rm(join(dir, 'work'), { recursive: true, force: true });
    await rename(dir, kept).catch(async (e: NodeJS.ErrnoException) => {
      if (!(await stat(bare).catch(() => null))) throw e;
    });
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
  return bare;
}

/**
 * Builds one bare repository with `script` (buildScratchRepo), and serves it with the real `git http-backend`
 * at `${url}/repo.git`. For shapes the shared fixtures must not take (another object format, a detached remote
 * HEAD).
 */
export async function serveScratchRepo(
  dir: string,
  initArgs: string[],
  script: ScratchScript,
  opts: { acceptPushes?: boolean } = {},
): Promise<GitServer & { bare: string }> {
  const bare = await buildScratchRepo(dir, initArgs, script);
  const server = await startGitServer({
    root: join(dir, 'root'),
    receivePackRepos: opts.acceptPushes ? ['repo.git'] : [],
  });
  return Object.assign(server, { bare });
}
