import { execFile } from 'node:child_process';
import { promisify } from 'node:util';

const run = promisify(execFile);

/** Runs the real git CLI, the tests' oracle. Returns stdout as text; `input` is written to its stdin. */
export async function git(
  args: string[],
  opts: { cwd?: string; env?: Record<string, string>; input?: string } = {},
): Promise<string> {
  const child = run('git', args, {
    cwd: opts.cwd,
    env: { ...process.env, GIT_TERMINAL_PROMPT: '0', ...opts.env },
    maxBuffer: 1 << 30,
    encoding: 'utf8',
  });
  if (opts.input !== undefined) child.child.stdin?.end(opts.input);
  const { stdout } = await child;
  return stdout;
}

export async function gitBuffer(
  args: string[],
  opts: { cwd?: string; env?: Record<string, string>; input?: string } = {},
): Promise<Buffer> {
  const child = run('git', args, {
    cwd: opts.cwd,
    env: { ...process.env, GIT_TERMINAL_PROMPT: '0', ...opts.env },
    maxBuffer: 1 << 30,
    encoding: 'buffer',
  });
  if (opts.input !== undefined) child.child.stdin?.end(opts.input);
  const { stdout } = await child;
  return stdout;
}

/**
 * The git CLI in `gitDir`, unable to fetch anything: a partial clone's git fetches a missing object from its
 * promisor remote, so a check without this passes on what was never stored. `protocol.allow=never` refuses
 * every transport (git 2.39 has no GIT_NO_LAZY_FETCH, which later versions honour as well).
 */
export function offlineGit(gitDir: string, args: string[]): Promise<string> {
  return git(['-c', 'protocol.allow=never', '-C', gitDir, ...args], { env: NO_LAZY_FETCH });
}

/** offlineGit's stdout as bytes. */
export function offlineGitBuffer(gitDir: string, args: string[]): Promise<Buffer> {
  return gitBuffer(['-c', 'protocol.allow=never', '-C', gitDir, ...args], { env: NO_LAZY_FETCH });
}

const NO_LAZY_FETCH = { GIT_NO_LAZY_FETCH: '1' };
