// The last commit that changed each entry of a folder, as a code host lists beside its files. Read from
// commits and trees only, walking back until every entry is placed, so it comes after the listing.

import type { CommitObject } from 'isomorphic-git';
import type { OpsContext } from '../common/engineContext.ts';
import { throwIfAborted } from '../common/errors.ts';
import {
  commitQueue,
  openRepo,
  readCommitObject,
  resolveCommit,
  shallowCommits,
} from '../common/repoAccess.ts';
import { entryAtPath, readTreeEntries } from './treePaths.ts';

export interface EntryCommit {
  oid: string;
  subject: string;
  timestamp: number;
}

export interface LastCommits {
  /** By entry name: the newest commit whose version of the entry differs from all its parents'. */
  entries: Record<string, EntryCommit>;
  /** Entries the walk did not place within `maxCommits` (or before the shallow boundary). */
  unresolved: string[];
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
  const shallow = await shallowCommits(repo);
  const read = (oid: string): Promise<CommitObject> => readCommitObject(repo, oid);
  /** The folder's entries in a commit: name -> mode+oid, or null where the folder is absent. */
  const folder = async (c: CommitObject): Promise<{ tree: string; entries: Map<string, string> } | null> => {
    const at = clean ? await entryAtPath(repo, c.tree, clean) : { oid: c.tree, mode: '040000' };
    if (at?.mode !== '040000') return null;
    const entries = new Map(
      (await readTreeEntries(repo, at.oid, clean ? `${clean}/` : '')).map((e) => [
        e.path,
        `${e.mode} ${e.oid}`,
      ]),
    );
    return { tree: at.oid, entries };
  };

  const head = await folder(await read(start));
  const pending = new Set(head ? head.entries.keys() : []);
  const result: Record<string, EntryCommit> = {};
  // In git log's order, so an entry gets the commit `git log -1 -- <entry>` names, ties included.
  const queue = commitQueue(repo);
  await queue.push(start);
  let walked = 0;
  const max = hooks.maxCommits ?? LAST_COMMITS_MAX_WALK;
  while (pending.size && queue.size && walked++ < max) {
    throwIfAborted(hooks.signal);
    const { oid, commit } = queue.pop()!;
    const mine = await folder(commit);
    const parents = shallow.has(oid) ? [] : commit.parent;
    const theirs = await Promise.all(parents.map(async (p) => folder(await read(p))));
    // The folder as one of its parents had it: nothing in it changed here.
    if (!theirs.some((t) => t?.tree === mine?.tree)) {
      for (const name of pending) {
        const here = mine?.entries.get(name);
        const changed =
          theirs.length === 0 ? here !== undefined : theirs.every((t) => t?.entries.get(name) !== here);
        if (changed) {
          result[name] = { oid, subject: commit.message.split('\n')[0], timestamp: commit.author.timestamp };
          pending.delete(name);
        }
      }
    }
    for (const p of parents) await queue.push(p);
  }
  return { entries: result, unresolved: [...pending] };
}
