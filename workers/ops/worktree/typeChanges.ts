// Paths that change kind in a checkout: a file (or symlink) that becomes a folder, a folder that becomes a
// file, a submodule that becomes a file and back. isomorphic-git plans `update-blob-to-tree` and
// `update-dir-to-blob` but never carries them out, and fails on a gitlink meeting a blob, so the working
// tree and index ended up holding both `x` and `x/a`, or neither. git removes what is there and writes the
// new kind; so do we, before isomorphic-git runs and inside the same all-or-nothing batch: the old kind's
// files and index entries go (once checked to hold no local change), and isomorphic-git then sees new
// entries, which it writes as on a fresh checkout.

import git from 'isomorphic-git';
import { MODE_GITLINK } from '../../pack/treeCheck.ts';
import { parseIndexModes } from '../../store/indexFile.ts';
import type { PromiseFs } from '../../store/repoFs.ts';
import { WorktreeDirtyError } from '../common/errors.ts';
import type { RepoHandle } from '../common/repoAccess.ts';

/** What the target commit holds (under the checkout's paths): path to mode. */
export type TargetModes = ReadonlyMap<string, { mode: string }>;

/**
 * Removes from the working tree (`fs`, rooted at `dir`) and the index every path whose kind the target
 * changes, within `paths` (all when undefined or empty). Without `force`, a local change or an untracked
 * file that the removal would lose stops it with WorktreeDirtyError, as git refuses; with it they go, as
 * with `git checkout -f`. Returns the paths cleared.
 */
export async function clearTypeChanges(
  repo: RepoHandle,
  fs: { promises: PromiseFs },
  dir: string,
  target: TargetModes,
  paths: string[] | undefined,
  force: boolean,
): Promise<string[]> {
  const { gitdir, cache } = repo;
  const all = paths === undefined || paths.length === 0;
  const inScope = (p: string) => all || paths.some((x) => isUnder(p, x) || isUnder(x, p));
  const index = await indexModes(repo, fs, dir);
  const targetDirs = foldersOf(target.keys());
  const indexDirs = foldersOf(index.keys());

  const clear = new Set<string>();
  for (const [path, mode] of index) {
    if (!inScope(path)) continue;
    const next = target.get(path);
    // A file, link or submodule where the target has a folder; a file or link against a submodule.
    if (targetDirs.has(path) || (next && (next.mode === MODE_GITLINK) !== (mode === MODE_GITLINK))) {
      clear.add(path);
    }
  }
  // A folder where the target has a file, link or submodule.
  for (const path of target.keys()) if (indexDirs.has(path) && inScope(path)) clear.add(path);
  if (clear.size === 0) return [];

  const cleared = [...clear].sort();
  if (!force) {
    const rows = await git.statusMatrix({ fs, dir, gitdir, cache, filepaths: cleared });
    // Kept only what equals the index (or is gone already): anything else would be lost.
    const lost = rows
      .filter(
        ([, , workdir, stage]) =>
          workdir !== 0 && !((workdir === 1 && stage === 1) || (workdir === 2 && stage === 2)),
      )
      .map(([path]) => path);
    // In the walk's order: the checkout adds the other paths in the way and names them all in git's.
    if (lost.length > 0) throw new WorktreeDirtyError(lost);
  }
  for (const path of cleared) await removeAll(fs.promises, `${dir.replace(/\/$/, '')}/${path}`);
  await git.remove({ fs, dir, gitdir, cache, filepath: cleared });
  return cleared;
}

/** The index's entries: path to mode ("100644", "120000", "160000"…). */
async function indexModes(
  repo: RepoHandle,
  fs: { promises: PromiseFs },
  dir: string,
): Promise<Map<string, string>> {
  let bytes: Uint8Array;
  try {
    bytes = (await fs.promises.readFile(`${repo.gitdir}/index`)) as Uint8Array;
  } catch {
    return new Map(); // no index yet: nothing checked out
  }
  const parsed = parseIndexModes(bytes);
  if (parsed) return parsed;
  // A format only isomorphic-git reads (index version 4): its walk, slower but complete.
  const modes = new Map<string, string>();
  await git.walk({
    fs,
    dir,
    gitdir: repo.gitdir,
    cache: repo.cache,
    trees: [git.STAGE()],
    map: async (path, [entry]) => {
      if (!entry || path === '.') return true;
      if ((await entry.type()) !== 'tree') modes.set(path, (await entry.mode()).toString(8));
      return true;
    },
  });
  return modes;
}

/** Removes a file, link or folder with everything in it, never following a link. */
export async function removeAll(fs: PromiseFs, path: string): Promise<void> {
  let isDir: boolean;
  try {
    isDir = (await fs.lstat(path)).isDirectory();
  } catch {
    return; // already gone
  }
  if (!isDir) {
    await fs.unlink(path);
    return;
  }
  for (const name of await fs.readdir(path)) await removeAll(fs, `${path}/${name}`);
  await fs.rmdir(path);
}

function foldersOf(paths: Iterable<string>): Set<string> {
  const dirs = new Set<string>();
  for (const path of paths) {
    for (let i = path.indexOf('/'); i !== -1; i = path.indexOf('/', i + 1)) dirs.add(path.slice(0, i));
  }
  return dirs;
}

function isUnder(path: string, base: string): boolean {
  return path === base || path.startsWith(`${base}/`);
}
