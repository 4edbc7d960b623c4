import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { expect, type Page, test } from '@playwright/test';
import { ensureFixtures } from '../server/fixtures/index.ts';
import { type Relay, startRelay } from '../test/support/relay.ts';
import { settledFiles, storedFiles } from './storedFiles.ts';
import { refShown, repoIdOf, switchRef } from './ui.ts';

const gitServer = process.env.GIT_SERVER_URL ?? 'http://127.0.0.1:4174';

/** What the page's IndexedDB holds of Blobless: the repos' databases and the registry's records. */
async function stored(page: Page): Promise<{ databases: string[]; records: string[] }> {
  return page.evaluate(async () => {
    const names = (await indexedDB.databases()).map((d) => d.name ?? '');
    const databases = names.filter((n) => n.startsWith('blobless-repo-')).sort();
    if (!names.includes('blobless-registry')) return { databases, records: [] };
    const db = await new Promise<IDBDatabase>((resolve, reject) => {
      const open = indexedDB.open('blobless-registry');
      open.onsuccess = () => resolve(open.result);
      open.onerror = () => reject(open.error);
    });
    try {
      if (!db.objectStoreNames.contains('repos')) return { databases, records: [] };
      const keys = await new Promise<IDBValidKey[]>((resolve, reject) => {
        const req = db.transaction('repos').objectStore('repos').getAllKeys();
        req.onsuccess = () => resolve(req.result);
        req.onerror = () => reject(req.error);
      });
      return { databases, records: keys.map(String).sort() };
    } finally {
      db.close();
    }
  });
}

async function cloneThroughForm(page: Page, url: string, depth?: number): Promise<void> {
  await page.goto('/');
  await page.getByTestId('clone-url').fill(url);
  if (depth) await page.getByLabel('Depth').fill(String(depth));
  await page.getByTestId('clone-submit').click();
}

// Each case holds one response of the clone-and-checkout flow at a known point (relay.ts, mode `hold`),
// waits for the UI to show that phase, and presses Cancel: the abort crosses the worker boundary as a
// person's would, wherever the flow is. A clone checks out first only when the person chose a depth (or
// a full clone); the default one opens at its first view, with no checkout to cancel.
const cases: { name: string; post: number; afterBytes: number; phase: string | RegExp; depth?: number }[] = [
  { name: 'while negotiating (ls-refs held)', post: 1, afterBytes: 0, phase: 'connecting' },
  // The pack is 172 KiB; the ingester reports every 64 KiB of it (PROGRESS_BYTES). upload-pack's band-2
  // progress lines are interleaved with the pack's band-1 bytes, so the last event shown before the hold
  // may be either; relay.holding already proves the pack was arriving.
  // With a depth, the whole 172 KiB pack (the first view's is a few KiB).
  {
    name: 'while the pack arrives',
    post: 2,
    afterBytes: 120_000,
    phase: /^(receiving|remote)$/,
    depth: 1000,
  },
  {
    name: 'after the database was written, before the checkout got a byte',
    post: 3,
    afterBytes: 0,
    phase: 'fetching-blobs',
    depth: 1000,
  },
  {
    name: 'in the checkout, after blob bytes arrived',
    post: 3,
    afterBytes: 16_000,
    phase: 'fetching-blobs',
    depth: 1000,
  },
];

