// Reachability questions answered from a commit-graph alone: by position, with typed arrays, and walks
// bounded by generation numbers (a commit can only reach commits of a lower generation).

import type { CommitGraph } from './commitGraph.ts';

/** Every commit reachable from `from` (itself included), as a mark per graph position. */
export function ancestorMarks(graph: CommitGraph, from: number): Uint8Array {
  const marks = new Uint8Array(graph.size);
  const stack = [from];
  marks[from] = 1;
  while (stack.length) {
    for (const p of graph.parents(stack.pop()!)) {
      if (!marks[p]) {
        marks[p] = 1;
        stack.push(p);
      }
    }
  }
  return marks;
}

/** Whether `ancestor` is reachable from `from`, walking no lower than `ancestor`'s generation. */
export function reaches(graph: CommitGraph, from: number, ancestor: number): boolean {
  const floor = graph.generation(ancestor);
  const seen = new Set<number>([from]);
  const stack = [from];
  while (stack.length) {
    const c = stack.pop()!;
    if (c === ancestor) return true;
    for (const p of graph.parents(c)) {
      if (!seen.has(p) && graph.generation(p) >= floor) {
        seen.add(p);
        stack.push(p);
      }
    }
  }
  return false;
}

/**
 * The best common ancestors of `a` and `b` (`git merge-base --all`): common ancestors none of the others
 * reaches, newest committer date first, as git lists them (the first is what `git merge-base` prints).
 */
export function mergeBases(graph: CommitGraph, a: number, b: number): number[] {
  const fromA = ancestorMarks(graph, a);
  // From b, stop at the first common commits on each path: the ones below them are not the best.
  const candidates: number[] = [];
  const seen = new Uint8Array(graph.size);
  const stack = [b];
  seen[b] = 1;
  while (stack.length) {
    const c = stack.pop()!;
    if (fromA[c]) {
      candidates.push(c);
      continue;
    }
    for (const p of graph.parents(c)) {
      if (!seen[p]) {
        seen[p] = 1;
        stack.push(p);
      }
    }
  }
  // remove_redundant: a candidate another one reaches is not a best one.
  const best = candidates.filter((c) => !candidates.some((o) => o !== c && reaches(graph, o, c)));
  return best.sort((x, y) => graph.commitTime(y) - graph.commitTime(x));
}
