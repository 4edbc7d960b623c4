import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { expect, test } from '@playwright/test';
import { ensureFixtures } from '../server/fixtures/index.ts';

const gitServer = process.env.GIT_SERVER_URL ?? 'http://127.0.0.1:4174';

test('a private repo asks for its token again after a reload, then shows the lazily fetched file', async ({
  page,
}) => {
  const bare = join((await ensureFixtures()).dir, 'private.git');
  const gitIn = (args: string[]) => execFileSync('git', args, { cwd: bare, encoding: 'utf8' });
  // The first version of a file that changed since: its blob is not fetched by the clone.
  const first = gitIn(['rev-list', '--max-parents=0', 'HEAD']).trim();
  const path = 'src/greet.js';
  expect(gitIn(['show', `${first}:${path}`])).not.toBe(gitIn(['show', `HEAD:${path}`]));

  const authorized: string[] = [];
  page.on('request', (req) => {
    if (req.url().startsWith(gitServer) && req.headers().authorization) authorized.push(req.url());
  });

  // Cloned with a token for this session only.
  await page.goto('/');
  await page.getByTestId('clone-url').fill(`${gitServer}/private.git`);
  await page.getByText('CORS proxy and private repositories').click();
  await page.getByLabel('User name').fill('alice');
  await page.getByLabel(/^Token/).fill('secret');
  await page.getByTestId('clone-submit').click();
  await expect(page.getByTestId('file-tree')).toBeVisible({ timeout: 90_000 });
  expect(authorized.length).toBeGreaterThan(0);
  // The history arrives behind the first view, with the session's token.
  await expect(page.getByTestId('history-fill')).toHaveAttribute('data-status', 'complete', {
    timeout: 60_000,
  });

  // A reload starts a new worker: the session token is gone.
  await page.reload();
  await expect(page.getByTestId('file-tree')).toBeVisible();
  const url = new URL(page.url());
  url.searchParams.set('ref', first);
  url.searchParams.set('path', path);
  authorized.length = 0;
  await page.goto(url.toString());

  // The lazy fetch of that file's blob meets a 401: the token dialog asks, and the file then shows.
  const dialog = page.getByRole('dialog', { name: /Token for/ });
  await expect(dialog).toBeVisible({ timeout: 30_000 });
  await expect(page.getByTestId('file-error')).toHaveCount(0);
  // A wrong token is refused and asked for again.
  await dialog.getByLabel('User name').fill('alice');
  await dialog.getByLabel('Token or password').fill('wrong');
  await dialog.getByRole('button', { name: 'Continue' }).click();
  await expect(dialog).toContainText('refused');
  await dialog.getByLabel('User name').fill('alice');
  await dialog.getByLabel('Token or password').fill('secret');
  await dialog.getByRole('button', { name: 'Continue' }).click();
  await expect(dialog).toHaveCount(0);
  await expect(page.getByTestId('file-content')).toBeVisible();
  expect(await page.getByTestId('file-content').evaluate((el) => el.textContent)).toBe(
    gitIn(['show', `${first}:${path}`]),
  );
  // Sent only to the repo's own host.
  expect(authorized.length).toBeGreaterThan(0);
  expect(authorized.every((u) => u.startsWith(`${gitServer}/private.git/`))).toBe(true);
});

test('Fetch and Fetch tags in the repo header report that a fresh clone is up to date', async ({ page }) => {
  await page.goto('/');
  await page.getByTestId('clone-url').fill(`${gitServer}/basic.git`);
  await page.getByTestId('clone-submit').click();
  await expect(page.getByTestId('file-tree')).toBeVisible({ timeout: 90_000 });
  await page.getByTestId('fetch-button').click();
  await expect(page.getByTestId('sync-summary')).toContainText('Already up to date');
  await expect(page.getByTestId('fetch-tags-hint')).toBeVisible();
  // The clone listed every tag: the full listing finds nothing new either.
  await page.getByTestId('fetch-tags-button').click();
  await expect(page.getByTestId('sync-summary')).toContainText('Every tag is up to date');
  await expect(page.getByTestId('fetch-tags-hint')).toHaveCount(0);
  await page.getByTestId('pull-button').click();
  await expect(page.getByTestId('sync-summary')).toContainText('main is up to date');
});
