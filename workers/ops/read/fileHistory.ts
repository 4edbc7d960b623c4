// The commits that changed one path, following renames as `git log --follow` does, computed from trees so
// that no blob is fetched until a diff is opened.

import type { CommitObject } from 'isomorphic-git';
import type { CommitQueue } from '../../model/commitQueue.ts';
import type { OpsContext } from '../common/engineContext.ts';
import { throwIfAborted } from '../common/errors.ts';
import {
  commitQueue,
  openRepo,
  type RepoHandle,
  resolveCommit,
  shallowCommits,
} from '../common/repoAccess.ts';
import type { CommitSummary } from './history.ts';
import { blobsByOid, commitTree, entryAtPath, type TreeEntryRef } from './treePaths.ts';

export interface FileHistoryEntry {
  commit: CommitSummary;
  /** The path in this commit. */
  path: string;
  /** Set where the file came from another path in this commit (a rename or a copy). */
  renamedFrom?: string;
  status: 'added' | 'modified' | 'deleted' | 'renamed';
}

export interface FileHistoryPage {
  entries: FileHistoryEntry[];
  /** False once the walk reached the roots (or the shallow boundary). */
  more: boolean;
}

function sameEntry(a: TreeEntryRef | null, b: TreeEntryRef | null): boolean {
  return a === b || (a !== null && b !== null && a.oid === b.oid && a.mode === b.mode);
}

/**
 * The walk of `git log --follow -- <path>`: commits in committer-date order; a commit is shown when the
 * path differs from its parents'; a merge that leaves the path as one parent had it is not shown, and only
 * that parent is followed (git's history simplification). Like git's --follow, one path is followed for
 * the whole walk, and it changes when a commit adds the path with the content of another path of its
 * parent. Renames are found by identical content (mode and blob id), from trees alone: a rename whose
 * content also changed in the same commit needs the blobs to score their similarity, and ends the
 * history there, as an addition.
 */
class FileHistoryWalk {
  private readonly queue: CommitQueue<CommitObject>;
  emitted = 0;

  constructor(
    private readonly repo: RepoHandle,
    private readonly shallow: Set<string>,
    public path: string,
  ) {
    this.queue = commitQueue(repo);
  }

  get done(): boolean {
    return this.queue.size === 0;
  }

  push(oid: string): Promise<void> {
    return this.queue.push(oid);
  }

  /** The next `count` entries; walks as far as it must to find them. */
  async next(count: number, signal?: AbortSignal): Promise<FileHistoryEntry[]> {
    const out: FileHistoryEntry[] = [];
    while (out.length < count && this.queue.size) {
      throwIfAborted(signal);
      const { oid, commit } = this.queue.pop()!;
      const parents = this.shallow.has(oid) ? [] : commit.parent;
      const mine = await entryAtPath(this.repo, commit.tree, this.path);
      const theirs = await Promise.all(
        parents.map(async (p) => entryAtPath(this.repo, await commitTree(this.repo, p), this.path)),
      );
      const same = theirs.findIndex((t) => sameEntry(t, mine));
      if (same >= 0) {
        // Unchanged against that parent: not shown, and the other parents' lines of history are pruned.
        await this.push(parents[same]);
        continue;
      }
      const summary: CommitSummary = {
        oid,
        parents: commit.parent,
        message: commit.message,
        author: commit.author,
        committer: commit.committer,
      };
      const path = this.path;
      if (mine === null) {
        out.push({ commit: summary, path, status: 'deleted' });
      } else if (theirs.length > 0 && theirs.every((t) => t === null)) {
        const source = await this.renameSource(parents[0], mine, commit.tree);
        if (source) {
          out.push({ commit: summary, path, renamedFrom: source, status: 'renamed' });
          this.path = source;
        } else {
          out.push({ commit: summary, path, status: 'added' });
        }
      } else {
        out.push({ commit: summary, path, status: theirs.length === 0 ? 'added' : 'modified' });
      }
      for (const p of parents) await this.push(p);
    }
    this.emitted += out.length;
    return out;
  }

  /**
   * A path of the parent with the same content: git's --follow looks for copies too (every path of the
   * parent is a candidate), and of several it prefers one the commit removed (a rename), then one with the
   * same file name, then the first in path order.
   */
  private async renameSource(parent: string, mine: TreeEntryRef, tree: string): Promise<string | null> {
    const candidates = (await blobsByOid(this.repo, await commitTree(this.repo, parent))).get(
      `${mine.mode} ${mine.oid}`,
    );
    if (!candidates?.length) return null;
    const removed: string[] = [];
    for (const c of candidates) if ((await entryAtPath(this.repo, tree, c)) === null) removed.push(c);
    const pool = removed.length ? removed : candidates;
    const base = this.path.slice(this.path.lastIndexOf('/') + 1);
    return pool.find((c) => c.slice(c.lastIndexOf('/') + 1) === base) ?? pool[0];
  }
}

/** As for the history list: the walk of the last page asked for is kept, so paging costs one page of work. */
export class FileHistoryWalks {
  readonly walks = new Map<string, { key: string; walk: FileHistoryWalk }>();

  forget(repoId: string): void {
    this.walks.delete(repoId);
  }
}

export interface FileHistoryContext extends OpsContext {
  readonly fileWalks: FileHistoryWalks;
}

/** One page of the history of `path` from `ref`, newest first. */
export async function fileHistory(
  ctx: FileHistoryContext,
  repoId: string,
  ref: string,
  path: string,
  page: { limit?: number; skip?: number } = {},
  hooks: { signal?: AbortSignal } = {},
): Promise<FileHistoryPage> {
  const limit = Math.max(1, page.limit ?? 50);
  const skip = Math.max(0, page.skip ?? 0);
  const clean = path.replace(/^\/+|\/+$/g, '');
  const repo = await openRepo(ctx, repoId);
  const start = await resolveCommit(repo, ref);
  const key = `${start}\0${clean}`;
  const { walks } = ctx.fileWalks;
  const kept = walks.get(repoId);
  let walk = kept?.key === key ? kept.walk : undefined;
  if (!walk || walk.emitted > skip) {
    walk = new FileHistoryWalk(repo, await shallowCommits(repo), clean);
    await walk.push(start);
    walks.set(repoId, { key, walk });
  }
  while (walk.emitted < skip && !walk.done) await walk.next(Math.min(500, skip - walk.emitted), hooks.signal);
  const entries = await walk.next(limit, hooks.signal);
  return { entries, more: !walk.done };
}
