// A full disk, in Chromium: the site's quota lowered through the DevTools Protocol (Chromium has no flag
// for one context's quota) makes IndexedDB refuse writes with QuotaExceededError, as a full disk does. A
// clone then ends in STORAGE_FULL with the figures, leaves nothing of itself, and a repo stored before is
// untouched to the byte.
import { expect, type Page, test } from '@playwright/test';
import { settledFiles, storedFiles } from './storedFiles.ts';
import { repoIdOf } from './ui.ts';

const gitServer = process.env.GIT_SERVER_URL ?? 'http://127.0.0.1:4174';

async function clone(page: Page, repo: string, opts: { full?: boolean } = {}): Promise<void> {
  await page.goto('/');
  await page.getByTestId('clone-url').fill(`${gitServer}/${repo}`);
  if (opts.full) await page.getByLabel('Partial clone (file contents fetched when needed)').uncheck();
  await page.getByTestId('clone-submit').click();
}

/** The registry's records and the databases of the origin, as the page sees them. */
function storedState(page: Page) {
  return page.evaluate(async () => {
    const db = await new Promise<IDBDatabase>((resolve, reject) => {
      const req = indexedDB.open('blobless-registry');
      req.onsuccess = () => resolve(req.result);
      req.onerror = () => reject(req.error);
    });
    const records = await new Promise<unknown[]>((resolve, reject) => {
      const req = db.transaction('repos').objectStore('repos').getAll();
      req.onsuccess = () => resolve(req.result);
      req.onerror = () => reject(req.error);
    });
    db.close();
    const databases = (await indexedDB.databases()).map((d) => d.name ?? '').sort();
    return { records, databases };
  });
}

/** Writes `bytes` to a scratch database, then deletes it: '' if stored, else the error's name. */
async function probeWrite(bytes: number): Promise<string> {
  const db = await new Promise<IDBDatabase>((resolve, reject) => {
    const req = indexedDB.open('quota-probe');
    req.onupgradeneeded = () => req.result.createObjectStore('s');
    req.onsuccess = () => resolve(req.result);
    req.onerror = () => reject(req.error);
  });
  const outcome = await new Promise<string>((resolve) => {
    const tx = db.transaction('s', 'readwrite');
    // Random bytes: IndexedDB compresses values, and zeros would cost next to nothing.
    const data = new Uint8Array(bytes);
    for (let i = 0; i < bytes; i += 65536) crypto.getRandomValues(data.subarray(i, i + 65536));
    tx.objectStore('s').put(data, 1);
    tx.oncomplete = () => resolve('');
    tx.onabort = () => resolve(tx.error?.name ?? 'AbortError');
  });
  db.close();
  await new Promise((resolve) => {
    const req = indexedDB.deleteDatabase('quota-probe');
    req.onsuccess = req.onerror = resolve;
  });
  return outcome;
}

/**
 * The site's quota from its first write on: room for basic.git, its history and the app's offline cache
 * (a few MB; asserted below to be under half of it). Chromium's IndexedDB hands out space it was told was
 * free without asking again, for up to 30 s (`BucketContext::kBucketSpaceCacheTimeLimit`), as long as a
 * write needs no more than that allowance: under the default quota (a share of the disk) no small write
 * ever asks, and a lowered quota showed only once the allowance had run out. Under this one the allowance
 * is at most this much, so a write of this size always makes IndexedDB ask the quota manager, and see the
 * quota lowered.
 */
const FIRST_QUOTA = 24_000_000;

