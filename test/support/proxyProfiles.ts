// The proxy configurations the runtime suite (test/proxyRuntimes.test.ts) tries, each mounted at
// `/<profile>` of one proxy process per runtime, so each runtime starts once. Web-standard only: the Deno
// and workerd test entries import it too.

import { type GitProxyOptions, handleGitProxy } from '../../server/proxy/gitProxy.ts';
import type { RateLimiter } from '../../server/proxy/tokenBucket.ts';

/** The app's origin as the restricted profiles know it; tests send it as a spoofed Origin. */
export const APP_ORIGIN = 'http://app.test';

export type ProxyProfile = 'open' | 'capped' | 'limited' | 'closed';
export const PROXY_PROFILES: ProxyProfile[] = ['open', 'capped', 'limited', 'closed'];

/**
 * capped: small enough that a test's body or answer passes them, large enough that info/refs and ls-refs
 * of basic.git fit (about 1 KB each; basic.git's clone answer is 5 KB, features.git's 40 KB).
 */
export const CAPPED_LIMITS = { maxRequestBytes: 4096, maxResponseBytes: 8192 };
/** limited: what the token bucket allows (Node, Deno); workerd's binding counts `limit` per 10 s. */
export const TEST_RATE = { burst: 4, perSecond: 1 };
export const TEST_RATE_PERIOD_SECONDS = 10;

/**
 * One handler serving every profile: `open` (the runtime's options as its entry makes them), `capped`
 * and `limited` (listed origins only, with small caps, or a rate limit), `closed` (no local hosts, so
 * this machine's servers are private addresses it refuses).
 */
export function testProfiles(
  base: GitProxyOptions,
  limiter: RateLimiter,
): (request: Request, client: string) => Promise<Response> {
  const { rateLimit: _none, ...open } = base;
  const profiles: Record<ProxyProfile, GitProxyOptions> = {
    open,
    capped: { ...open, allowedOrigins: [APP_ORIGIN], limits: { ...open.limits, ...CAPPED_LIMITS } },
    limited: { ...open, allowedOrigins: [APP_ORIGIN], rateLimit: limiter },
    closed: { ...open, localHosts: [] },
  };
  return (request, client) => {
    const name = new URL(request.url).pathname.split('/')[1] as ProxyProfile;
    const options = profiles[name];
    if (!options) return Promise.resolve(new Response('no such profile\n', { status: 404 }));
    return handleGitProxy(request, { ...options, basePath: `/${name}`, client });
  };
}
