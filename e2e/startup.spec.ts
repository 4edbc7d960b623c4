// The benchmark's Blobless column is measured on a page that makes the app's start-up calls (bench/page/
// main.ts calls src/startup.ts's startUp, and the bench refuses a page whose calls differ from
// STARTUP_CALLS). This checks the other half: what the built app itself sends through the worker boundary
// when it loads is exactly that list, in that order, so a view that adds a call at page load shows here.
import { expect, test } from '@playwright/test';
import { STARTUP_CALLS } from '../src/startup.ts';
import { engineCallName } from '../workers/engine/remote.ts';

declare global {
  interface Window {
    __blobless_calls?: string[];
  }
}

test('the app makes exactly the start-up calls of src/startup.ts, in order, as the bench page does', async ({
  browser,
}) => {
  // A new context: no stored repositories, no service worker yet, as the bench's fresh profiles.
  const context = await browser.newContext();
  const page = await context.newPage();
  // Every message to a worker goes through engineCallName, the function the bench page uses to name the
  // calls: an init script cannot import, so it gets the function's own source (self-contained for this).
  await page.addInitScript(`
    window.__blobless_calls = [];
    const engineCallName = ${engineCallName.toString()};
    const post = Worker.prototype.postMessage;
    Worker.prototype.postMessage = function (message, ...rest) {
      const name = engineCallName(message);
      if (name !== null) window.__blobless_calls.push(name);
      return post.call(this, message, ...rest);
    };
  `);
  await page.goto('/');
  // The home view has shown the stored repositories and the storage check is done: every call made at
  // page load has been sent by then (the list is one of them).
  await expect(page.getByRole('heading', { name: 'Your repositories' })).toBeVisible();
  await expect(page.getByText('No repositories yet')).toBeVisible();
  await expect(page.locator('body[data-storage-checked="true"]')).toHaveCount(1);
  expect(await page.evaluate(() => window.__blobless_calls)).toEqual([...STARTUP_CALLS]);
  // The warm-up waits for a sign of a clone (docs/decisions/warm-up.md): the URL field taken, once.
  await page.getByTestId('clone-url').focus();
  await page.getByTestId('clone-url').fill('owner/repo');
  await expect.poll(() => page.evaluate(() => window.__blobless_calls)).toEqual([...STARTUP_CALLS, 'warmUp']);
  await context.close();
});
