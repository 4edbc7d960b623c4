// The proxy on Cloudflare Workers: settings from the Worker's `vars` (proxyEnv.ts), the rate limit from
// the platform's rate-limiting binding. deploy/cloudflare/ mounts it beside the app's static files.

import { type GitProxyOptions, handleGitProxy } from './gitProxy.ts';
import { type ProxyEnv, positive, proxyOptionsFromEnv } from './proxyEnv.ts';
import type { RateLimiter } from './tokenBucket.ts';

/** Workers' rate-limiting binding (`ratelimits` in the wrangler configuration). */
export interface RateLimitBinding {
  limit(options: { key: string }): Promise<{ success: boolean }>;
}

export type WorkerEnv = ProxyEnv & {
  /** The binding, named GIT_PROXY_LIMITER in deploy/cloudflare/wrangler.jsonc. */
  GIT_PROXY_LIMITER?: RateLimitBinding;
  /** The binding's `period` in seconds (10 or 60): the binding does not say when a client may go on. */
  RATE_LIMIT_PERIOD?: string;
};

/**
 * The binding as the proxy's limiter. It counts per key within a period of 10 or 60 s and says only yes
 * or no, so a refused client is told to wait one period.
 */
export function bindingLimiter(binding: RateLimitBinding, periodSeconds: number): RateLimiter {
  return {
    async take(key: string): Promise<number> {
      const { success } = await binding.limit({ key });
      return success ? 0 : periodSeconds;
    },
  };
}

/**
 * No DNS check here: a Worker's fetch gets no DNS answers to look at. What protects private ranges is the
 * platform (docs/DEPLOY.md, "What protects private addresses on Workers"); IP literals and localhost are
 * still refused by the core.
 */
export function workerProxyOptions(env: WorkerEnv): GitProxyOptions {
  const options = { ...proxyOptionsFromEnv(env) };
  const limiter = env.GIT_PROXY_LIMITER;
  if (limiter && typeof limiter === 'object')
    options.rateLimit = bindingLimiter(limiter, positive('RATE_LIMIT_PERIOD', env.RATE_LIMIT_PERIOD ?? '60'));
  return options;
}

/** The client's address as Cloudflare saw the connection (a header Cloudflare sets, not the client). */
export function workerClient(request: Request): string {
  return request.headers.get('cf-connecting-ip') ?? 'unknown';
}

export default {
  fetch(request: Request, env: WorkerEnv): Promise<Response> {
    return handleGitProxy(request, { ...workerProxyOptions(env), client: workerClient(request) });
  },
};
