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

export async function gitBuffer(args: string[], opts: { cwd?: string } = {}): Promise<Buffer> {
  const { stdout } = await run('git', args, { cwd: opts.cwd, maxBuffer: 1 << 30, encoding: 'buffer' });
  return stdout;
}
