import { expect, test } from '@playwright/test';

const gitServer = process.env.GIT_SERVER_URL ?? 'http://127.0.0.1:4174';
const proxy = process.env.CORS_PROXY_URL ?? 'http://127.0.0.1:4175';
const gitHost = new URL(gitServer).host;

test('a clone through the CORS proxy works from the page', async ({ page }) => {
  const viaProxy: string[] = [];
  page.on('request', (r) => {
    if (r.url().startsWith(proxy)) viaProxy.push(r.url());
  });
  await page.goto('/');
  await page.getByTestId('clone-url').fill(`${gitServer}/basic.git`);
  await page.getByText('CORS proxy and private repositories').click();
  await page.getByLabel('CORS proxy').fill(proxy);
  await page.getByTestId('clone-submit').click();
  await expect(page.getByTestId('file-tree')).toBeVisible({ timeout: 60_000 });
  expect(viaProxy.some((u) => u.includes('/info/refs?service=git-upload-pack'))).toBe(true);
});

test('the proxy refuses any other path, and loopback hosts it was not told about', async ({ page }) => {
  await page.goto('/');
  const statuses = await page.evaluate(
    async ([p, host, app]) => {
      const other = await fetch(`${p}/${host}/_blobless/stats`);
      const loopback = await fetch(`${p}/${app}/x.git/info/refs?service=git-upload-pack`, {
        headers: { 'Git-Protocol': 'version=2' },
      });
      return [other.status, loopback.status, await loopback.text()];
    },
    [proxy, gitHost, new URL(page.url()).host],
  );
  expect(statuses[0]).toBe(403);
  expect(statuses[1]).toBe(403);
  expect(statuses[2]).toMatch(/loopback or private/);
});
