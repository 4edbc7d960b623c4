import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { git } from './git.ts';

/** The refs stored as files under `gitDir/refs`, by name (`refs/heads/main`). */
export async function looseRefNames(gitDir: string): Promise<string[]> {
  const names: string[] = [];
  const walk = async (rel: string) => {
    for (const entry of await readdir(join(gitDir, rel), { withFileTypes: true })) {
      const name = `${rel}/${entry.name}`;
      if (entry.isDirectory()) await walk(name);
      else names.push(name);
    }
  };
  await walk('refs');
  return names.sort();
}

/**
 * The `packed-refs` git writes for the refs of `gitDir` (`git pack-refs --all`, run there), less the refs
 * named in `stayLoose`, with their peeled `^` lines: what a client that keeps those loose, and the rest
 * packed, must have written byte for byte.
 */
export async function packedRefsAsGitWrites(gitDir: string, stayLoose: string[]): Promise<string> {
  await git(['pack-refs', '--all'], { cwd: gitDir });
  const text = await readFile(join(gitDir, 'packed-refs'), 'utf8');
  const loose = new Set(stayLoose);
  const out: string[] = [];
  let skipping = false;
  for (const line of text.split('\n')) {
    if (line.startsWith('^')) {
      if (!skipping) out.push(line);
      continue;
    }
    skipping = loose.has(line.slice(41));
    if (!skipping) out.push(line);
  }
  return out.join('\n');
}

/** `git show-ref -d`: every ref and the object each tag peels to, as git resolves them. */
export async function showRefs(gitDir: string): Promise<string[]> {
  const out = await git(['show-ref', '-d'], { cwd: gitDir });
  return out.trim().split('\n').filter(Boolean);
}

/**
 * The remote's branches and tags as a fetch must leave them locally: `git ls-remote` of the server, its
 * branches renamed by the default refspec (`refs/remotes/origin/`), the peeled `^{}` lines left out (they
 * are checked in packed-refs). Sorted, to compare with `trackingRefs` of an exported repo.
 */
export async function lsRemoteAsFetched(url: string): Promise<string[]> {
  const out = await git(['ls-remote', '--heads', '--tags', url]);
  return out
    .trim()
    .split('\n')
    .filter((l) => !l.endsWith('^{}'))
    .map((l) => l.replace('\t', ' ').replace(' refs/heads/', ' refs/remotes/origin/'))
    .sort();
}
