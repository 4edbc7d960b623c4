// `git diff --no-index` over many file pairs in one process: each pair is written as old/<i> and new/<i>,
// git compares the two folders, and its output is cut back into one patch per pair.
import { mkdir, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { runGit } from './gitHistory.ts';

/** git deaf to the machine's configuration: the oracle must run with git's defaults. */
const GIT_ENV = { ...process.env, GIT_CONFIG_NOSYSTEM: '1', GIT_CONFIG_GLOBAL: '/dev/null' };

/**
 * The hunks (from the first `@@` on) of `git diff --no-index <args>` for each pair, in the pairs' order;
 * empty for a pair without differences.
 */
export async function noIndexHunks(
  dir: string,
  pairs: [Uint8Array, Uint8Array][],
  args: string[] = [],
): Promise<Buffer[]> {
  await rm(join(dir, 'old'), { recursive: true, force: true });
  await rm(join(dir, 'new'), { recursive: true, force: true });
  await mkdir(join(dir, 'old'));
  await mkdir(join(dir, 'new'));
  await Promise.all(
    pairs.flatMap(([a, b], i) => [
      writeFile(join(dir, 'old', String(i)), a),
      writeFile(join(dir, 'new', String(i)), b),
    ]),
  );
  // Exit code 1 means "there were differences".
  const out = await runGit(['diff', '--no-index', ...args, 'old', 'new'], {
    cwd: dir,
    env: GIT_ENV,
    okCodes: [1],
  });
  const result: Buffer[] = pairs.map(() => Buffer.alloc(0));
  const text = out.toString('latin1');
  const header = /^diff --git a\/old\/(\d+) b\/new\/\d+\n/gm;
  const sections: { index: number; at: number }[] = [];
  for (let m = header.exec(text); m; m = header.exec(text))
    sections.push({ index: Number(m[1]), at: m.index });
  sections.forEach((s, k) => {
    const end = k + 1 < sections.length ? sections[k + 1].at : out.length;
    const hunks = text.indexOf('\n@@ ', s.at);
    result[s.index] = hunks >= 0 && hunks < end ? out.subarray(hunks + 1, end) : Buffer.alloc(0);
  });
  return result;
}
