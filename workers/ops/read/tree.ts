import { MODE_GITLINK, MODE_TREE_PADDED as MODE_TREE } from '../../pack/treeCheck.ts';
import { commitTree, lookupParts, readCheckedTree } from '../common/checkedTrees.ts';
import type { OpsContext } from '../common/engineContext.ts';
import { OperationError } from '../common/errors.ts';
import { openRepo, resolveCommit } from '../common/repoAccess.ts';

/** What a tree entry names: a folder (`tree`), a file or symlink (`blob`), a submodule's commit (`commit`). */
export type EntryKind = 'tree' | 'blob' | 'commit';

/** One entry of a folder. */
export interface TreeEntry {
  /** Its name in the folder. */
  name: string;
  /** Its path from the repository's root. */
  path: string;
  /** The tree, blob or (for a submodule) commit it names. */
  oid: string;
  /** Octal mode as git stores it: 040000, 100644, 100755, 120000 (symlink), 160000 (submodule). */
  mode: string;
  /** What the entry names. */
  type: EntryKind;
}

/** One folder of a commit. */
export interface TreeListing {
  /** The commit the ref resolved to. */
  commit: string;
  /** The folder's tree. */
  oid: string;
  /** The folder's path from the root, without slashes at its ends; empty for the root. */
  path: string;
  /** Its entries, in git's tree order. */
  entries: TreeEntry[];
}

/**
 * Lists one directory of a commit, read from the trees alone: no blob is needed. Every tree on the way
 * is checked (checkedTrees.ts): HostileTreeError for one git would refuse, PATH_NOT_FOUND for a path
 * that is not a folder.
 */
export async function readTree(
  ctx: OpsContext,
  repoId: string,
  ref: string,
  path = '',
): Promise<TreeListing> {
  const repo = await openRepo(ctx, repoId);
  const commit = await resolveCommit(repo, ref);
  const clean = path.replace(/^\/+|\/+$/g, '');
  const notFound = () => new OperationError('PATH_NOT_FOUND', `"${clean}" is not a directory in ${ref}.`);
  const parts = lookupParts(clean, repo.treeLimits);
  let oid = await commitTree(repo, commit);
  let tree = await readCheckedTree(repo, oid, '', 0);
  let prefix = '';
  for (let depth = 1; depth <= parts.length; depth++) {
    const name = parts[depth - 1];
    const entry = tree.find((e) => e.name === name);
    if (!entry || entry.mode !== MODE_TREE) throw notFound();
    prefix += `${name}/`;
    oid = entry.oid;
    tree = await readCheckedTree(repo, oid, prefix, depth);
  }
  const entries = tree
    .map((e) => ({
      name: e.name,
      path: clean ? `${clean}/${e.name}` : e.name,
      oid: e.oid,
      mode: e.mode,
      type: typeOf(e.mode),
    }))
    // Directories first, then by name, as file browsers show them.
    .sort((a, b) =>
      a.type === 'tree' && b.type !== 'tree'
        ? -1
        : b.type === 'tree' && a.type !== 'tree'
          ? 1
          : a.name.localeCompare(b.name),
    );
  return { commit, oid, path: clean, entries };
}

function typeOf(mode: string): EntryKind {
  return mode === MODE_TREE ? 'tree' : mode === MODE_GITLINK ? 'commit' : 'blob';
}
