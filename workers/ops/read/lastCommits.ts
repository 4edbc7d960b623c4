// The last commit that changed each entry of a folder, as a code host lists beside its files. Read from
// commits and trees only, walking back until every entry is placed, so it comes after the listing.

import type { CommitObject } from 'isomorphic-git';
import { pathKeys, pathMaybeChanged } from '../../commitgraph/bloomFilter.ts';
import { CommitQueue } from '../../model/commitQueue.ts';
import { type CommitHeader, commitGraphFor, commitHeaders } from '../common/commitGraphAccess.ts';
import type { OpsContext } from '../common/engineContext.ts';
import { throwIfAborted } from '../common/errors.ts';
import { openRepo, readCommitObject, resolveCommit, shallowCommits } from '../common/repoAccess.ts';
import { TreeEntriesCache } from '../common/treePair.ts';
import { entryAtPath, HISTORY_TREE_CACHE, readTreeEntries } from './treePaths.ts';

/** The last commit that changed a folder's entry, as a listing shows it. */
export interface EntryCommit {
  /** The commit's id. */
  oid: string;
  /** The first line of its message. */
  subject: string;
  /** Its author time, in seconds since 1970-01-01 UTC. */
  timestamp: number;
}

/** The last commit of each entry of a folder (what GitHub shows beside each file). */
export interface LastCommits {
  /** By entry name: the newest commit whose version of the entry differs from all its parents'. */
  entries: Record<string, EntryCommit>;
  /** Entries the walk did not place within `maxCommits` (or before the shallow boundary). */
  unresolved: string[];
  /**
   * The walk reached a shallow boundary (a commit whose parents are not stored yet) with entries left:
   * their last commit is in history this repository does not hold yet, so it is not known.
   */
  shallowStop: boolean;
}

/** Commits walked at most: past this a very old file is shown without its last commit. */
export const LAST_COMMITS_MAX_WALK = 5000;

export async function lastCommits(
  ctx: OpsContext,
  repoId: string,
  ref: string,
  path = '',
  hooks: { signal?: AbortSignal; maxCommits?: number } = {},
): Promise<LastCommits> {
  const repo = await openRepo(ctx, repoId);
  const start = await resolveCommit(repo, ref);
  const clean = path.replace(/^\/+|\/+$/g, '');
  // How many folders below the root the listed folder sits.
  const depth = clean ? clean.split('/').length : 0;
  const shallow = await shallowCommits(repo);
  const graph = await commitGraphFor(repo);
  const read = commitHeaders(graph, (oid) => readCommitObject(repo, oid));
  const trees = new TreeEntriesCache(HISTORY_TREE_CACHE);
  /** The folder's entries in a commit: name -> mode+oid, or null where the folder is absent. */
  const folder = async (c: CommitHeader): Promise<{ tree: string; entries: Map<string, string> } | null> => {
    const at = clean ? await entryAtPath(repo, c.tree, clean, trees) : { oid: c.tree, mode: '040000' };
    if (at?.mode !== '040000') return null;
    const entries = new Map(
      (await readTreeEntries(repo, at.oid, clean ? `${clean}/` : '', depth, trees)).map((e) => [
        e.path,
        `${e.mode} ${e.oid}`,
      ]),
    );
    return { tree: at.oid, entries };
  };
  const keys = new Map<string, Uint32Array[]>();
  /** The commit-graph's Bloom filter rules out a change to every entry still pending (first parent). */
  const untouched = (oid: string): boolean => {
    const position = graph ? graph.position(oid) : -1;
    const filter = position >= 0 ? graph!.bloomFilter(position) : null;
    if (!filter) return false;
    for (const name of pending) {
      let k = keys.get(name);
      if (!k) {
        k = pathKeys(clean ? `${clean}/${name}` : name);
        keys.set(name, k);
      }
      if (pathMaybeChanged(filter, k)) return false;
    }
    return true;
  };

  const head = await folder(await read(start));
  const pending = new Set(head ? head.entries.keys() : []);
  const result: Record<string, EntryCommit> = {};
  // In git log's order, so an entry gets the commit `git log -1 -- <entry>` names, ties included.
  const queue = new CommitQueue(read);
  await queue.push(start);
  let walked = 0;
  const max = hooks.maxCommits ?? LAST_COMMITS_MAX_WALK;
  let shallowStop = false;
  while (pending.size && queue.size && walked++ < max) {
    throwIfAborted(hooks.signal);
    const { oid, commit } = queue.pop()!;
    // A shallow commit's parents are missing, so what changed in it is unknown: every entry would look
    // added there. And its unseen ancestors may be newer than the commits still queued, so no entry left
    // can be placed from here on without risking a commit `git log -1 -- <entry>` would not name.
    if (shallow.has(oid) && commit.parent.length > 0) {
      shallowStop = true;
      break;
    }
    const parents = commit.parent;
    if (!(parents.length === 1 && untouched(oid))) {
      const mine = await folder(commit);
      const theirs = await Promise.all(parents.map(async (p) => folder(await read(p))));
      // The folder as one of its parents had it: nothing in it changed here.
      if (!theirs.some((t) => t?.tree === mine?.tree)) {
        let full: CommitObject | null = null;
        for (const name of pending) {
          const here = mine?.entries.get(name);
          const changed =
            theirs.length === 0 ? here !== undefined : theirs.every((t) => t?.entries.get(name) !== here);
          if (changed) {
            full ??= await readCommitObject(repo, oid);
            result[name] = { oid, subject: full.message.split('\n')[0], timestamp: full.author.timestamp };
            pending.delete(name);
          }
        }
      }
    }
    for (const p of parents) await queue.push(p);
  }
  return { entries: result, unresolved: [...pending], shallowStop };
}
