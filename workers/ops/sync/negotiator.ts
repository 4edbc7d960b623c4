// Chooses the `have` lines of a fetch (gitprotocol-v2: fetch, "have"). Commits newest first from every
// local ref; the first ones one after the other, as git's default ("consecutive") negotiator sends them,
// then the way its skipping negotiator does: each sent commit's ancestors skipped by a gap that grows by
// half each time (1, 2, 4, 7, 11, …), so a long local history that the server lacks costs a logarithmic
// number of haves, not one per commit. What the server ACKs, and everything below it, is never sent again.
// Our own implementation of the idea, not a port.
//
// Why consecutive first: in the usual fetch the first round already finds the common commits, and the
// server's pack then depends on exactly which haves it got (pack-objects takes a bounded number of the
// haves' trees as delta bases). Measured on basic.git plus 40 changed folders, the same want: the tip alone
// 2,582 bytes back, git's 6 consecutive haves 2,827, 3 skipping haves 3,109. Sending what git sends in
// round one gives git's pack, byte for byte.

export interface NegotiatorCommit {
  parents: string[];
  /** Committer time, seconds: the walk goes newest first. */
  time: number;
}

/** Reads a local commit; null when it is not stored (beyond a shallow boundary, or not a commit). */
export type CommitReader = (oid: string) => Promise<NegotiatorCommit | null>;

interface Entry {
  oid: string;
  time: number;
  parents: string[] | null;
  /** Commits to skip before the next one sent on this line of history. */
  ttl: number;
  /** The gap this line started with, which grows each time a commit is sent. */
  originalTtl: number;
  common: boolean;
  /** The server advertised it (a remote ref we hold): sent, but its ancestors need not be. */
  advertised: boolean;
  popped: boolean;
}

export class SkippingNegotiator {
  readonly #read: CommitReader;
  readonly #entries = new Map<string, Entry>();
  /** Not yet popped, newest last (popped from the end). */
  #queue: Entry[] = [];
  #nonCommon = 0;
  /** Commits treated as having no parents: a shallow clone's boundary. */
  readonly #shallow: Set<string>;
  readonly #consecutive: number;
  #sent = 0;

  /** `consecutive`: how many haves are sent before skipping starts (git's first round holds 16). */
  constructor(read: CommitReader, shallow: Iterable<string> = [], consecutive = 16) {
    this.#read = read;
    this.#shallow = new Set(shallow);
    this.#consecutive = consecutive;
  }

  /** A local ref's commit: where the walk starts. */
  async addTip(oid: string): Promise<void> {
    await this.#push(oid);
  }

  /** A commit the server advertised and we hold: sent once, its ancestors known to be common. */
  async knownCommon(oid: string): Promise<void> {
    const entry = await this.#push(oid);
    if (entry) entry.advertised = true;
  }

  /** The server ACKed it: it and every ancestor seen so far are common. True if that was known already. */
  ack(oid: string): boolean {
    const entry = this.#entries.get(oid);
    if (!entry) return false;
    const known = entry.common;
    this.#markCommon(entry);
    return known;
  }

  /** Up to `max` commits to send as `have`, newest first; fewer (or none) once the walk is exhausted. */
  async next(max: number): Promise<string[]> {
    const out: string[] = [];
    while (out.length < max) {
      const oid = await this.#nextOne();
      if (oid === null) break;
      out.push(oid);
    }
    return out;
  }

  async #nextOne(): Promise<string | null> {
    for (;;) {
      if (this.#queue.length === 0 || this.#nonCommon === 0) return null;
      const entry = this.#queue.pop()!;
      entry.popped = true;
      if (!entry.common) this.#nonCommon--;
      // What the server advertised is sent whatever the gap: it is sure to be ACKed.
      let send = !entry.common && (entry.ttl === 0 || entry.advertised);
      let pushedParent = false;
      for (const parent of entry.parents ?? []) {
        if (await this.#pushParent(entry, parent)) pushedParent = true;
      }
      // A root (or shallow boundary) is sent even inside a gap: nothing older would tell the server about it.
      if (!entry.common && !pushedParent) send = true;
      if (send) {
        this.#sent++;
        return entry.oid;
      }
    }
  }

  async #pushParent(child: Entry, oid: string): Promise<boolean> {
    const parent = this.#entries.get(oid) ?? (await this.#push(oid));
    // Gone already (reached again through clock skew), or not stored: as if it were not a parent.
    if (!parent || parent.popped) return false;
    if (child.common || child.advertised) {
      this.#markCommon(parent);
    } else if (this.#sent < this.#consecutive) {
      // Still in the consecutive stretch: no gap.
    } else {
      const originalTtl = child.ttl > 0 ? child.originalTtl : Math.floor((child.originalTtl * 3) / 2) + 1;
      const ttl = child.ttl > 0 ? child.ttl - 1 : originalTtl;
      if (parent.originalTtl < originalTtl) {
        parent.originalTtl = originalTtl;
        parent.ttl = ttl;
      }
    }
    return true;
  }

  async #push(oid: string): Promise<Entry | null> {
    const existing = this.#entries.get(oid);
    if (existing) return existing;
    const commit = await this.#read(oid);
    if (!commit) return null;
    const entry: Entry = {
      oid,
      time: commit.time,
      parents: this.#shallow.has(oid) ? [] : commit.parents,
      ttl: 0,
      originalTtl: 0,
      common: false,
      advertised: false,
      popped: false,
    };
    this.#entries.set(oid, entry);
    this.#nonCommon++;
    // Sorted insert, newest at the end; among equal times the earlier insertion pops first.
    const q = this.#queue;
    let lo = 0;
    let hi = q.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (q[mid].time < entry.time) lo = mid + 1;
      else hi = mid;
    }
    q.splice(lo, 0, entry);
    return entry;
  }

  #markCommon(start: Entry): void {
    const stack = [start];
    while (stack.length > 0) {
      const entry = stack.pop()!;
      if (entry.common) continue;
      entry.common = true;
      if (!entry.popped) this.#nonCommon--;
      for (const parent of entry.parents ?? []) {
        const seen = this.#entries.get(parent);
        if (seen) stack.push(seen);
      }
    }
  }
}
