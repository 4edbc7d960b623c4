// Startup repair in Chromium: what a tab closed mid-write leaves (here made by hand, as such a tab would
// leave it) is found by the next worker through indexedDB.databases() and navigator.locks, removed, and
// said on the page; a database whose lock another tab holds (a clone in progress there) is left alone.
import { expect, test } from '@playwright/test';

test('a database no record names is deleted and reported, unless its lock is held', async ({ browser }) => {
  const context = await browser.newContext();
  const page = await context.newPage();
  await page.goto('/');
  await expect(page.getByRole('heading', { name: 'Your repositories' })).toBeVisible();
  // This page's own worker has checked the storage before the leftovers below exist.
  await expect(page.locator('body[data-storage-checked="true"]')).toHaveCount(1);
  await expect(page.getByTestId('repair-report')).toHaveCount(0);

  // An interrupted clone's leftovers, and a "clone in progress": this page holds its repo's lock.
  await page.evaluate(async () => {
    const make = (name: string) =>
      new Promise<void>((resolve, reject) => {
        const req = indexedDB.open(name);
        req.onupgradeneeded = () => req.result.createObjectStore(`${name}_files`);
        req.onsuccess = () => {
          req.result.close();
          resolve();
        };
        req.onerror = () => reject(req.error);
      });
    await make('blobless-repo-dead-1');
    await make('blobless-repo-dead-1_lock');
    await make('blobless-repo-alive-2');
    // Held until the page goes: the lock a clone holds from before its database exists to its record.
    void navigator.locks.request('blobless-repo-alive-2:write', () => new Promise(() => undefined));
  });
  // A new tab starts its worker, which repairs once at start.
  const next = await context.newPage();
  await next.goto('/');
  const report = next.getByTestId('repair-report');
  // The first load of a context also installs the service worker and precaches the build: allow for it.
  await expect(report).toContainText(
    'Deleted blobless-repo-dead-1: an interrupted clone that no repository record names.',
    { timeout: 30_000 },
  );
  await expect(report).not.toContainText('alive-2');
  const names = await next.evaluate(async () => (await indexedDB.databases()).map((d) => d.name));
  expect(names).not.toContain('blobless-repo-dead-1');
  expect(names).not.toContain('blobless-repo-dead-1_lock');
  expect(names).toContain('blobless-repo-alive-2');
  await next.getByRole('button', { name: 'Dismiss' }).click();
  await expect(report).toHaveCount(0);
  await context.close();
});
