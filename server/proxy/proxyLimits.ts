// What one request through the proxy may cost it. Anyone can send a request that passes the Origin check
// (curl sets any Origin it likes): these caps, not the Origin, bound what a stranger gets out of a proxy.
// docs/decisions/proxy-limits.md has the measurements that chose each default.

export interface ProxyLimits {
  /**
   * Bytes of an upload-pack POST's body: ls-refs, and a fetch's `want`/`have` negotiation. A clone of the
   * largest fixture sends 1.9 KB; git's own fetch with 1,200 local-only commits over 60,000 shared ones
   * (a git.git-sized history) sends at most 107 KB in one round (docs/decisions/proxy-limits.md).
   */
  maxRequestBytes: number;
  /**
   * Bytes of a receive-pack POST's body: the pushed pack. 100 MiB: Cloudflare's request body limit on
   * its Free and Pro plans, and GitHub's limit for one file.
   */
  maxPushBytes: number;
  /** Bytes of one answer from the git host, after which it is cut (the client sees a broken transfer). */
  maxResponseBytes: number;
  /** Milliseconds one request may take from its arrival to the answer's last byte. */
  maxTotalMs: number;
  /**
   * Milliseconds the git host may send nothing before the request is given up: the client's own stall
   * timeout (workers/transport/retryPolicy.ts STALL_TIMEOUT_MS), twelve of upload-pack's keep-alives.
   */
  idleTimeoutMs: number;
}

export const DEFAULT_PROXY_LIMITS: ProxyLimits = {
  maxRequestBytes: 1024 * 1024,
  maxPushBytes: 100 * 1024 * 1024,
  maxResponseBytes: 2 * 1024 * 1024 * 1024,
  maxTotalMs: 10 * 60_000,
  idleTimeoutMs: 60_000,
};

/** The in-memory limiter's allowance per client (Node, Deno): see docs/decisions/proxy-limits.md. */
export const DEFAULT_RATE_LIMIT = { burst: 60, perSecond: 2 };
