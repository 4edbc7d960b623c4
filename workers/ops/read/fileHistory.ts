// The commits that changed one path, following renames as `git log --follow` does: from trees, but for
// the blobs a rename with edits must be scored by, fetched in one request where the path was added.

import { pathKeys, pathMaybeChanged } from '../../commitgraph/bloomFilter.ts';
import type { CommitGraph } from '../../commitgraph/commitGraph.ts';
import { detectRenames, type RenamedPair, renameBlobsNeeded } from '../../diff/renames.ts';
import { DateQueue, type QueuedCommit } from '../../model/commitQueue.ts';
import { type CommitHeader, commitGraphFor, commitHeaders } from '../common/commitGraphAccess.ts';
import { throwIfAborted } from '../common/errors.ts';
import {
  openRepo,
  type RepoHandle,
  readCommitObject,
  resolveCommit,
  shallowCommits,
} from '../common/repoAccess.ts';
import { TreeEntriesCache } from '../common/treePair.ts';
import type { BlobContext, BlobFetchHooks } from '../sync/lazyBlobs.ts';
import { readBlobs, treeFilePairs } from './diff.ts';
import type { CommitSummary } from './history.ts';
import { entryAtPath, HISTORY_TREE_CACHE, type TreeEntryRef } from './treePaths.ts';

/** A commit that changed the file, and what it did to it. */
export interface FileHistoryEntry {
  /** The commit. */
  commit: CommitSummary;
  /** The path in this commit. */
  path: string;
  /** The file's blob in this commit; absent where the commit deleted it. */
  blob?: string;
  /** Set where the file came from another path in this commit (a rename or a copy). */
  renamedFrom?: string;
  /** For a rename or a copy: how similar the two are, in percent, as `git log --follow --stat` shows it. */
  similarity?: number;
  /** What the commit did to the file, as `git log --follow --name-status` says. */
  status: 'added' | 'modified' | 'deleted' | 'renamed' | 'copied';
}

/** One page of fileHistory. */
export interface FileHistoryPage {
  /** The page's commits, newest first. */
  entries: FileHistoryEntry[];
  /** False once the walk reached the roots (or the shallow boundary). */
  more: boolean;
}

export interface FileHistoryHooks {
  signal?: AbortSignal;
  connection?: BlobFetchHooks['connection'];
}

/**
 * --follow's rename limit (diff.renameLimit): past 40² files in the parent, unchanged files stop being copy
 * sources, as git degrades `-C -C` to `-C` past its limit. Following a file to the commit that added it then
 * fetches the blobs that commit changed, not every blob of its tree: with git's 1,000, a file added to a
 * 20,000-file tree would fetch 20,000 blobs to look for the one it was copied from.
 */
export const FOLLOW_RENAME_LIMIT = 40;

function sameEntry(a: TreeEntryRef | null, b: TreeEntryRef | null): boolean {
  return a === b || (a !== null && b !== null && a.oid === b.oid && a.mode === b.mode);
}

/**
 * The walk of `git log --follow -- <path>` (git 2.39): every commit, in committer-date order, with no
 * history simplification (--follow turns pruning off); merges are never shown; a commit is shown when its
 * diff against its parent touches the path. One path is followed for the whole walk: where a commit adds
 * it, the path becomes the file it was renamed or copied from, found as git does (diffcore-rename with
 * copies from every file of the parent, by similarity), whose blobs are fetched in one request.
 */
class FileHistoryWalk {
  /**
   * The commits reached and not yet shown (git's prio_queue, as model/commitQueue.ts): by graph position
   * where the commit-graph holds the commit, so the walk through the many commits that leave the path
   * alone reads no object and makes no id string; else by id with the header read from the object.
   */
  private readonly queue = new DateQueue<number | QueuedCommit<CommitHeader>>();
  private readonly seenAt: Uint8Array;
  private readonly seen = new Set<string>();
  private readonly header: (oid: string) => Promise<CommitHeader>;
  private readonly trees = new TreeEntriesCache(HISTORY_TREE_CACHE);
  /** The followed path's Bloom keys (the path and its folders). */
  private keys: Uint32Array[];
  emitted = 0;

  constructor(
    private readonly ctx: BlobContext,
    private readonly repoId: string,
    private readonly repo: RepoHandle,
    private readonly shallow: Set<string>,
    private readonly graph: CommitGraph | null,
    public path: string,
  ) {
    this.header = commitHeaders(graph, (oid) => readCommitObject(repo, oid));
    this.seenAt = new Uint8Array(graph?.size ?? 0);
    this.keys = pathKeys(path);
  }

  get done(): boolean {
    return this.queue.size === 0;
  }

  async push(oid: string): Promise<void> {
    const position = this.graph ? this.graph.position(oid) : -1;
    if (position >= 0) return this.pushAt(position);
    if (this.seen.has(oid)) return;
    this.seen.add(oid);
    const commit = await readCommitObject(this.repo, oid);
    this.queue.push({ oid, commit }, commit.committer.timestamp);
  }

  private pushAt(position: number): void {
    if (this.seenAt[position]) return;
    this.seenAt[position] = 1;
    this.queue.push(position, this.graph!.commitTime(position));
  }

