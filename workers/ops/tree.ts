import git from 'isomorphic-git';
import { OperationError } from './errors.ts';
import { openRepo, resolveCommit } from './repoAccess.ts';

export type EntryKind = 'tree' | 'blob' | 'commit';

export interface TreeEntry {
  name: string;
  path: string;
  oid: string;
  /** Octal mode as git stores it: 040000, 100644, 100755, 120000 (symlink), 160000 (submodule). */
  mode: string;
  type: EntryKind;
}

export interface TreeListing {
  commit: string;
  oid: string;
  path: string;
  entries: TreeEntry[];
}

/** Lists one directory of a commit, read from the trees alone: no blob is needed. */
export async function readTree(repoId: string, ref: string, path = ''): Promise<TreeListing> {
  const repo = await openRepo(repoId);
  const commit = await resolveCommit(repo, ref);
  const clean = path.replace(/^\/+|\/+$/g, '');
  let result: Awaited<ReturnType<typeof git.readTree>>;
  try {
    result = await git.readTree({
      fs: repo.fs,
      gitdir: repo.gitdir,
      oid: commit,
      filepath: clean || undefined,
      cache: repo.cache,
    });
  } catch (err) {
    const code = (err as { code?: string }).code;
    if (code === 'NotFoundError' || code === 'ObjectTypeError') {
      throw new OperationError('PATH_NOT_FOUND', `"${clean}" is not a directory in ${ref}.`);
    }
    throw err;
  }
  const entries = result.tree
    .map((e) => ({
      name: e.path,
      path: clean ? `${clean}/${e.path}` : e.path,
      oid: e.oid,
      mode: e.mode,
      type: e.type as EntryKind,
    }))
    // Directories first, then by name, as file browsers show them.
    .sort((a, b) =>
      a.type === 'tree' && b.type !== 'tree'
        ? -1
        : b.type === 'tree' && a.type !== 'tree'
          ? 1
          : a.name.localeCompare(b.name),
    );
  return { commit, oid: result.oid, path: clean, entries };
}
