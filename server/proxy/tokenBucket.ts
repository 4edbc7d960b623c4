// Web-standard only: the in-memory limiter of the Node and Deno entries (Workers use the platform's binding).

/** Counts requests per client; the proxy answers 429 with `Retry-After` when one is over its allowance. */
export interface RateLimiter {
  /** Counts one request of `key`: 0 when it may go on, else the seconds until it may. */
  take(key: string): number | Promise<number>;
}

export interface TokenBucketOptions {
  /** Requests a client may make at once (the bucket's size). */
  burst: number;
  /** Requests a client may make per second once the burst is spent (the bucket's refill). */
  perSecond: number;
  /**
   * Clients remembered at most. A bucket that has refilled is forgotten first; past this, the oldest,
   * so a flood of addresses costs memory in proportion to this, not to the flood.
   */
  maxClients?: number;
  now?: () => number;
}

interface Bucket {
  tokens: number;
  at: number;
}

/** A token bucket per client key, in this process's memory (so per instance of the proxy). */
export function tokenBucket(opts: TokenBucketOptions): RateLimiter {
  const { burst, perSecond } = opts;
  const maxClients = opts.maxClients ?? 10_000;
  const now = opts.now ?? Date.now;
  const buckets = new Map<string, Bucket>();
  const refill = (b: Bucket, t: number) => {
    b.tokens = Math.min(burst, b.tokens + ((t - b.at) / 1000) * perSecond);
    b.at = t;
  };
  const forget = (t: number) => {
    for (const [key, b] of buckets) {
      refill(b, t);
      if (b.tokens >= burst) buckets.delete(key);
    }
    for (const key of buckets.keys()) {
      if (buckets.size < maxClients) break;
      buckets.delete(key);
    }
  };
  return {
    take(key: string): number {
      const t = now();
      let bucket = buckets.get(key);
      if (bucket) refill(bucket, t);
      else {
        if (buckets.size >= maxClients) forget(t);
        bucket = { tokens: burst, at: t };
        buckets.set(key, bucket);
      }
      if (bucket.tokens >= 1) {
        bucket.tokens -= 1;
        return 0;
      }
      return (1 - bucket.tokens) / perSecond;
    },
  };
}
