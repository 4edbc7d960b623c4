import { chromiumLaunch } from '../../e2e/chromium.ts';
// Times writing a working tree of small files into lightning-fs in a Chromium worker, with lightning-fs's
// default IndexedDB backend (one transaction per file), with BatchedIdb (one per superblock save), and
// with BatchedIdb under RepoFsBackend as repos use it (see worktreeWrite.worker.ts).
//
//   npx tsx bench/worktree/worktreeWrite.bench.ts [runs] [counts, e.g. 5000,20000] [default,batched,repoFs]
//
// Serves this folder with Vite, opens a fresh Chromium page per run (new profile, so no cache carries
// over) and prints one line per run, then the medians.

import { chromium, type Page } from '@playwright/test';
import { createServer } from 'vite';
import type { Backend, WorktreeWriteRun } from './worktreeWrite.worker.ts';

const runs = Number(process.argv[2] ?? 3);
const counts = (process.argv[3] ?? '5000,20000').split(',').map(Number);
const backends = (process.argv[4] ?? 'default,batched,repoFs').split(',') as Backend[];

const server = await createServer({ configFile: 'vite.config.ts', server: { port: 0 }, logLevel: 'error' });
await server.listen();
const base = server.resolvedUrls?.local[0];
if (!base) throw new Error('Vite did not report a URL');
const browser = await chromium.launch(chromiumLaunch());

async function runPage(
  page: Page,
  backend: string,
  files: number,
): Promise<WorktreeWriteRun & { error?: string }> {
  await page.goto(`${base}bench/worktree/index.html?backend=${backend}&files=${files}`);
  const handle = await page.waitForFunction(
    () => (window as unknown as { benchResult?: unknown }).benchResult,
    undefined,
    {
      timeout: 0,
      polling: 200,
    },
  );
  return (await handle.jsonValue()) as WorktreeWriteRun & { error?: string };
}

const results: WorktreeWriteRun[] = [];
try {
  console.log(`Chromium ${browser.version()}, ${runs} run(s) each`);
  {
    // Warm-up: Vite optimizes dependencies on first load and reloads the page; no run may see that.
    const context = await browser.newContext();
    const r = await runPage(await context.newPage(), 'batched', 100);
    await context.close();
    if (r.error) throw new Error(r.error);
  }
  for (const files of counts) {
    for (const backend of backends) {
      for (let i = 0; i < runs; i++) {
        const context = await browser.newContext();
        const page = await context.newPage();
        const r = await runPage(page, backend, files);
        await context.close();
        if (r.error) throw new Error(r.error);
        results.push(r);
        console.log(
          `${backend.padEnd(8)} ${String(files).padStart(6)} files: write ${ms(r.writeMs)} + flush ${ms(r.flushMs)}` +
            ` = ${ms(r.writeMs + r.flushMs)}; reopen and read all ${ms(r.reopenReadMs)}` +
            (r.transactions === null ? '' : `; ${r.transactions} transaction(s)`),
        );
      }
    }
  }
  console.log('\nmedians (write + flush; reopen and read all):');
  for (const files of counts) {
    for (const backend of backends) {
      const mine = results.filter((r) => r.files === files && r.backend === backend);
      console.log(
        `${backend.padEnd(8)} ${String(files).padStart(6)} files: ${ms(median(mine.map((r) => r.writeMs + r.flushMs)))}; ${ms(median(mine.map((r) => r.reopenReadMs)))}`,
      );
    }
  }
} finally {
  await browser.close();
  await server.close();
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)];
}

function ms(n: number): string {
  return n >= 1000 ? `${(n / 1000).toFixed(2)} s` : `${n} ms`;
}