test('a clone past the quota ends in STORAGE_FULL with the figures, and a repo stored before is untouched', async ({
  browser,
  baseURL,
}) => {
  test.setTimeout(180_000);
  const context = await browser.newContext();
  const page = await context.newPage();
  const origin = new URL(baseURL!).origin;
  const cdp = await context.newCDPSession(page);
  await cdp.send('Storage.overrideQuotaForOrigin', { origin, quotaSize: FIRST_QUOTA });
  await clone(page, 'basic.git');
  await expect(page.getByTestId('file-tree')).toBeVisible({ timeout: 90_000 });
  const kept = await repoIdOf(page);
  // The clone opened at its first view: its history (and the README's blob) arrive behind it. Snapshot
  // the repo once they have.
  await expect(page.getByTestId('history-fill')).toHaveAttribute('data-status', 'complete', {
    timeout: 90_000,
  });
  const keptFiles = await settledFiles(page, kept);
  expect(Object.keys(keptFiles)).toContain('/.git/HEAD');

  // What the site stores now (the app's offline cache too), plus 300 KB: small-sized.git's full pack (every
  // file, as the person may choose) is 0.9 MB. (A new clone's first view, one commit's trees, is 28 KB:
  // it would fit.)
  expect(new URL(page.url()).origin).toBe(origin);
  // The figure is taken once the site stops growing: the service worker's precache (1.7 MB of the build)
  // is written beside the first clone, and on a busy machine it may still be at it. Grown after the
  // quota is set, it would leave no room even for the clone's first few bytes.
  await expect
    .poll(() => page.evaluate(async () => !!(await navigator.serviceWorker.getRegistration())?.active), {
      timeout: 60_000,
    })
    .toBe(true);
  const usageNow = async () => (await cdp.send('Storage.getUsageAndQuota', { origin })).usage;
  let usage = await usageNow();
  await expect
    .poll(
      async () => {
        const previous = usage;
        usage = await usageNow();
        return usage === previous;
      },
      { timeout: 60_000, intervals: [1000] },
    )
    .toBe(true);
  // Room for the clone's first small writes (a new database, its superblock, the lock's), not for its
  // pack: with less, which write is refused first depends on how Chromium counts a new database's files,
  // and the error names a write of a few kilobytes ("0.0 MB needed", as it did under load).
  expect(usage).toBeLessThan(FIRST_QUOTA / 2);
  await cdp.send('Storage.overrideQuotaForOrigin', { origin, quotaSize: usage + 300_000 });
  // A write larger than any allowance IndexedDB may still hold makes it ask the quota manager (see
  // FIRST_QUOTA); from then on a 600 KB write of a scratch database is refused, a 16 KB one stored.
  expect(await page.evaluate(probeWrite, FIRST_QUOTA)).toBe('QuotaExceededError');
  await expect
    .poll(() => page.evaluate(probeWrite, 600_000), { timeout: 90_000, intervals: [1000] })
    .toBe('QuotaExceededError');
  expect(await page.evaluate(probeWrite, 16_000)).toBe('');
  const before = await storedState(page);

  await clone(page, 'small-sized.git', { full: true });
  const error = page.getByTestId('clone-error');
  await expect(error).toBeVisible({ timeout: 90_000 });
  await expect(error).toContainText('Error code: STORAGE_FULL');
  // How much the write needed, and what the browser says of the site's storage.
  const message = (await error.locator('strong').textContent()) ?? '';
  expect(message).toMatch(/\(\d+\.\d MB needed; /);
  expect(message).toMatch(/\d+(\.\d MB| KB) free of|this site stores \d+\.\d MB/);
  const needed = Number(/\((\d+\.\d) MB needed/.exec(message)![1]);
  expect(needed).toBeGreaterThan(0.1);

  // Nothing of the failed clone is left (no database, no record), and the earlier repo is as it was.
  expect(await storedState(page)).toEqual(before);
  expect(await storedFiles(page, kept)).toEqual(keptFiles);

  // With room again, the same clone succeeds, and the earlier repo still opens.
  await cdp.send('Storage.overrideQuotaForOrigin', { origin });
  await clone(page, 'small-sized.git', { full: true });
  await expect(page.getByTestId('file-tree')).toBeVisible({ timeout: 90_000 });
  await page.goto(`/?repo=${kept}`);
  await expect(page.getByTestId('file-tree')).toBeVisible();
  expect(await storedFiles(page, kept)).toEqual(keptFiles);
  await context.close();
});
