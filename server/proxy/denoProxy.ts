// The proxy on Deno: `deno serve --allow-net --allow-env server/proxy/denoProxy.ts`, settings from the
// environment (proxyEnv.ts; RATE_BURST and RATE_PER_SECOND for the in-memory token bucket).

import { type GitProxyOptions, handleGitProxy } from './gitProxy.ts';
import { type ProxyEnv, positive, proxyOptionsFromEnv } from './proxyEnv.ts';
import { DEFAULT_RATE_LIMIT } from './proxyLimits.ts';
import { tokenBucket } from './tokenBucket.ts';

/** The few Deno APIs used here; the repository type-checks with Node's types, not Deno's. */
declare const Deno: {
  env: { toObject(): ProxyEnv };
  resolveDns(name: string, type: 'A' | 'AAAA'): Promise<string[]>;
};

export interface DenoServeInfo {
  remoteAddr: { hostname: string };
}

/**
 * The options from the environment, with Deno's DNS answers checked (both families; a name without one of
 * them just has none). Deno's fetch resolves the name again when it connects: unlike Node's entry, a name
 * whose answers change between the two (DNS rebinding) is not caught (docs/DEPLOY.md).
 */
export function denoProxyOptions(env: ProxyEnv): GitProxyOptions {
  return {
    ...proxyOptionsFromEnv(env),
    resolve: async (hostname) => {
      const answers = await Promise.all(
        (['A', 'AAAA'] as const).map((type) => Deno.resolveDns(hostname, type).catch(() => [] as string[])),
      );
      return answers.flat();
    },
    rateLimit: tokenBucket({
      burst: env.RATE_BURST ? positive('RATE_BURST', env.RATE_BURST) : DEFAULT_RATE_LIMIT.burst,
      perSecond: env.RATE_PER_SECOND
        ? positive('RATE_PER_SECOND', env.RATE_PER_SECOND)
        : DEFAULT_RATE_LIMIT.perSecond,
    }),
  };
}

let options: GitProxyOptions | undefined;

export default {
  fetch(request: Request, info: DenoServeInfo): Promise<Response> {
    options ??= denoProxyOptions(Deno.env.toObject());
    return handleGitProxy(request, { ...options, client: info.remoteAddr.hostname });
  },
};
