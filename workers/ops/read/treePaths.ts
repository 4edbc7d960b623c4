// Reading trees by path: what go-to-file, file history and compare need, all from trees alone (a blob:none
// clone holds every tree), so none of them costs a request.

import { MODE_GITLINK, MODE_TREE_PADDED as MODE_TREE } from '../../pack/treeCheck.ts';
import { commitTree, lookupParts, readCheckedTree, walkCheckedTree } from '../common/checkedTrees.ts';
import type { OpsContext } from '../common/engineContext.ts';
import { openRepo, type RepoHandle, resolveCommit } from '../common/repoAccess.ts';

export { MODE_GITLINK, MODE_TREE };

export interface TreeEntryRef {
  oid: string;
  mode: string;
}

export { commitTree } from '../common/checkedTrees.ts';

/** A tree's entries, checked first (checkedTrees.ts); `prefix` ("dir/") names an entry in the error. */
export async function readTreeEntries(repo: RepoHandle, oid: string, prefix: string, depth: number) {
  return (await readCheckedTree(repo, oid, prefix, depth)).map((e) => ({
    path: e.name,
    oid: e.oid,
    mode: e.mode,
  }));
}

/** The entry at `path` under the tree `treeOid`, or null when there is none (a missing folder included). */
export async function entryAtPath(
  repo: RepoHandle,
  treeOid: string,
  path: string,
): Promise<TreeEntryRef | null> {
  let current: TreeEntryRef = { oid: treeOid, mode: MODE_TREE };
  let prefix = '';
  const parts = lookupParts(path, repo.treeLimits);
  for (let depth = 0; depth < parts.length; depth++) {
    const name = parts[depth];
    if (current.mode !== MODE_TREE) return null;
    const entry = (await readTreeEntries(repo, current.oid, prefix, depth)).find((e) => e.path === name);
    if (!entry) return null;
    current = { oid: entry.oid, mode: entry.mode };
    prefix += `${name}/`;
  }
  return current;
}

/**
 * Every file path of a commit (blobs, symlinks and submodules), in git's order (`git ls-tree -r
 * --name-only`), newline-separated: one string crosses the worker boundary far faster than 100,000.
 */
export async function listPaths(
  ctx: OpsContext,
  repoId: string,
  ref: string,
): Promise<{ commit: string; paths: string }> {
  const repo = await openRepo(ctx, repoId);
  const commit = await resolveCommit(repo, ref);
  const out: string[] = [];
  await walkCheckedTree(repo, await commitTree(repo, commit), (e, path) => {
    if (e.mode !== MODE_TREE) out.push(path);
  });
  return { commit, paths: out.join('\n') };
}

/** Every blob of a tree by path, recursively: the sources file history looks among for a rename. */
export async function blobsByOid(repo: RepoHandle, treeOid: string): Promise<Map<string, string[]>> {
  const byOid = new Map<string, string[]>();
  await walkCheckedTree(repo, treeOid, (e, path) => {
    if (e.mode === MODE_TREE || e.mode === MODE_GITLINK) return;
    const list = byOid.get(`${e.mode} ${e.oid}`);
    if (list) list.push(path);
    else byOid.set(`${e.mode} ${e.oid}`, [path]);
  });
  return byOid;
}
