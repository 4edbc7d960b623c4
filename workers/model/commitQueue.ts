import git, { type CommitObject } from 'isomorphic-git';
import type { RepoHandle } from '../ops/repoAccess.ts';

export interface QueuedCommit {
  oid: string;
  commit: CommitObject;
}

/**
 * The commits a history walk has reached and not yet shown, in `git rev-list` order: the most recent
 * committer date first, ties in the order they were reached (git's prio_queue is stable the same way).
 * Each commit enters once; `skip` keeps some out altogether (compare's excluded ancestors).
 */
export class CommitQueue {
  // Sorted newest last, so pop() is O(1); binary insertion keeps it sorted.
  private readonly items: (QueuedCommit & { time: number; seq: number })[] = [];
  private readonly seen = new Set<string>();
  private seq = 0;

  constructor(
    private readonly repo: RepoHandle,
    private readonly skip?: Set<string>,
  ) {}

  get size(): number {
    return this.items.length;
  }

  async push(oid: string): Promise<void> {
    if (this.seen.has(oid) || this.skip?.has(oid)) return;
    this.seen.add(oid);
    const { commit } = await git.readCommit({
      fs: this.repo.fs,
      gitdir: this.repo.gitdir,
      oid,
      cache: this.repo.cache,
    });
    const item = { oid, commit, time: commit.committer.timestamp, seq: this.seq++ };
    let lo = 0;
    let hi = this.items.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      const q = this.items[mid];
      if (q.time < item.time || (q.time === item.time && q.seq > item.seq)) lo = mid + 1;
      else hi = mid;
    }
    this.items.splice(lo, 0, item);
  }

  /** The newest commit reached; undefined when the queue is empty. */
  pop(): QueuedCommit | undefined {
    return this.items.pop();
  }
}
