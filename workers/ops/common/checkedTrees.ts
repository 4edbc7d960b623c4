// Every tree an operation walks is read through here: parsed from its raw bytes and checked as git fsck
// checks it (pack/treeCheck.ts) before anyone lists, diffs or writes its entries. A tree id passes once
// per repo (RepoHandle.checkedTrees); after that, reading it costs the parse alone.

import git from 'isomorphic-git';
import { checkSymlinkTargets, checkTree, type ParsedTreeEntry } from '../../pack/treeCheck.ts';
import { HostileTreeError } from './errors.ts';
import type { RepoHandle } from './repoAccess.ts';

export type { ParsedTreeEntry } from '../../pack/treeCheck.ts';

/**
 * The entries of tree `oid`, in the tree's order, modes as isomorphic-git spells them (trees "040000").
 * `path` is where the tree sits ("" for the root, else "dir/sub/"), to name an entry in the error.
 * Throws HostileTreeError for a tree git would refuse.
 */
export async function readCheckedTree(
  repo: Pick<RepoHandle, 'fs' | 'gitdir' | 'cache' | 'checkedTrees'>,
  oid: string,
  path: string,
): Promise<ParsedTreeEntry[]> {
  const { type, object } = await git.readObject({
    fs: repo.fs,
    gitdir: repo.gitdir,
    oid,
    format: 'content',
    cache: repo.cache,
  });
  const folder = path.replace(/\/$/, '') || '/';
  if (type !== 'tree')
    throw new HostileTreeError(folder, 'BAD_TREE', `object ${oid} is a ${type}, not a tree.`);
  const { entries, problem } = checkTree(object as Uint8Array, !repo.checkedTrees.has(oid));
  if (problem) {
    const at = problem.check === 'BAD_TREE' ? folder : path + problem.name;
    throw new HostileTreeError(at, problem.check, problem.detail);
  }
  repo.checkedTrees.add(oid);
  return entries;
}

/** The root tree of a commit. */
export async function commitTree(repo: RepoHandle, commit: string): Promise<string> {
  const { commit: parsed } = await git.readCommit({
    fs: repo.fs,
    gitdir: repo.gitdir,
    oid: commit,
    cache: repo.cache,
  });
  return parsed.tree;
}

/**
 * Throws HostileTreeError for the first symlink (path from the root to target) that leads out of the
 * working tree or into the git directory, followed through the others as a file system would.
 */
export function assertSafeSymlinks(links: ReadonlyMap<string, string>): void {
  const problem = checkSymlinkTargets(links);
  if (problem) throw new HostileTreeError(problem.path, problem.check, `the symbolic link ${problem.detail}`);
}
