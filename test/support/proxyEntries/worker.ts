// workerd entry of the runtime suite (bundled by esbuild, run by miniflare): the Worker entry's options,
// every test profile, the `limited` one counted by the rate-limiting binding.

import {
  bindingLimiter,
  type RateLimitBinding,
  type WorkerEnv,
  workerClient,
  workerProxyOptions,
} from '../../../server/proxy/workerProxy.ts';
import { TEST_RATE_PERIOD_SECONDS, testProfiles } from '../proxyProfiles.ts';

let serve: ReturnType<typeof testProfiles> | undefined;

export default {
  fetch(request: Request, env: WorkerEnv & { TEST_LIMITER: RateLimitBinding }): Promise<Response> {
    serve ??= testProfiles(
      workerProxyOptions(env),
      bindingLimiter(env.TEST_LIMITER, TEST_RATE_PERIOD_SECONDS),
    );
    return serve(request, workerClient(request));
  },
};
