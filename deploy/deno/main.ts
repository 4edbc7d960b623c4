// Deno Deploy: the app's static files and the CORS proxy (under /proxy) from one Deno program, on one
// origin. docs/DEPLOY.md walks through it:
//   npm run build
//   deployctl deploy --project=<name> --include=dist,server/proxy,deploy/deno --entrypoint=deploy/deno/main.ts
// The same runs locally: deno serve --allow-net --allow-env --allow-read deploy/deno/main.ts

import { serveDir } from 'jsr:@std/http@^1/file-server';
import { denoProxyOptions } from '../../server/proxy/denoProxy.ts';
import { handleGitProxy } from '../../server/proxy/gitProxy.ts';

declare const Deno: { env: { toObject(): Record<string, string | undefined> } };

const BASE_PATH = '/proxy';
const options = { ...denoProxyOptions(Deno.env.toObject()), basePath: BASE_PATH };
const dist = new URL('../../dist', import.meta.url).pathname;

export default {
  async fetch(request: Request, info: { remoteAddr: { hostname: string } }): Promise<Response> {
    const url = new URL(request.url);
    if (url.pathname === BASE_PATH || url.pathname.startsWith(`${BASE_PATH}/`))
      return handleGitProxy(request, {
        ...options,
        // Served with the app: its pages, and no other site's, may use the proxy.
        allowedOrigins: options.allowedOrigins ?? [url.origin],
        client: info.remoteAddr.hostname,
      });
    if (url.pathname === '/config.json')
      return Response.json(
        { corsProxy: `${url.origin}${BASE_PATH}` },
        { headers: { 'Cache-Control': 'no-store' } },
      );
    const response = await serveDir(request, { fsRoot: dist, quiet: true });
    const headers = new Headers(response.headers);
    headers.set('X-Content-Type-Options', 'nosniff');
    // What the app's <meta> policy cannot carry; the widget is made to be framed.
    if (url.pathname !== '/embed.html') headers.set('Content-Security-Policy', "frame-ancestors 'none'");
    headers.set(
      'Cache-Control',
      url.pathname.startsWith('/assets/') ? 'public, max-age=31536000, immutable' : 'no-cache',
    );
    return new Response(response.body, { status: response.status, headers });
  },
};
