import git, { type CommitObject } from 'isomorphic-git';
import { openRepo, type RepoHandle, resolveCommit, shallowCommits } from './repoAccess.ts';

export interface Signature {
  name: string;
  email: string;
  timestamp: number;
  timezoneOffset: number;
}

export interface CommitSummary {
  oid: string;
  parents: string[];
  message: string;
  author: Signature;
  committer: Signature;
}

export interface LogPage {
  commits: CommitSummary[];
  /** False once the walk reached the roots (or the shallow boundary). */
  more: boolean;
}

/**
 * A walk in `git rev-list` order: the most recent committer date first, ties in the order commits were
 * reached (git's prio_queue is stable the same way).
 */
class CommitWalk {
  private readonly queue: { oid: string; time: number; seq: number; commit: CommitObject }[] = [];
  private readonly seen = new Set<string>();
  private seq = 0;
  emitted = 0;

  constructor(
    private readonly repo: RepoHandle,
    private readonly shallow: Set<string>,
  ) {}

  async start(oid: string): Promise<void> {
    await this.push(oid);
  }

  get done(): boolean {
    return this.queue.length === 0;
  }

  private async push(oid: string): Promise<void> {
    if (this.seen.has(oid)) return;
    this.seen.add(oid);
    const { commit } = await git.readCommit({
      fs: this.repo.fs,
      gitdir: this.repo.gitdir,
      oid,
      cache: this.repo.cache,
    });
    const item = { oid, time: commit.committer.timestamp, seq: this.seq++, commit };
    // Binary insertion keeps the queue sorted: newest last, so pop() is O(1).
    let lo = 0;
    let hi = this.queue.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      const q = this.queue[mid];
      if (q.time < item.time || (q.time === item.time && q.seq > item.seq)) lo = mid + 1;
      else hi = mid;
    }
    this.queue.splice(lo, 0, item);
  }

  async next(count: number): Promise<CommitSummary[]> {
    const out: CommitSummary[] = [];
    while (out.length < count && this.queue.length) {
      const { oid, commit } = this.queue.pop()!;
      out.push({
        oid,
        parents: commit.parent,
        message: commit.message,
        author: commit.author,
        committer: commit.committer,
      });
      if (!this.shallow.has(oid)) for (const p of commit.parent) await this.push(p);
    }
    this.emitted += out.length;
    return out;
  }
}

// The walk of the last page asked for, one per repo (for its latest start commit), so scrolling a long
// history costs one page of work per page instead of re-walking from the top. Calls on a repo are chained:
// two pages asked for at once must not interleave one walk.
const walks = new Map<string, { start: string; walk: CommitWalk }>();
const chains = new Map<string, Promise<unknown>>();

/** One page of history in committer-date order, newest first, as `git rev-list <ref>` without --topo-order. */
export function log(
  repoId: string,
  ref: string,
  page: { limit?: number; skip?: number } = {},
): Promise<LogPage> {
  const run = (chains.get(repoId) ?? Promise.resolve())
    .catch(() => undefined)
    .then(() => logPage(repoId, ref, page));
  chains.set(repoId, run);
  return run;
}

async function logPage(
  repoId: string,
  ref: string,
  page: { limit?: number; skip?: number },
): Promise<LogPage> {
  const limit = Math.max(1, page.limit ?? 50);
  const skip = Math.max(0, page.skip ?? 0);
  const repo = await openRepo(repoId);
  const start = await resolveCommit(repo, ref);
  const kept = walks.get(repoId);
  let walk = kept?.start === start ? kept.walk : undefined;
  if (!walk || walk.emitted > skip) {
    walk = new CommitWalk(repo, await shallowCommits(repo));
    await walk.start(start);
    walks.set(repoId, { start, walk });
  }
  while (walk.emitted < skip && !walk.done) await walk.next(Math.min(1000, skip - walk.emitted));
  const commits = await walk.next(limit);
  return { commits, more: !walk.done };
}

export function forgetWalks(repoId: string): void {
  walks.delete(repoId);
  chains.delete(repoId);
}

/** One commit, for the commit view. */
export async function readCommit(repoId: string, ref: string): Promise<CommitSummary> {
  const repo = await openRepo(repoId);
  const oid = await resolveCommit(repo, ref);
  const { commit } = await git.readCommit({ fs: repo.fs, gitdir: repo.gitdir, oid, cache: repo.cache });
  return {
    oid,
    parents: commit.parent,
    message: commit.message,
    author: commit.author,
    committer: commit.committer,
  };
}