for (const c of cases) {
  test(`Cancel ${c.name} leaves what was stored before, and nothing of the clone`, async ({ page }) => {
    // Something stored before, which must survive.
    await cloneThroughForm(page, `${gitServer}/basic.git`);
    await expect(page.getByTestId('file-tree')).toBeVisible({ timeout: 60_000 });
    await expect.poll(async () => (await stored(page)).records).toHaveLength(1);
    const before = await stored(page);
    expect(before.databases).toHaveLength(1);

    let relay: Relay | undefined;
    try {
      relay = await startRelay(gitServer, { kind: 'hold', post: c.post, afterBytes: c.afterBytes });
      await cloneThroughForm(page, `${relay.url}/small-sized.git`, c.depth);
      await relay.holding;
      const progress = page.getByTestId('progress');
      await expect(progress).toHaveAttribute('data-phase', c.phase, { timeout: 30_000 });
      await page.getByRole('button', { name: 'Cancel' }).click();
      await expect(page.getByTestId('clone-error')).toContainText('ABORTED', { timeout: 30_000 });
      relay.release();
      await expect.poll(() => stored(page), { timeout: 30_000 }).toEqual(before);
      // And a new page (a new worker) finds the same.
      await page.reload();
      await expect(page.getByTestId('repo-list')).toContainText('basic');
      expect(await stored(page)).toEqual(before);
    } finally {
      await relay?.close();
    }
  });
}

test('Cancel in the branch switcher, after blob bytes arrived: HEAD, index and files stay on the old branch', async ({
  page,
}) => {
  const bare = join((await ensureFixtures()).dir, 'features.git');
  const gitIn = (args: string[]) => execFileSync('git', args, { cwd: bare, encoding: 'utf8' });
  // main to v0.1 needs blobs main's checkout did not fetch: the old assets/image.bin alone is 200 KB of
  // random bytes, so the held fetch is caught with its first 16 KB in and most of it still to come.
  const target = 'v0.1';
  const needed = gitIn(['diff', '--raw', '--no-renames', 'main', target])
    .trim()
    .split('\n')
    .map((l) => l.split(/\s+/)[3])
    .filter((oid) => !/^0+$/.test(oid));
  expect(needed.length).toBeGreaterThan(0);
  const requests: { path: string; body: Buffer }[] = [];
  const relay = await startRelay(gitServer, { kind: 'record', requests });
  try {
    await cloneThroughForm(page, `${relay.url}/features.git`);
    await expect(page.getByTestId('file-tree')).toBeVisible({ timeout: 60_000 });
    // The tags arrive with the history, behind the first view; main's working tree when asked for.
    await expect(page.getByTestId('history-fill')).toHaveAttribute('data-status', 'complete', {
      timeout: 60_000,
    });
    await page.getByTestId('open-working-tree').click();
    await expect(page.getByTestId('working-tree')).toContainText('No changes in the working tree.', {
      timeout: 60_000,
    });
    await page.getByTestId('tab-code').click();
    await expect(refShown(page)).toHaveText('main');
    const repoId = await repoIdOf(page);
    const before = await settledFiles(page, repoId);
    expect(Buffer.from(before['/.git/HEAD'], 'base64').toString()).toBe('ref: refs/heads/main\n');

    // The switch's blob fetch is the next POST with a body (preflights have none).
    const posts = requests.filter((r) => r.path.endsWith('/git-upload-pack') && r.body.length > 0).length;
    relay.setMode({ kind: 'hold', post: posts + 1, afterBytes: 16_000 });
    await switchRef(page, target);
    await relay.holding;
    await expect(page.getByTestId('progress')).toHaveAttribute('data-phase', 'fetching-blobs');
    await page.getByTestId('checkout-cancel').click();
    await expect(page.getByTestId('checkout-cancel')).toBeHidden({ timeout: 30_000 });
    relay.release();

    // Cancelled is no error to show; the switcher and the address still name main.
    await expect(refShown(page)).toHaveText('main');
    await expect(page.locator('.ref-switcher [role="alert"]')).toHaveCount(0);
    expect(new URL(page.url()).searchParams.get('ref') ?? 'main').toBe('main');
    // Every stored file (HEAD, index, working tree, packs) as before: nothing of v0.1 half-written.
    expect(await settledFiles(page, repoId)).toEqual(before);
    // And a new page (a new worker) finds the same.
    await page.reload();
    await expect(refShown(page)).toHaveText('main');
    expect(await storedFiles(page, repoId)).toEqual(before);
  } finally {
    await relay.close();
  }
});
