import { readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { Miniflare } from 'miniflare';
import { bundleWorker } from '../test/support/bundleWorker.ts';

const CONFIG = join(import.meta.dirname, '..', 'deploy', 'cloudflare', 'wrangler.jsonc');

interface WranglerConfig {
  main: string;
  compatibility_date: string;
  assets: {
    directory: string;
    binding: string;
    not_found_handling?: 'single-page-application' | '404-page' | 'none';
    run_worker_first?: string[];
  };
  vars?: Record<string, string>;
  ratelimits?: { name: string; simple: { limit: number; period: 10 | 60 } }[];
}

/** wrangler.jsonc without its comments (whole-line `//` comments only: no string here holds one). */
export function readWranglerConfig(): WranglerConfig {
  const text = readFileSync(CONFIG, 'utf8')
    .split('\n')
    .filter((line) => !line.trim().startsWith('//'))
    .join('\n');
  return JSON.parse(text) as WranglerConfig;
}

/**
 * deploy/cloudflare as `wrangler deploy` would ship it, run in workerd by miniflare: the Worker bundled
 * from `main`, the static files, `_headers` and the SPA fallback of `assets`, the routes that reach the
 * Worker first, the vars and the rate-limiting binding. `vars` adds development settings (the local git
 * servers the proxy may reach).
 */
export async function startWorkerdDeploy(opts: { port: number; vars?: Record<string, string> }) {
  const config = readWranglerConfig();
  const dir = dirname(CONFIG);
  const mf = new Miniflare({
    modules: true,
    script: await bundleWorker(resolve(dir, config.main)),
    compatibilityDate: config.compatibility_date,
    bindings: { ...config.vars, ...opts.vars },
    ratelimits: Object.fromEntries((config.ratelimits ?? []).map((r) => [r.name, { simple: r.simple }])),
    assets: {
      directory: resolve(dir, config.assets.directory),
      binding: config.assets.binding,
      routerConfig: {
        has_user_worker: true,
        static_routing: { user_worker: config.assets.run_worker_first ?? [] },
      },
      assetConfig: { not_found_handling: config.assets.not_found_handling },
    },
    host: '127.0.0.1',
    port: opts.port,
  });
  const url = (await mf.ready).origin;
  return { url, close: () => mf.dispose() };
}
