import { chromiumLaunch } from '../../e2e/chromium.ts';
// Clone, checkout and reload in Chromium, checked against the git CLI, and timed against it:
//
//   npx tsx bench/worktree/checkout.bench.ts [repos, e.g. features.git,worktree-5k.git,worktree-20k.git]
//
// Serves the fixtures with git http-backend and this folder with Vite. Per repository, in a fresh browser
// context: a worker clones blob:none and checks out HEAD (timed: clone, blob fetch, writes), checks out
// again (no request may be made); the page is reloaded, and a new worker reads every file of the working
// tree and every blob of HEAD back from IndexedDB. The files must equal `git checkout`'s, byte for byte
// and mode for mode, and statusMatrix must find nothing changed. Then `git clone --filter=blob:none`
// (which checks out, fetching the blobs) is timed on the same server. BENCH_DEBUG=1 prints the worker's
// progress events and splits the checkout into fetch, pack merge wait, analysis, writes and commit.

import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { chromium, type Page } from '@playwright/test';
import { createServer } from 'vite';
import { fixtureServerOptions } from '../../server/fixtures/fixtureServerOptions.ts';
import { ensureFixtures } from '../../server/fixtures/index.ts';
import { startGitServer } from '../../server/gitServer.ts';
import { gitCheckoutOf } from '../../test/support/worktree.ts';
import type { CheckoutRun, VerifyResult } from './checkout.worker.ts';

/** A synthetic project about the size of git.git (4,600 files), and one of 20,000 files. */
export const WORKTREE_FIXTURES = [
  { name: 'worktree-5k', commits: 200, files: 5000 },
  { name: 'worktree-20k', commits: 200, files: 20000 },
];

const repos = (process.argv[2] ?? 'features.git,worktree-5k.git,worktree-20k.git').split(',');
const { dir } = await ensureFixtures({ sized: WORKTREE_FIXTURES });
const gitServer = await startGitServer(fixtureServerOptions(dir));
const vite = await createServer({ configFile: 'vite.config.ts', server: { port: 0 }, logLevel: 'error' });
await vite.listen();
const base = vite.resolvedUrls?.local[0];
const browser = await chromium.launch(chromiumLaunch());
const scratch = mkdtempSync(join(tmpdir(), 'blobless-checkout-bench-'));

async function result<T>(page: Page): Promise<T> {
  const handle = await page.waitForFunction(
    () => (window as unknown as { benchResult?: unknown }).benchResult,
    undefined,
    {
      timeout: 0,
      polling: 200,
    },
  );
  const r = (await handle.jsonValue()) as T & { error?: string };
  if (r.error) throw new Error(r.error);
  return r;
}

async function reloadToVerify(page: Page): Promise<void> {
  await page.evaluate(() => {
    location.hash = 'verify';
  });
  await page.reload();
}

/** Vite optimizes dependencies on first sight and reloads the page: load both modes once before timing. */
async function warmUp(): Promise<void> {
  const context = await browser.newContext();
  const page = await context.newPage();
  for (let attempt = 0; attempt < 5; attempt++) {
    try {
      await page.goto(`${base}bench/worktree/checkout.html?mode=run&url=${gitServer.url}/basic.git`);
      await result(page);
      await reloadToVerify(page);
      await result(page);
      break;
    } catch (err) {
      if (!/context was destroyed|navigation/i.test(String(err))) throw err;
    }
  }
  await context.close();
}

const s = (ms: number) => `${(ms / 1000).toFixed(2)} s`;
let failed = false;
try {
  console.log(`Chromium ${browser.version()}`);
  await warmUp();
  for (const repo of repos) {
    const url = `${gitServer.url}/${repo}`;
    const context = await browser.newContext();
    const page = await context.newPage();
    if (process.env.BENCH_DEBUG) page.on('console', (m) => console.log(`  [page] ${m.text()}`));
    gitServer.resetStats();
    await page.goto(
      `${base}bench/worktree/checkout.html?mode=run&url=${encodeURIComponent(url)}${process.env.BENCH_DEBUG ? '&debug=1' : ''}`,
    );
    const r = await result<CheckoutRun>(page);
    const requests = gitServer.stats(repo).requests;

    // A reload: a new worker, nothing in memory; everything comes back from IndexedDB.
    gitServer.resetStats();
    await reloadToVerify(page);
    const v = await result<VerifyResult>(page);
    const afterReload = gitServer.stats(repo).requests;
    await context.close();

    const expected = await gitCheckoutOf(join(dir, repo), v.head, scratch);
    const same = JSON.stringify(v.entries) === JSON.stringify(expected);
    const files = expected.filter((e) => e.kind !== 'dir').length;

    const cli = join(scratch, `cli-${repo}`);
    const t = performance.now();
    // Not execFileSync: the git server answering it runs in this process.
    await promisify(execFile)('git', [
      '-c',
      'protocol.version=2',
      'clone',
      '-q',
      '--filter=blob:none',
      url,
      cli,
    ]);
    const cliMs = performance.now() - t;
    rmSync(cli, { recursive: true, force: true });

    console.log(
      `${repo}: ${files} files; clone ${s(r.cloneMs)}, checkout ${s(r.fetchMs + r.writeMs)} ` +
        `(blobs ${s(r.fetchMs)}: ${r.result.blobsFetched} in ${r.result.requests} request(s), ${(r.result.bytes / 1e6).toFixed(1)} MB; ` +
        `writing ${s(r.writeMs)}: ${r.result.filesWritten} files); again ${s(r.againMs)}, ${r.againRequests} request(s); ` +
        `git clone --filter=blob:none with checkout ${s(cliMs)}`,
    );
    console.log(
      `  after reload: ${v.entries.length} entries read in ${s(v.readMs)} and ${v.blobs} blobs of HEAD, ${same ? 'equal to' : 'DIFFERENT FROM'} git's checkout; ` +
        `statusMatrix ${v.notClean} of ${v.statusRows} not clean; ${afterReload} request(s); ` +
        `server saw ${requests} request(s) for clone + checkout`,
    );
    if (!same || v.notClean > 0 || afterReload > 0 || r.againRequests > 0) failed = true;
  }
} finally {
  await browser.close();
  await vite.close();
  await gitServer.close();
  rmSync(scratch, { recursive: true, force: true });
}
if (failed) {
  console.error('FAILED: a check above did not hold');
  process.exit(1);
}
