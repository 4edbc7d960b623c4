/** Tests run in other processes than the server, so the counters are readable over HTTP too. */
export const STATS_PATH = '/_blobless/stats';
export const STATS_RESET_PATH = '/_blobless/stats/reset';

/** What one repository (or the whole server) has been asked for and has answered. */
export interface RepoStats {
  /** Git requests (GET and POST), including ones answered 401 or 404. */
  requests: number;
  /** CORS preflights (OPTIONS), counted apart because browsers cache them and Node clients never send them. */
  preflights: number;
  /**
   * `POST git-upload-pack` requests that ask for objects: a clone's fetch, a lazy blob fetch, not an
   * `ls-refs` (a gzip-compressed body, which git sends for large requests, counts: an overcount at worst).
   */
  fetches: number;
  /** `POST git-receive-pack` requests: pushes. */
  pushes: number;
  /** Response body bytes, as written to the socket (after http-backend's own compression, if any). */
  bytesSent: number;
  /** Request body bytes, as received (still gzip-compressed when the client compressed them). */
  bytesReceived: number;
}

export interface ServerStats {
  repos: Record<string, RepoStats>;
  total: RepoStats;
}

export function emptyRepoStats(): RepoStats {
  return { requests: 0, preflights: 0, fetches: 0, pushes: 0, bytesSent: 0, bytesReceived: 0 };
}

/** Per-repository counters; tests in other processes read them over HTTP, so they are plain numbers. */
export class RepoStatsTable {
  private repos = new Map<string, RepoStats>();

  counters(repo: string): RepoStats {
    let stats = this.repos.get(repo);
    if (!stats) {
      stats = emptyRepoStats();
      this.repos.set(repo, stats);
    }
    return stats;
  }

  /** A copy, so callers can compare snapshots taken before and after an operation. */
  snapshot(): ServerStats {
    const repos: Record<string, RepoStats> = {};
    const total = emptyRepoStats();
    for (const [repo, stats] of [...this.repos].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) {
      repos[repo] = { ...stats };
      total.requests += stats.requests;
      total.preflights += stats.preflights;
      total.fetches += stats.fetches;
      total.pushes += stats.pushes;
      total.bytesSent += stats.bytesSent;
      total.bytesReceived += stats.bytesReceived;
    }
    return { repos, total };
  }

  reset(): void {
    this.repos.clear();
  }
}
