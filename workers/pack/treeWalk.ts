// Every walk over a commit's trees (checkout, go to file, presence, file history's rename search) in one
// loop with its own stack: a server chooses how deep trees nest, so no walk may recurse to that depth, and
// each tree read is told its depth, which the reader holds against maxTreeDepth. Pure: the reader is given.

import { TimeSlice } from './timeSlice.ts';
import { isTreeMode, type ParsedTreeEntry } from './treeCheck.ts';

/** A tree's entries; `path` is where it sits ("" for the root, else "dir/sub/"), `depth` its folders below the root. */
export type ReadTree = (oid: string, path: string, depth: number) => Promise<readonly ParsedTreeEntry[]>;

/** Told of each entry with its path; returning `false` for a folder leaves it unread. */
export type VisitEntry = (entry: ParsedTreeEntry, path: string) => unknown;

interface Frame {
  entries: readonly ParsedTreeEntry[];
  next: number;
  prefix: string;
  depth: number;
}

/**
 * Visits every entry under tree `root` in git's order (`git ls-tree -r -t`: a folder, then what it holds),
 * reading one tree at a time, and lets other calls in between trees when a slice of time has run out.
 */
export async function walkTree(
  root: string,
  read: ReadTree,
  visit: VisitEntry,
  slice: TimeSlice = new TimeSlice(),
): Promise<void> {
  const stack: Frame[] = [{ entries: await read(root, '', 0), next: 0, prefix: '', depth: 0 }];
  while (stack.length > 0) {
    const top = stack[stack.length - 1];
    if (top.next === top.entries.length) {
      stack.pop();
      continue;
    }
    const entry = top.entries[top.next++];
    const path = top.prefix + entry.name;
    if (visit(entry, path) === false || !isTreeMode(entry.mode)) continue;
    await slice.pause();
    const prefix = `${path}/`;
    stack.push({
      entries: await read(entry.oid, prefix, top.depth + 1),
      next: 0,
      prefix,
      depth: top.depth + 1,
    });
  }
}