  /** The next `count` entries; walks as far as it must to find them. */
  async next(count: number, hooks: FileHistoryHooks = {}): Promise<FileHistoryEntry[]> {
    const out: FileHistoryEntry[] = [];
    const graph = this.graph;
    const shallow = this.shallow.size > 0;
    while (out.length < count && this.queue.size) {
      throwIfAborted(hooks.signal);
      const item = this.queue.pop()!;
      let oid: string;
      let commit: CommitHeader;
      if (typeof item === 'number') {
        const parents = graph!.parents(item);
        // Most commits leave the path alone: the Bloom filter says so without a string or a tree read.
        if (!shallow) {
          for (const p of parents) this.pushAt(p);
          if (parents.length > 1) continue;
          if (parents.length === 1) {
            const filter = graph!.bloomFilter(item);
            if (filter !== null && !pathMaybeChanged(filter, this.keys)) continue;
          }
        }
        oid = graph!.oid(item);
        commit = await this.header(oid);
        if (shallow) {
          if (this.shallow.has(oid)) commit = { ...commit, parent: [] };
          for (const p of commit.parent) await this.push(p);
          if (commit.parent.length > 1) continue;
        }
      } else {
        ({ oid, commit } = item);
        if (this.shallow.has(oid)) commit = { ...commit, parent: [] };
        for (const p of commit.parent) await this.push(p);
        if (commit.parent.length > 1) continue;
      }
      const entry = await this.entry(oid, commit, hooks);
      if (entry) out.push(entry);
    }
    this.emitted += out.length;
    return out;
  }

  /** The entry of a commit with at most one parent, or null when its diff leaves the path alone. */
  private async entry(
    oid: string,
    commit: CommitHeader,
    hooks: FileHistoryHooks,
  ): Promise<FileHistoryEntry | null> {
    const parents = commit.parent;
    const parentTree = parents.length ? (await this.header(parents[0])).tree : null;
    const mine = await entryAtPath(this.repo, commit.tree, this.path, this.trees);
    const theirs =
      parentTree === null ? null : await entryAtPath(this.repo, parentTree, this.path, this.trees);
    if (sameEntry(mine, theirs)) return null;
    const full = await readCommitObject(this.repo, oid);
    const summary: CommitSummary = {
      oid,
      parents: full.parent,
      message: full.message,
      author: full.author,
      committer: full.committer,
    };
    const path = this.path;
    if (mine === null) return { commit: summary, path, status: 'deleted' };
    const blob = mine.oid;
    if (theirs === null && parentTree !== null) {
      const source = await this.renameSource(parentTree, commit.tree, hooks);
      if (!source) return { commit: summary, path, blob, status: 'added' };
      this.path = source.old!.path;
      this.keys = pathKeys(this.path);
      return {
        commit: summary,
        path,
        blob,
        renamedFrom: source.old!.path,
        similarity: source.similarity,
        status: source.status === 'C' ? 'copied' : 'renamed',
      };
    }
    return { commit: summary, path, blob, status: theirs === null ? 'added' : 'modified' };
  }

  /** What `git log --follow` pairs the added path with: try_to_follow_renames (-C --find-copies-harder). */
  private async renameSource(
    parentTree: string,
    tree: string,
    hooks: FileHistoryHooks,
  ): Promise<RenamedPair | null> {
    const opts = {
      detect: 'copies',
      findCopiesHarder: true,
      singleFollow: this.path,
      renameLimit: FOLLOW_RENAME_LIMIT,
    } as const;
    const pairs = await treeFilePairs(this.repo, parentTree, tree, true);
    const blobs = await readBlobs(this.ctx, this.repoId, renameBlobsNeeded(pairs, opts), {
      signal: hooks.signal,
      connection: hooks.connection,
    });
    const found = detectRenames(pairs, (oid) => blobs.get(oid), opts).pairs.find(
      (p) => (p.status === 'R' || p.status === 'C') && p.new?.path === this.path,
    );
    return found ?? null;
  }
}

/** As for the history list: the walk of the last page asked for is kept, so paging costs one page of work. */
export class FileHistoryWalks {
  readonly walks = new Map<string, { key: string; walk: FileHistoryWalk }>();

  forget(repoId: string): void {
    this.walks.delete(repoId);
  }
}

export interface FileHistoryContext extends BlobContext {
  readonly fileWalks: FileHistoryWalks;
}

/** One page of the history of `path` from `ref`, newest first. */
export async function fileHistory(
  ctx: FileHistoryContext,
  repoId: string,
  ref: string,
  path: string,
  page: { limit?: number; skip?: number } = {},
  hooks: FileHistoryHooks = {},
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
    walk = new FileHistoryWalk(
      ctx,
      repoId,
      repo,
      await shallowCommits(repo),
      await commitGraphFor(repo),
      clean,
    );
    await walk.push(start);
    walks.set(repoId, { key, walk });
  }
  while (walk.emitted < skip && !walk.done) await walk.next(Math.min(500, skip - walk.emitted), hooks);
  const entries = await walk.next(limit, hooks);
  return { entries, more: !walk.done };
}
