// The proxy's settings as environment variables, for the platforms configured that way (Deno Deploy's
// and Cloudflare's dashboards, `deno serve`, wrangler's `vars`). Web-standard only. docs/DEPLOY.md lists them.

import type { GitProxyOptions } from './gitProxy.ts';
import type { ProxyLimits } from './proxyLimits.ts';

export type ProxyEnv = Record<string, string | undefined>;

const LIMIT_VARS: [keyof ProxyLimits, string][] = [
  ['maxRequestBytes', 'MAX_REQUEST_BYTES'],
  ['maxPushBytes', 'MAX_PUSH_BYTES'],
  ['maxResponseBytes', 'MAX_RESPONSE_BYTES'],
  ['maxTotalMs', 'MAX_TOTAL_MS'],
  ['idleTimeoutMs', 'IDLE_TIMEOUT_MS'],
];

/**
 * `ALLOWED_ORIGINS` (comma-separated), `ALLOWED_PORTS`, `LOCAL_HOSTS` (development), `ALLOW_PRIVATE=1`,
 * `UPSTREAM_HTTP=1`, `BASE_PATH`, `LOG=1`, and the limits (`MAX_REQUEST_BYTES`, `MAX_PUSH_BYTES`,
 * `MAX_RESPONSE_BYTES`, `MAX_TOTAL_MS`, `IDLE_TIMEOUT_MS`). An unreadable number is an error at start, not
 * a limit silently dropped.
 */
export function proxyOptionsFromEnv(env: ProxyEnv): GitProxyOptions {
  const list = (name: string) =>
    env[name]
      ?.split(',')
      .map((s) => s.trim())
      .filter(Boolean);
  const limits: Partial<ProxyLimits> = {};
  for (const [key, name] of LIMIT_VARS) if (env[name]) limits[key] = positive(name, env[name]);
  return {
    allowedOrigins: list('ALLOWED_ORIGINS'),
    allowedPorts: list('ALLOWED_PORTS')?.map((p) => positive('ALLOWED_PORTS', p)),
    localHosts: list('LOCAL_HOSTS'),
    allowPrivate: env.ALLOW_PRIVATE === '1',
    upstreamProtocol: env.UPSTREAM_HTTP === '1' ? 'http' : 'https',
    basePath: env.BASE_PATH,
    limits,
    log: env.LOG === '1' ? (line) => console.error(`[cors-proxy] ${line}`) : undefined,
  };
}

export function positive(name: string, value: string): number {
  const n = Number(value);
  if (!Number.isFinite(n) || n <= 0) throw new Error(`${name} must be a positive number, not "${value}".`);
  return n;
}
