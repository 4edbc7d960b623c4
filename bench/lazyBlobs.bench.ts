// Times ensureBlobs fetching every blob at HEAD of a sized fixture, for a grid of batch sizes and
// concurrencies, against the fixture git server (git http-backend), optionally behind a relay that adds a
// round-trip time to each request and a bandwidth cap shared by all of them, as a remote host would.
//
//   npx tsx bench/lazyBlobs.bench.ts [--repo medium|small] [--runs 3] [--rtt 0] [--mbps 0]
//                                    [--sizes 50,100,250,500,1000,3000] [--concurrency 1,2,4,6]
//   npx tsx bench/lazyBlobs.bench.ts --policy [--variants 256/4/1.5,0/4/1] [--repo ...] [--rtt ...] [--mbps ...]
//
// --policy times planBlobBatches (BLOB_BATCH_POLICY, four in flight) instead of fixed sizes, and each
// variant FIRST_KB/SPREAD/GROWTH of it (a first request of FIRST_KB, 0 for none; SPREAD requests after it,
// each GROWTH times the one before).
//
// One blob:none clone is made per repo; between runs the packs fetched by the previous run are deleted, so
// every run starts from the same clone. Pack maintenance is timed apart (it runs after ensureBlobs returns).

import 'fake-indexeddb/auto';
import { execFileSync } from 'node:child_process';
import { createServer, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import { fixtureServerOptions } from '../server/fixtures/fixtureServerOptions.ts';
import { ensureFixtures, SIZED_PRESETS } from '../server/fixtures/index.ts';
import { startGitServer } from '../server/gitServer.ts';
import { createEngine, engineContext } from '../workers/engine/engine.ts';
import { maintenanceIdle } from '../workers/ops/maintenance/packMaintenance.ts';
import {
  BLOB_BATCH_POLICY,
  type BlobBatchPolicy,
  type BlobFetchHooks,
  ensureBlobs,
} from '../workers/ops/sync/lazyBlobs.ts';
import { removePackFiles } from '../workers/store/gitDir.ts';

(globalThis as { navigator?: unknown }).navigator ??= {};

const engine = createEngine();
const ctx = engineContext(engine);

const { values: args } = parseArgs({
  options: {
    repo: { type: 'string', default: 'medium' },
    runs: { type: 'string', default: '3' },
    rtt: { type: 'string', default: '0' },
    mbps: { type: 'string', default: '0' },
    sizes: { type: 'string', default: '50,100,250,500,1000,3000' },
    concurrency: { type: 'string', default: '1,2,4,6' },
    policy: { type: 'boolean', default: false },
    variants: { type: 'string', default: '' },
  },
});
const runs = Number(args.runs);
const rtt = Number(args.rtt);
const bytesPerMs = (Number(args.mbps) * 1e6) / 8 / 1000;
const sizes = args.sizes.split(',').map(Number);
const concurrencies = args.concurrency.split(',').map(Number);

/**
 * Holds each response back by one round trip, then paces the bodies of all responses together at the
 * bandwidth cap, as one link shared by every connection would.
 */
async function startDelayRelay(target: string): Promise<{ url: string; server: Server }> {
  const upstream = new URL(target);
  // The time the shared link is busy until: each chunk waits for the ones before it, whoever sent them.
  let linkFreeAt = 0;
  const server = createServer((req, res) => {
    const up = request(
      {
        host: upstream.hostname,
        port: upstream.port,
        method: req.method,
        path: req.url,
        headers: req.headers,
      },
      (upRes) => {
        setTimeout(async () => {
          res.writeHead(upRes.statusCode ?? 502, upRes.headers);
          if (!bytesPerMs) {
            upRes.pipe(res);
            return;
          }
          for await (const chunk of upRes) {
            const now = performance.now();
            linkFreeAt = Math.max(linkFreeAt, now) + (chunk as Buffer).length / bytesPerMs;
            const wait = linkFreeAt - now;
            if (wait > 1) await new Promise((r) => setTimeout(r, wait));
            res.write(chunk);
          }
          res.end();
        }, rtt);
      },
    );
    up.on('error', () => res.destroy());
    req.pipe(up);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, server };
}

async function dropFetchedPacks(repoId: string, clonePack: string): Promise<void> {
  await maintenanceIdle(ctx, repoId);
  const fs = ctx.store.repoFs.open(repoId).promises;
  for (const pack of (await ctx.store.packs.for(repoId)).packs) {
    if (pack.checksum !== clonePack) await removePackFiles(fs, pack.checksum);
  }
  ctx.store.forgetRepo(repoId);
  ctx.repos.forget(repoId);
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

async function main() {
  const sized = args.repo === 'medium' ? [SIZED_PRESETS.medium] : [];
  const { dir } = await ensureFixtures({ sized });
  const repo = args.repo === 'medium' ? 'medium.git' : 'small-sized.git';
  const server = await startGitServer(fixtureServerOptions(dir));
  const relay = rtt || bytesPerMs ? await startDelayRelay(server.url) : null;
  const base = relay?.url ?? server.url;
  try {
    const oids = execFileSync('git', ['ls-tree', '-r', '--format=%(objectname)', 'HEAD'], {
      cwd: join(dir, repo),
    })
      .toString()
      .trim()
      .split('\n');
    const { repoId } = await engine.clone({ url: `${base}/${repo}` });
    const clonePack = (await ctx.store.packs.for(repoId)).packs[0].checksum;
    console.log(
      `${repo}: ${oids.length} blobs at HEAD; rtt ${rtt} ms, ${bytesPerMs ? `${args.mbps} Mbit/s` : 'no bandwidth cap'}; ` +
        `median of ${runs} runs (min..max)\n`,
    );
    type Setting = { label: string; batching: BlobFetchHooks['batching'] };
    const settings: Setting[] = [];
    if (args.policy) {
      const p = BLOB_BATCH_POLICY;
      settings.push({ label: `policy ${p.firstBytes / 1024}/${p.spread}/${p.growth}`, batching: {} });
      for (const v of args.variants.split(',').filter(Boolean)) {
        const [first, spread, growth] = v.split('/').map(Number);
        const policy: Partial<BlobBatchPolicy> = { firstBytes: first * 1024, spread, growth };
        settings.push({ label: `       ${v}`, batching: { policy } });
      }
    } else {
      for (const size of sizes) {
        for (const concurrency of concurrencies) {
          if (size >= oids.length && concurrency > 1) continue;
          settings.push({
            label: `${String(size).padStart(5)}  ${String(concurrency).padStart(4)}`,
            batching: { size, concurrency },
          });
        }
      }
    }
    console.log(
      `${args.policy ? 'setting        ' : 'batch  conc'}  requests   MB     fetch s (min..max)    objects/s   maintenance s`,
    );
    for (const { label, batching } of settings) {
      const times: number[] = [];
      const upkeep: number[] = [];
      let requests = 0;
      let bytes = 0;
      for (let run = 0; run < runs; run++) {
        await dropFetchedPacks(repoId, clonePack);
        const t0 = performance.now();
        const result = await ensureBlobs(ctx, repoId, oids, { batching });
        const t1 = performance.now();
        await maintenanceIdle(ctx, repoId);
        upkeep.push(performance.now() - t1);
        times.push(t1 - t0);
        requests = result.requests;
        bytes = result.bytes;
      }
      const m = median(times);
      console.log(
        `${label}  ${String(requests).padStart(8)}  ` +
          `${(bytes / 1e6).toFixed(1).padStart(5)}  ${(m / 1000).toFixed(2).padStart(6)} ` +
          `(${(Math.min(...times) / 1000).toFixed(2)}..${(Math.max(...times) / 1000).toFixed(2)})` +
          `  ${String(Math.round(oids.length / (m / 1000))).padStart(9)}  ${(median(upkeep) / 1000).toFixed(2).padStart(12)}`,
      );
    }
    await engine.repo(repoId).delete();
  } finally {
    relay?.server.closeAllConnections();
    relay?.server.close();
    await server.close();
  }
}

await main();
