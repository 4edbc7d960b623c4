/*
bench/warmUpAb.ts: the warm-up's A/B (docs/decisions/warm-up.md), in one run, interleaved.

  npx tsx bench/warmUpAb.ts --sizes small,medium --rounds 0,1,3 --runs 3 --out .cache/warm-up-ab.json

Per run and size, in an order that rotates from run to run, one fresh profile per count of rounds: the bench
page opened with `?warmUpRounds=N`, its start-up calls answered, then the clone form's URL field taken
(`cloneFieldFocused`, which warms up as the app does and resolves at the warm-up's end: a person pasting and
pressing Enter), then a clone without blobs, timed in the page. The warm-up's own time is that call's, from
asking to its end. Then the deep link, cold: the built app opened at `?repo=` (bench/deepLink.ts), which
clones at once. Medians are printed; every sample goes to --out. The machine's load average goes with them.
*/

import { writeFile } from 'node:fs/promises';
import { availableParallelism, cpus, loadavg, totalmem } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { build } from 'vite';
import { fixtureServerOptions } from '../server/fixtures/fixtureServerOptions.ts';
import { ensureFixtures, SIZED_PRESETS } from '../server/fixtures/index.ts';
import { startGitServer } from '../server/gitServer.ts';
import { closeAllProfiles, openFreshProfile, serveBuiltPage } from './browser.ts';
import { startCountingRelay } from './countingRelay.ts';
import { measureDeepLink } from './deepLink.ts';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const REPOS = { small: 'small-sized.git', medium: 'medium.git' } as const;
type Size = keyof typeof REPOS;

interface Sample {
  size: Size;
  run: number;
  /** null: the deep-link cell (the app's own start-up). */
  rounds: number | null;
  cloneMs: number;
  warmUpMs: number | null;
  warmUpOutcome: 'done' | 'stopped' | null;
}

const log = (line: string) => process.stderr.write(`${line}\n`);
const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length === 0
    ? Number.NaN
    : s.length % 2
      ? s[(s.length - 1) / 2]
      : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};

async function main() {
  const { values } = parseArgs({
    options: {
      sizes: { type: 'string', default: 'small,medium' },
      rounds: { type: 'string', default: '0,1,3' },
      runs: { type: 'string', default: '3' },
      out: { type: 'string', default: '.cache/warm-up-ab.json' },
      'skip-build': { type: 'boolean', default: false },
    },
  });
  const sizes = values.sizes.split(',').filter(Boolean) as Size[];
  for (const size of sizes)
    if (!(size in REPOS)) throw new Error(`--sizes takes small and medium, not ${size}.`);
  const rounds = values.rounds.split(',').map(Number);
  const runs = Number(values.runs);
  const pageDir = join(ROOT, '.cache', 'bench-page');
  const appDir = join(ROOT, '.cache', 'bench-app');
  if (!values['skip-build']) {
    await build({ configFile: join(ROOT, 'bench', 'vite.config.ts'), logLevel: 'warn' });
    await build({
      configFile: join(ROOT, 'vite.config.ts'),
      root: ROOT,
      logLevel: 'warn',
      build: { outDir: appDir, emptyOutDir: true, sourcemap: false },
    });
  }
  const closers: (() => Promise<void>)[] = [];
  const started = new Date();
  const load = [loadavg()[0]];
  try {
    const page = await serveBuiltPage(pageDir);
    closers.push(page.close);
    const app = await serveBuiltPage(appDir);
    closers.push(app.close);
    const fixtures = await ensureFixtures({
      // small is among the default fixtures; medium is a sized preset.
      sized: sizes.includes('medium') ? [SIZED_PRESETS.medium] : [],
    });
    const server = await startGitServer(fixtureServerOptions(fixtures.dir));
    closers.unshift(server.close);
    const relay = await startCountingRelay({ upstream: new URL(server.url).origin });
    closers.unshift(relay.close);
    const samples: Sample[] = [];
    for (let run = 0; run < runs; run++) {
      for (const size of sizes) {
        const url = relay.relayed(`${server.url}/${REPOS[size]}`);
        // Rotated: each count of rounds goes first in one run, so the machine's drift favours none.
        const order = rounds.map((_, i) => rounds[(i + run) % rounds.length]);
        const cells: (number | null)[] = [...order, null];
        for (const n of cells) {
          if (n === null) {
            const t = await measureDeepLink(app.url, url, { timeoutMs: 120_000, onShown: () => undefined });
            samples.push({ size, run, rounds: null, cloneMs: t.ms, warmUpMs: null, warmUpOutcome: null });
            log(`[${size} ${run + 1}/${runs}] deep link, cold: ${t.ms.toFixed(0)} ms to the tree`);
            continue;
          }
          const profile = await openFreshProfile(`${page.url}?warmUpRounds=${n}`);
          try {
            // The person takes the URL field (the warm-up runs to its end), then clones.
            const startup = await profile.page.evaluate(async () => {
              const w = await window.bench.cloneFieldFocused();
              return { warmUpMs: w.ms, warmUpOutcome: w.outcome };
            });
            const t = await profile.page.evaluate((u) => window.bench.bloblessClone(u), url);
            samples.push({
              size,
              run,
              rounds: n,
              cloneMs: t.ms,
              warmUpMs: startup.warmUpMs,
              warmUpOutcome: startup.warmUpOutcome,
            });
            log(
              `[${size} ${run + 1}/${runs}] rounds ${n}: warm-up ${startup.warmUpMs.toFixed(0)} ms (${startup.warmUpOutcome}), clone ${t.ms.toFixed(0)} ms`,
            );
          } finally {
            await profile.close();
          }
        }
        load.push(loadavg()[0]);
      }
    }
    const table: string[] = ['| size | cell | clone without blobs, ms (median; runs) | warm-up alone, ms |'];
    table.push('| --- | --- | --- | --- |');
    for (const size of sizes) {
      for (const n of [...rounds, null]) {
        const cell = samples.filter((s) => s.size === size && s.rounds === n);
        const clones = cell.map((s) => Math.round(s.cloneMs));
        const warm = cell.flatMap((s) => (s.warmUpMs === null ? [] : [Math.round(s.warmUpMs)]));
        table.push(
          `| ${size} | ${n === null ? 'deep link, cold (to the tree shown)' : `rounds ${n}`} | ${median(clones).toFixed(0)} (${clones.join(', ')}) | ${warm.length ? `${median(warm).toFixed(0)} (${warm.join(', ')})` : '-'} |`,
        );
      }
    }
    const machine = {
      nproc: availableParallelism(),
      memoryGB: Math.round(totalmem() / 1024 ** 3),
      cpu: cpus()[0]?.model ?? 'unknown',
      loadavg1: load.map((l) => Number(l.toFixed(2))),
    };
    await writeFile(
      resolve(values.out),
      `${JSON.stringify({ date: started.toISOString(), machine, options: { sizes, rounds, runs }, samples }, null, 2)}\n`,
    );
    process.stdout.write(`${table.join('\n')}\n\n${started.toISOString()}, ${JSON.stringify(machine)}\n`);
  } finally {
    for (const close of closers) await close().catch(() => undefined);
    await closeAllProfiles();
  }
}

await main();
