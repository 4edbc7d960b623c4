// `?compare=a...b`: the commits on b that a lacks (`git log a..b`) and the files b changed since the
// merge base (`git diff --name-status a...b`), from commits and trees alone.

import { ancestorMarks, mergeBases } from '../../commitgraph/reachability.ts';
import { commitGraphFor } from '../common/commitGraphAccess.ts';
import type { OpsContext } from '../common/engineContext.ts';
import { throwIfAborted } from '../common/errors.ts';
import {
  commitQueue,
  openRepo,
  type RepoHandle,
  readCommitObject,
  resolveCommit,
} from '../common/repoAccess.ts';
import { type CommitDiff, diffCommits } from './diff.ts';
import type { CommitSummary } from './history.ts';

/** `base..head`: the commits head has that base lacks, and what they change. */
export interface Comparison {
  /** The base ref, resolved to a commit id. */
  base: string;
  /** The head ref, resolved to a commit id. */
  head: string;
  /** The best common ancestor, or null for unrelated histories (then every file of head is new). */
  mergeBase: string | null;
  /** `git log base..head`, newest first. */
  commits: CommitSummary[];
  /** True when the list stopped at `limit`. */
  truncated: boolean;
  /** `git diff --name-status base...head` (renames as a deletion and an addition, as from trees alone). */
  diff: CommitDiff;
}

/**
 * `git merge-base --all` from commit objects, where the commit-graph does not hold both ends yet (it is
 * written in the background after a clone): the same steps as `commitgraph/reachability.ts mergeBases`,
 * so both paths name the same base. isomorphic-git's findMergeBase picks another one in criss-cross
 * merges. `fromBase` is every commit the base reaches.
 */
async function mergeBasesFromObjects(
  repo: RepoHandle,
  fromBase: Set<string>,
  head: string,
  signal?: AbortSignal,
): Promise<string[]> {
  // From head, stop at the first common commits on each path: the ones below them are not the best.
  const candidates: string[] = [];
  const seen = new Set<string>([head]);
  const stack = [head];
  while (stack.length) {
    throwIfAborted(signal);
    const c = stack.pop()!;
    if (fromBase.has(c)) {
      candidates.push(c);
      continue;
    }
    for (const p of await parentsOf(repo, c)) {
      if (!seen.has(p)) {
        seen.add(p);
        stack.push(p);
      }
    }
  }
  // remove_redundant: a candidate another one reaches is not a best one.
  const reached = new Set<string>();
  for (const c of candidates) {
    for (const a of await ancestors(repo, c, signal)) if (a !== c) reached.add(a);
  }
  const best = candidates.filter((c) => !reached.has(c));
  const times = new Map<string, number>();
  for (const c of best) times.set(c, (await readCommitObject(repo, c)).committer.timestamp);
  return best.sort((x, y) => times.get(y)! - times.get(x)!);
}

/** A commit's parents; none past a shallow boundary, whose parents are not stored. */
async function parentsOf(repo: RepoHandle, oid: string): Promise<string[]> {
  try {
    return (await readCommitObject(repo, oid)).parent;
  } catch {
    return [];
  }
}

/** Every commit reachable from `from`. */
async function ancestors(repo: RepoHandle, from: string, signal?: AbortSignal): Promise<Set<string>> {
  const seen = new Set<string>([from]);
  const stack = [from];
  while (stack.length) {
    throwIfAborted(signal);
    const oid = stack.pop()!;
    let parents: string[];
    try {
      parents = (await readCommitObject(repo, oid)).parent;
    } catch {
      // A shallow boundary: its parents are not stored, and the walk ends there.
      continue;
    }
    for (const p of parents) {
      if (!seen.has(p)) {
        seen.add(p);
        stack.push(p);
      }
    }
  }
  return seen;
}

export async function compareRefs(
  ctx: OpsContext,
  repoId: string,
  baseRef: string,
  headRef: string,
  opts: { limit?: number } = {},
  hooks: { signal?: AbortSignal } = {},
): Promise<Comparison> {
  const limit = opts.limit ?? 250;
  const repo = await openRepo(ctx, repoId);
  const base = await resolveCommit(repo, baseRef);
  const head = await resolveCommit(repo, headRef);
  // With the commit-graph, ancestry and the merge base come from it (positions and generation numbers)
  // instead of from parsing every commit object.
  const graph = await commitGraphFor(repo);
  const basePosition = graph ? graph.position(base) : -1;
  const headPosition = graph ? graph.position(head) : -1;
  const fromGraph = graph !== null && basePosition >= 0 && headPosition >= 0;
  let excluded: Set<string>;
  if (fromGraph) {
    const marks = ancestorMarks(graph, basePosition);
    excluded = new Set();
    for (let p = 0; p < marks.length; p++) if (marks[p]) excluded.add(graph.oid(p));
  } else {
    excluded = await ancestors(repo, base, hooks.signal);
  }

  // base..head in committer-date order, as `git log` lists it.
  const commits: CommitSummary[] = [];
  const queue = commitQueue(repo, excluded);
  await queue.push(head);
  let truncated = false;
  while (queue.size) {
    throwIfAborted(hooks.signal);
    if (commits.length >= limit) {
      truncated = true;
      break;
    }
    const { oid, commit: c } = queue.pop()!;
    commits.push({ oid, parents: c.parent, message: c.message, author: c.author, committer: c.committer });
    for (const p of c.parent) await queue.push(p);
  }

  let mergeBase: string | null = null;
  if (fromGraph) {
    const bases = mergeBases(graph, basePosition, headPosition);
    mergeBase = bases.length ? graph.oid(bases[0]) : null;
  } else {
    mergeBase = (await mergeBasesFromObjects(repo, excluded, head, hooks.signal))[0] ?? null;
  }
  // Unrelated histories have no merge base: then every file of head is new, as git diff shows it.
  const diff = await diffCommits(ctx, repoId, mergeBase, head, { againstEmptyTree: mergeBase === null });
  return { base, head, mergeBase, commits, truncated, diff };
}
