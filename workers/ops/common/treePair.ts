// Two trees walked in step, in git's entry order, the way tree-diff.c does: what the commit view, rename
// detection and the commit-graph's changed paths all read, from trees alone.

import { MODE_TREE_PADDED as MODE_TREE } from '../../pack/treeCheck.ts';
import { readCheckedTree } from './checkedTrees.ts';
import type { RepoHandle } from './repoAccess.ts';

interface Entry {
  name: string;
  oid: string;
  mode: string;
}

/** A checked tree's entries (checkedTrees.ts: HostileTreeError for one git refuses), in git's order. */
async function readEntries(repo: RepoHandle, oid: string | null, prefix: string): Promise<Entry[]> {
  if (oid === null) return [];
  // A checked tree is in git's order already, where a folder sorts as "name/".
  return readCheckedTree(repo, oid, prefix);
}

/** A file on one side of a tree pair: blob, symlink or submodule. */
export type Leaf = { oid: string; mode: string } | null;

/**
 * Walks two trees in step, in git's entry order, the way tree-diff.c does, and calls `visit` for each file
 * (blob, symlink or submodule) path on either side. Subtrees with the same id on both sides are skipped,
 * unless `unchanged` asks for their files too (what --find-copies-harder looks among).
 */
export async function walkTreePair(
  repo: RepoHandle,
  oldTree: string | null,
  newTree: string | null,
  prefix: string,
  visit: (path: string, a: Leaf, b: Leaf) => void,
  unchanged: boolean,
): Promise<void> {
  if (oldTree === newTree && !unchanged) return;
  const [olds, news] = await Promise.all([
    readEntries(repo, oldTree, prefix),
    readEntries(repo, newTree, prefix),
  ]);
  const side = async (e: Entry, isOld: boolean) => {
    const path = prefix + e.name;
    if (e.mode === MODE_TREE) {
      await walkTreePair(repo, isOld ? e.oid : null, isOld ? null : e.oid, `${path}/`, visit, unchanged);
    } else {
      visit(path, isOld ? e : null, isOld ? null : e);
    }
  };
  let i = 0;
  let j = 0;
  while (i < olds.length || j < news.length) {
    const a = olds[i];
    const b = news[j];
    const order = a === undefined ? 1 : b === undefined ? -1 : compareEntries(a, b);
    if (order < 0) {
      await side(a, true);
      i++;
    } else if (order > 0) {
      await side(b, false);
      j++;
    } else {
      const path = prefix + a.name;
      if (a.mode === MODE_TREE && b.mode === MODE_TREE) {
        await walkTreePair(repo, a.oid, b.oid, `${path}/`, visit, unchanged);
      } else if (a.oid !== b.oid || a.mode !== b.mode || unchanged) {
        visit(path, a, b);
      }
      i++;
      j++;
    }
  }
}

/**
 * The paths a tree diff reports (`git diff-tree -r --name-only`): every file added, deleted or changed,
 * what a commit's changed-path Bloom filter holds (with their folders).
 */
export async function changedPaths(
  repo: RepoHandle,
  oldTree: string | null,
  newTree: string,
): Promise<string[]> {
  const paths: string[] = [];
  await walkTreePair(repo, oldTree, newTree, '', (path) => paths.push(path), false);
  return paths;
}

/**
 * git's tree order (tree.c base_name_compare): names compared as bytes, a tree's name as if it ended in "/".
 * A file and a folder of the same name are two entries, as in git: one deleted, the other added.
 */
function compareEntries(a: Entry, b: Entry): number {
  return compareCodePoints(
    a.mode === MODE_TREE ? `${a.name}/` : a.name,
    b.mode === MODE_TREE ? `${b.name}/` : b.name,
  );
}

/** UTF-8 byte order is code point order, which differs from JS's UTF-16 order only past U+FFFF. */
function compareCodePoints(a: string, b: string): number {
  const n = Math.min(a.length, b.length);
  for (let k = 0; k < n; k++) {
    const x = a.charCodeAt(k);
    const y = b.charCodeAt(k);
    if (x === y) continue;
    const xs = x >= 0xd800 && x <= 0xdfff;
    const ys = y >= 0xd800 && y <= 0xdfff;
    if (xs !== ys) return xs ? 1 : -1; // a surrogate stands for a code point above every BMP one
    return x - y;
  }
  return a.length - b.length;
}
