// `deno serve` entry of the runtime suite: the Deno entry's options, every test profile.

import { type DenoServeInfo, denoProxyOptions } from '../../../server/proxy/denoProxy.ts';
import type { ProxyEnv } from '../../../server/proxy/proxyEnv.ts';
import { tokenBucket } from '../../../server/proxy/tokenBucket.ts';
import { TEST_RATE, testProfiles } from '../proxyProfiles.ts';

declare const Deno: { env: { toObject(): ProxyEnv } };

const serve = testProfiles(denoProxyOptions(Deno.env.toObject()), tokenBucket(TEST_RATE));

export default {
  fetch: (request: Request, info: DenoServeInfo) => serve(request, info.remoteAddr.hostname),
};
