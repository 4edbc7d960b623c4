// The Worker of deploy/cloudflare: the CORS proxy under BASE_PATH, and config.json naming it, so the app
// falls back on it for hosts without CORS headers. The static files are served by Workers' assets
// (wrangler.jsonc routes only these paths here), with their headers from dist/_headers.

import { handleGitProxy } from '../../server/proxy/gitProxy.ts';
import { type WorkerEnv, workerClient, workerProxyOptions } from '../../server/proxy/workerProxy.ts';

export default {
  fetch(request: Request, env: WorkerEnv): Promise<Response> {
    const url = new URL(request.url);
    const options = workerProxyOptions(env);
    const basePath = options.basePath ?? '';
    if (url.pathname === '/config.json')
      return Promise.resolve(
        Response.json(
          { corsProxy: `${url.origin}${basePath}` },
          { headers: { 'Cache-Control': 'no-store', 'X-Content-Type-Options': 'nosniff' } },
        ),
      );
    // The app is served from this origin: its pages, and no other site's, may use the proxy.
    options.allowedOrigins ??= [url.origin];
    return handleGitProxy(request, { ...options, client: workerClient(request) });
  },
};
