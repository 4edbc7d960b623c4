// What one request through the proxy may cost it. Anyone can send a request that passes the Origin check
// (curl sets any Origin it likes): these caps, not the Origin, bound what a stranger gets out of a proxy.
// docs/decisions/proxy-limits.md has the measurements that chose each default.

export interface ProxyLimits {
  /**
   * Bytes of an upload-pack POST's body: ls-refs, and a fetch's `want`/`have` negotiation. Default 4 MiB:
   * 10 times the largest measured (git's fetch of a fork with 20,000 commits of its own over large.git's
   * 50,000, 406 KB in its last round), 5 times git's next round, 7.8 times the largest blob batch Blobless
   * plans at 3.1 KB a blob.
   */
  maxRequestBytes: number;
  /**
   * Bytes of a receive-pack POST's body: the pushed pack. 100 MiB: Cloudflare's request body limit on
   * its Free and Pro plans, and GitHub's limit for one file.
   */
  maxPushBytes: number;
  /**
   * Bytes of one answer from the git host, after which it is cut (the client sees a broken transfer).
   * Default 1 GiB: 28 times the largest measured (37 MB, a large.git history step).
   */
  maxResponseBytes: number;
  /**
   * Milliseconds one request may take from its arrival to the answer's last byte. Default 10 minutes: 20
   * times the longest measured (28.9 s on loopback), a 1 GiB answer at 14 Mbit/s.
   */
  maxTotalMs: number;
  /**
   * Milliseconds the git host may send nothing before the request is given up: the client's own stall
   * timeout (workers/transport/retryPolicy.ts STALL_TIMEOUT_MS), twelve of upload-pack's keep-alives.
   */
  idleTimeoutMs: number;
}

export const DEFAULT_PROXY_LIMITS: ProxyLimits = {
  maxRequestBytes: 4 * 1024 * 1024,
  maxPushBytes: 100 * 1024 * 1024,
  maxResponseBytes: 1024 * 1024 * 1024,
  maxTotalMs: 10 * 60_000,
  idleTimeoutMs: 60_000,
};

/**
 * The in-memory limiter's allowance per client (Node, Deno): a bucket of 60 (five times the busiest ten
 * seconds of a large.git session, 11 requests), refilled 2 a second (nine times its busiest minute).
 */
export const DEFAULT_RATE_LIMIT = { burst: 60, perSecond: 2 };
