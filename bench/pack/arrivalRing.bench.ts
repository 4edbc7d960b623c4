// The table behind PackLimits.arrivalCacheBytes (workers/pack/packLimits.ts): for each ring size, the share
// of deltas resolved as they arrive and the ingest's CPU time, on the blob:none packs of the bench fixtures
// (what upload-pack sends for a clone of every branch and tag).
//
//   npx tsx bench/pack/arrivalRing.bench.ts [runs]     (after the fixtures are built: npm run fixtures)

import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { PackIngester } from '../../workers/pack/packIngester.ts';

const fixtures = join(import.meta.dirname, '..', '..', '.cache', 'fixtures');
const runs = Number(process.argv[2] ?? 3);
const CHUNK = 64 * 1024;
const MiB = 1024 * 1024;

function bloblessPack(repo: string): Uint8Array {
  const dir = join(fixtures, repo);
  const tips = execFileSync('git', ['-C', dir, 'for-each-ref', '--format=%(objectname)']);
  return execFileSync(
    'git',
    ['-C', dir, 'pack-objects', '--revs', '--stdout', '--filter=blob:none', '--delta-base-offset'],
    { input: tips, maxBuffer: 1 << 30, stdio: ['pipe', 'pipe', 'ignore'] },
  );
}

for (const repo of ['medium.git', 'large.git']) {
  const pack = bloblessPack(repo);
  const row: string[] = [];
  for (const ring of [0, 1, 2, 4, 8, 16]) {
    const times: number[] = [];
    let share = 0;
    for (let run = 0; run < runs; run++) {
      // The share is where the resolving phase starts: the deltas resolved before the last byte.
      let first: { resolved: number; total: number } | undefined;
      const started = performance.now();
      const ingester = await PackIngester.create({
        limits: { arrivalCacheBytes: ring * MiB },
        onProgress: (p) => {
          if (p.phase === 'resolving') first ??= p;
        },
      });
      for (let at = 0; at < pack.length; at += CHUNK) ingester.push(pack.subarray(at, at + CHUNK));
      await ingester.finish();
      times.push(performance.now() - started);
      share = first ? first.resolved / first.total : 0;
    }
    times.sort((a, b) => a - b);
    row.push(
      `${ring} MiB: ${(100 * share).toFixed(1)} % ${times[Math.floor(times.length / 2)].toFixed(0)} ms`,
    );
  }
  console.log(`${repo} (${(pack.length / 1e6).toFixed(1)} MB):`, row.join(' | '));
}
