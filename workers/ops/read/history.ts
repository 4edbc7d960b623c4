import git, { type CommitObject } from 'isomorphic-git';
import type { CommitQueue } from '../../model/commitQueue.ts';
import type { OpsContext } from '../common/engineContext.ts';
import {
  commitQueue,
  openRepo,
  type RepoHandle,
  resolveCommit,
  shallowCommits,
} from '../common/repoAccess.ts';

/** An author or committer line of a commit. */
export interface Signature {
  /** The person's name, as written in the commit. */
  name: string;
  /** The email, without its angle brackets. */
  email: string;
  /** When, in seconds since 1970-01-01 UTC. */
  timestamp: number;
  /** The local zone's offset in minutes, with the sign of `Date.getTimezoneOffset` (UTC+2 is -120). */
  timezoneOffset: number;
}

/** A commit's id, parents, message and signatures (not its tree). */
export interface CommitSummary {
  /** The commit's id. */
  oid: string;
  /** The parents' ids, first parent first; empty for a root commit. */
  parents: string[];
  /** The whole message, subject first, as stored. */
  message: string;
  /** Who wrote the change, and when. */
  author: Signature;
  /** Who made the commit, and when. */
  committer: Signature;
}

/** One page of log. */
export interface LogPage {
  /** The page's commits, newest first as `git rev-list` orders them. */
  commits: CommitSummary[];
  /** False once the walk reached the roots (or the shallow boundary). */
  more: boolean;
}

/** `git rev-list <start>`, a page at a time. */
class CommitWalk {
  private readonly queue: CommitQueue<CommitObject>;
  emitted = 0;

  constructor(
    repo: RepoHandle,
    private readonly shallow: Set<string>,
  ) {
    this.queue = commitQueue(repo);
  }

  async start(oid: string): Promise<void> {
    await this.queue.push(oid);
  }

  get done(): boolean {
    return this.queue.size === 0;
  }

  async next(count: number): Promise<CommitSummary[]> {
    const out: CommitSummary[] = [];
    while (out.length < count && this.queue.size) {
      const { oid, commit } = this.queue.pop()!;
      out.push({
        oid,
        parents: commit.parent,
        message: commit.message,
        author: commit.author,
        committer: commit.committer,
      });
      if (!this.shallow.has(oid)) for (const p of commit.parent) await this.queue.push(p);
    }
    this.emitted += out.length;
    return out;
  }
}

/**
 * The walk of the last page asked for, one per repo (for its latest start commit), so scrolling a long
 * history costs one page of work per page instead of re-walking from the top. Calls on a repo are chained:
 * two pages asked for at once must not interleave one walk. One per engine.
 */
export class LogWalks {
  readonly walks = new Map<string, { start: string; walk: CommitWalk }>();
  readonly chains = new Map<string, Promise<unknown>>();

  forget(repoId: string): void {
    this.walks.delete(repoId);
    this.chains.delete(repoId);
  }
}

export interface HistoryContext extends OpsContext {
  readonly logWalks: LogWalks;
}

/** One page of history in committer-date order, newest first, as `git rev-list <ref>` without --topo-order. */
export function log(
  ctx: HistoryContext,
  repoId: string,
  ref: string,
  page: { limit?: number; skip?: number } = {},
): Promise<LogPage> {
  const { chains } = ctx.logWalks;
  const run = (chains.get(repoId) ?? Promise.resolve())
    .catch(() => undefined)
    .then(() => logPage(ctx, repoId, ref, page));
  chains.set(repoId, run);
  return run;
}

async function logPage(
  ctx: HistoryContext,
  repoId: string,
  ref: string,
  page: { limit?: number; skip?: number },
): Promise<LogPage> {
  const limit = Math.max(1, page.limit ?? 50);
  const skip = Math.max(0, page.skip ?? 0);
  const repo = await openRepo(ctx, repoId);
  const start = await resolveCommit(repo, ref);
  const { walks } = ctx.logWalks;
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

/** One commit, for the commit view. */
export async function readCommit(ctx: OpsContext, repoId: string, ref: string): Promise<CommitSummary> {
  const repo = await openRepo(ctx, repoId);
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
