// Reading trees by path: what go-to-file, file history and compare need, all from trees alone (a blob:none
// clone holds every tree), so none of them costs a request.

import { MODE_GITLINK, MODE_TREE_PADDED as MODE_TREE } from '../../pack/treeCheck.ts';
import { commitTree, lookupParts, readCheckedTree, walkCheckedTree } from '../common/checkedTrees.ts';
import type { OpsContext } from '../common/engineContext.ts';
import { openRepo, type RepoHandle, resolveCommit } from '../common/repoAccess.ts';
import type { TreeEntriesCache } from '../common/treePair.ts';

export { MODE_GITLINK, MODE_TREE };

export interface TreeEntryRef {
  oid: string;
  mode: string;
}

export { commitTree } from '../common/checkedTrees.ts';

/**
 * Trees a history walk keeps while it reads the same path in commit after commit: a folder that did not
 * change between two commits is the same tree. Tree reads on large (50,000 commits), counted in Node with
 * bench/reading/historyOps.bench.ts (2026-12-01; times too noisy at load 10 to choose by), for file
 * history's first page / blame / last commits of the file's folder: none kept 312 / 3,138 / 1,593;
 * 64: 301 / 3,083 / 705; 256: 301 / 3,081 / 697; 4,096: 301 / 3,081 / 694. Each is a parsed tree of a
 * few KB. (Blame's other reads are the whole tree `--follow` searches for copies where the file was added.)
 */
export const HISTORY_TREE_CACHE = 256;

/** A checked tree's entries (checkedTrees.ts), from `cache` where it holds them. */
async function cachedTree(
  repo: RepoHandle,
  oid: string,
  prefix: string,
  depth: number,
  cache?: TreeEntriesCache,
) {
  const known = cache?.get(oid);
  if (known) return known;
  const entries = await readCheckedTree(repo, oid, prefix, depth);
  cache?.set(oid, entries);
  return entries;
}

/** A tree's entries, checked first (checkedTrees.ts); `prefix` ("dir/") names an entry in the error. */
export async function readTreeEntries(
  repo: RepoHandle,
  oid: string,
  prefix: string,
  depth: number,
  cache?: TreeEntriesCache,
) {
  return (await cachedTree(repo, oid, prefix, depth, cache)).map((e) => ({
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
  cache?: TreeEntriesCache,
): Promise<TreeEntryRef | null> {
  let current: TreeEntryRef = { oid: treeOid, mode: MODE_TREE };
  let prefix = '';
  const parts = lookupParts(path, repo.treeLimits);
  for (let depth = 0; depth < parts.length; depth++) {
    const name = parts[depth];
    if (current.mode !== MODE_TREE) return null;
    const entry = (await cachedTree(repo, current.oid, prefix, depth, cache)).find((e) => e.name === name);
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
