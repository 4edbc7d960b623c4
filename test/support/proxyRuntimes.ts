import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { join } from 'node:path';
import { Miniflare } from 'miniflare';
import { nodeProxyOptions, serveFetchHandler } from '../../server/proxy/nodeProxy.ts';
import { tokenBucket } from '../../server/proxy/tokenBucket.ts';
import { bundleWorker } from './bundleWorker.ts';
import { type ProxyProfile, TEST_RATE, TEST_RATE_PERIOD_SECONDS, testProfiles } from './proxyProfiles.ts';

export type ProxyRuntimeName = 'node' | 'deno' | 'workerd';
export const PROXY_RUNTIMES: ProxyRuntimeName[] = ['node', 'deno', 'workerd'];

export interface ProxyRuntime {
  name: ProxyRuntimeName;
  /** The `corsProxy` address of one profile (proxyProfiles.ts). */
  profile(name: ProxyProfile): string;
  close(): Promise<void>;
}

const root = join(import.meta.dirname, '..', '..');
const entries = join(root, 'test', 'support', 'proxyEntries');

/**
 * The proxy's handler running in one runtime, once, with every test profile: in this Node process
 * (nodeProxy.ts's options), under `deno serve` (denoProxy.ts's), or in workerd through miniflare
 * (workerProxy.ts's, the rate limit from the binding). `localHosts`: the git servers it may reach.
 */
export async function startProxyRuntime(name: ProxyRuntimeName, localHosts: string[]): Promise<ProxyRuntime> {
  const env = { LOCAL_HOSTS: localHosts.join(',') };
  if (name === 'node') {
    const node = nodeProxyOptions({ localHosts });
    const serve = testProfiles(node.options, tokenBucket(TEST_RATE));
    const served = await serveFetchHandler((request, client) => serve(request, client.address));
    return {
      name,
      profile: (p) => `${served.url}/${p}`,
      close: () => served.close().then(node.close),
    };
  }
  if (name === 'deno') {
    const child = spawn(
      join(root, 'node_modules', '.bin', 'deno'),
      ['serve', '--allow-net', '--allow-env', '--host', '127.0.0.1', '--port', '0', join(entries, 'deno.ts')],
      {
        // No update check: the tests reach nothing but this machine.
        env: { ...process.env, ...env, NO_COLOR: '1', DENO_NO_UPDATE_CHECK: '1', DENO_NO_PROMPT: '1' },
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    const url = await listeningUrl(child);
    return { name, profile: (p) => `${url}/${p}`, close: () => stop(child) };
  }
  const mf = new Miniflare({
    modules: true,
    script: await bundleWorker(join(entries, 'worker.ts')),
    compatibilityDate: '2026-04-01',
    bindings: env,
    ratelimits: {
      TEST_LIMITER: { simple: { limit: TEST_RATE.burst, period: TEST_RATE_PERIOD_SECONDS } },
    },
    host: '127.0.0.1',
    port: 0,
  });
  const url = (await mf.ready).origin;
  return { name, profile: (p) => `${url}/${p}`, close: () => mf.dispose() };
}

/** `deno serve` says where it listens on its first line. */
async function listeningUrl(child: ChildProcess): Promise<string> {
  let output = '';
  for (const stream of [child.stdout, child.stderr])
    stream?.on('data', (c: Buffer) => {
      output += c.toString();
    });
  const deadline = Date.now() + 60_000;
  for (;;) {
    const m = /Listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(output);
    if (m) return m[1];
    if (child.exitCode !== null || Date.now() > deadline)
      throw new Error(`deno serve did not start: ${output}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

async function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null) return;
  child.kill('SIGTERM');
  await once(child, 'exit');
}
