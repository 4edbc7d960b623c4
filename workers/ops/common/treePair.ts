// Two trees walked in step, in git's entry order, the way tree-diff.c does: what the commit view, rename
// detection and the commit-graph's changed paths all read, from trees alone.

import { comparePaths } from '../../model/pathOrder.ts';
import { TimeSlice } from '../../pack/timeSlice.ts';
import { MODE_TREE_PADDED as MODE_TREE } from '../../pack/treeCheck.ts';
import { readCheckedTree } from './checkedTrees.ts';
import type { RepoHandle } from './repoAccess.ts';

interface Entry {
  name: string;
  oid: string;
  mode: string;
}

/**
 * Trees already read, by id, for a caller diffing many commits in a row: a commit's tree is its child's
 * parent tree, so each is read once, not twice. Bounded by the caller (see TreeEntriesCache.limit).
 */
export class TreeEntriesCache {
  private readonly trees = new Map<string, Entry[]>();

  constructor(private readonly limit: number) {}

  get(oid: string): Entry[] | undefined {
    return this.trees.get(oid);
  }

  set(oid: string, entries: Entry[]): void {
    // Forgetting all at once costs a few reads again; an LRU's bookkeeping would cost every read.
    if (this.trees.size >= this.limit) this.trees.clear();
    this.trees.set(oid, entries);
  }
}

/** A checked tree's entries (checkedTrees.ts: HostileTreeError for one git refuses), in git's order. */
async function readEntries(
  repo: RepoHandle,
  oid: string | null,
  prefix: string,
  depth: number,
  cache?: TreeEntriesCache,
): Promise<Entry[]> {
  if (oid === null) return [];
  const known = cache?.get(oid);
  if (known) return known;
  // A checked tree is in git's order already, where a folder sorts as "name/".
  const entries = await readCheckedTree(repo, oid, prefix, depth);
  cache?.set(oid, entries);
  return entries;
}

/** A file on one side of a tree pair: blob, symlink or submodule. */
export type Leaf = { oid: string; mode: string } | null;

/** Two trees' entries being walked in step, and where in each the walk is. */
interface PairFrame {
  olds: Entry[];
  news: Entry[];
  i: number;
  j: number;
  prefix: string;
  depth: number;
}

/**
 * Walks two trees in step, in git's entry order, the way tree-diff.c does, and calls `visit` for each file
 * (blob, symlink or submodule) path on either side. Subtrees with the same id on both sides are skipped,
 * unless `unchanged` asks for their files too (what --find-copies-harder looks among). A subtree is walked
 * before the entries after it, on a stack of its own rather than by recursion (a server chooses the depth,
 * held to the repo's tree limits), letting other calls in when a slice of time has run out.
 */
export async function walkTreePair(
  repo: RepoHandle,
  oldTree: string | null,
  newTree: string | null,
  prefix: string,
  visit: (path: string, a: Leaf, b: Leaf) => void,
  unchanged: boolean,
  cache?: TreeEntriesCache,
): Promise<void> {
  const frames: PairFrame[] = [];
  const slice = new TimeSlice();
  const startDepth = prefix === '' ? 0 : prefix.split('/').length - 1;
  const open = async (a: string | null, b: string | null, at: string, depth: number) => {
    if (a === b && !unchanged) return;
    await slice.pause();
    const [olds, news] = await Promise.all([
      readEntries(repo, a, at, depth, cache),
      readEntries(repo, b, at, depth, cache),
    ]);
    frames.push({ olds, news, i: 0, j: 0, prefix: at, depth });
  };
  await open(oldTree, newTree, prefix, startDepth);
  while (frames.length > 0) {
    const f = frames[frames.length - 1];
    const a = f.olds[f.i];
    const b = f.news[f.j];
    if (a === undefined && b === undefined) {
      frames.pop();
      continue;
    }
    const order = a === undefined ? 1 : b === undefined ? -1 : compareEntries(a, b);
    if (order < 0) {
      f.i++;
      if (a.mode === MODE_TREE) await open(a.oid, null, `${f.prefix}${a.name}/`, f.depth + 1);
      else visit(f.prefix + a.name, a, null);
    } else if (order > 0) {
      f.j++;
      if (b.mode === MODE_TREE) await open(null, b.oid, `${f.prefix}${b.name}/`, f.depth + 1);
      else visit(f.prefix + b.name, null, b);
    } else {
      f.i++;
      f.j++;
      const path = f.prefix + a.name;
      if (a.mode === MODE_TREE && b.mode === MODE_TREE) {
        await open(a.oid, b.oid, `${path}/`, f.depth + 1);
      } else if (a.oid !== b.oid || a.mode !== b.mode || unchanged) {
        visit(path, a, b);
      }
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
  cache?: TreeEntriesCache,
): Promise<string[]> {
  const paths: string[] = [];
  await walkTreePair(repo, oldTree, newTree, '', (path) => paths.push(path), false, cache);
  return paths;
}

/**
 * git's tree order (tree.c base_name_compare): names compared as bytes, a tree's name as if it ended in "/".
 * A file and a folder of the same name are two entries, as in git: one deleted, the other added.
 */
function compareEntries(a: Entry, b: Entry): number {
  return comparePaths(
    a.mode === MODE_TREE ? `${a.name}/` : a.name,
    b.mode === MODE_TREE ? `${b.name}/` : b.name,
  );
}
