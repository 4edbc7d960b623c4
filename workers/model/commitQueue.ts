/** What the queue needs of a commit: its committer's date (seconds, as git's commit header has it). */
export interface DatedCommit {
  committer: { timestamp: number };
}

export interface QueuedCommit<C extends DatedCommit = DatedCommit> {
  oid: string;
  commit: C;
}

/**
 * Items by date, the most recent first, ties in the order they were pushed: git's prio_queue as its
 * revision walk and blame use it (compare_commits_by_commit_date, stable by insertion).
 */
export class DateQueue<T> {
  // Sorted newest last, so pop() is O(1); binary insertion keeps it sorted.
  private readonly items: { item: T; time: number; seq: number }[] = [];
  private seq = 0;

  get size(): number {
    return this.items.length;
  }

  push(item: T, time: number): void {
    const entry = { item, time, seq: this.seq++ };
    let lo = 0;
    let hi = this.items.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      const q = this.items[mid];
      if (q.time < entry.time || (q.time === entry.time && q.seq > entry.seq)) lo = mid + 1;
      else hi = mid;
    }
    this.items.splice(lo, 0, entry);
  }

  /** The most recent item; undefined when the queue is empty. */
  pop(): T | undefined {
    return this.items.pop()?.item;
  }

  /** The first queued item that passes `test`, oldest first. */
  find(test: (item: T) => boolean): T | undefined {
    return this.items.find((q) => test(q.item))?.item;
  }
}

/**
 * The commits a history walk has reached and not yet shown, in `git rev-list` order: the most recent
 * committer date first, ties in the order they were reached (git's prio_queue is stable the same way).
 * Each commit enters once; `skip` keeps some out altogether (compare's excluded ancestors).
 */
export class CommitQueue<C extends DatedCommit = DatedCommit> {
  private readonly queue = new DateQueue<QueuedCommit<C>>();
  private readonly seen = new Set<string>();

  constructor(
    private readonly read: (oid: string) => Promise<C>,
    private readonly skip?: Set<string>,
  ) {}

  get size(): number {
    return this.queue.size;
  }

  async push(oid: string): Promise<void> {
    if (this.seen.has(oid) || this.skip?.has(oid)) return;
    this.seen.add(oid);
    const commit = await this.read(oid);
    this.queue.push({ oid, commit }, commit.committer.timestamp);
  }

  /** The newest commit reached; undefined when the queue is empty. */
  pop(): QueuedCommit<C> | undefined {
    return this.queue.pop();
  }
}
