import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { expect, type Page, test } from '@playwright/test';
import { ensureFixtures } from '../server/fixtures/index.ts';
import { startRedirectServer } from '../test/support/redirectServer.ts';

const gitServer = process.env.GIT_SERVER_URL ?? 'http://127.0.0.1:4174';
const proxy = process.env.CORS_PROXY_URL ?? 'http://127.0.0.1:4175';

// renamed.git answers 301 to basic.git on every path (server/fixtures/fixtureServerOptions.ts).
async function basicFile(path: string): Promise<string> {
  const bare = join((await ensureFixtures()).dir, 'basic.git');
  return execFileSync('git', ['--git-dir', bare, 'show', `HEAD:${path}`], { encoding: 'utf8' });
}

test('a moved repository opens from its old address, in Chromium', async ({ page }) => {
  // Each POST as `path command`: the command is the body's first pkt-line (gitprotocol-v2).
  const posts: string[] = [];
  page.on('request', (r) => {
    if (r.method() !== 'POST') return;
    const command = /command=([a-z-]+)/.exec(r.postData() ?? '')?.[1] ?? '?';
    posts.push(`${new URL(r.url()).pathname} ${command}`);
  });
  await page.goto(`/?repo=${encodeURIComponent(`${gitServer}/renamed.git`)}&path=src/greet.js`);
  await expect(page.getByTestId('file-content')).toBeVisible({ timeout: 90_000 });
  expect(await page.getByTestId('file-content').evaluate((el) => el.textContent)).toBe(
    await basicFile('src/greet.js'),
  );
  // The clone's POSTs went to the new address once info/refs moved, but for the ls-refs sent with its GET;
  // the lazy fetch of the file's blob (which skips info/refs) and the history fill's fetches (their
  // ls-refs sent with the GET) go to where the clone's info/refs landed (RepoRecord.movedTo), so none of
  // them goes to the old address.
  await expect(page.getByTestId('history-fill')).toHaveAttribute('data-status', 'complete', {
    timeout: 60_000,
  });
  expect(posts.slice(0, 3)).toEqual([
    // ls-refs sent with the GET (docs/decisions/ls-refs-ahead.md): answered 301, so asked again where it moved
    '/renamed.git/git-upload-pack ls-refs',
    '/basic.git/git-upload-pack ls-refs',
    '/basic.git/git-upload-pack fetch',
  ]);
  // The old address saw the clone's early ls-refs, nothing else.
  expect(posts.filter((p) => p.startsWith('/renamed.git/'))).toEqual([
    '/renamed.git/git-upload-pack ls-refs',
  ]);
  // The history fill fetched (its ls-refs, each asked once, at the new address).
  expect(posts.filter((p) => p === '/basic.git/git-upload-pack ls-refs').length).toBeGreaterThan(1);
});

test('a private repository moved on its host opens with its token, in Chromium', async ({ page }) => {
  // Chromium hides where a manual redirect points: the client finds it with one GET without the token.
  const tokened: string[] = [];
  page.on('request', (r) => {
    if (r.headers().authorization) tokened.push(r.url());
  });
  await cloneWithToken(page, `${gitServer}/renamed-private.git`);
  await expect(page.getByTestId('file-tree')).toBeVisible({ timeout: 90_000 });
  expect(tokened.length).toBeGreaterThan(0);
  expect(tokened.filter((u) => !u.startsWith(`${gitServer}/`))).toEqual([]);
});

test('a private repository redirected to another origin: refused, and no request there carries the token', async ({
  page,
}) => {
  // localhost is another origin than 127.0.0.1, on the same git server.
  const elsewhere = gitServer.replace('127.0.0.1', 'localhost');
  const moved = await startRedirectServer([{ from: '/private.git/', to: `${elsewhere}/private.git/` }]);
  try {
    const there: { url: string; token: boolean }[] = [];
    page.on('request', (r) => {
      if (r.url().startsWith(elsewhere)) there.push({ url: r.url(), token: !!r.headers().authorization });
    });
    await cloneWithToken(page, `${moved.url}/private.git`);
    await expect(page.getByTestId('clone-error')).toContainText('REDIRECT_REFUSED', { timeout: 60_000 });
    expect(there.filter((r) => r.token)).toEqual([]);
    expect(moved.seen.filter((r) => r.authorization).length).toBeGreaterThan(0);
  } finally {
    await moved.close();
  }
});

async function cloneWithToken(page: Page, url: string) {
  await page.goto('/');
  await page.getByTestId('clone-url').fill(url);
  await page.getByText('CORS proxy and private repositories').click();
  await page.getByLabel('User name').fill('alice');
  await page.getByLabel(/^Token/).fill('secret');
  await page.getByTestId('clone-submit').click();
}

test('a moved repository clones through the CORS proxy, which sends the redirect back through itself', async ({
  page,
}) => {
  const seen: string[] = [];
  page.on('request', (r) => {
    if (r.url().startsWith(proxy)) seen.push(`${r.method()} ${new URL(r.url()).pathname}`);
  });
  await page.goto('/');
  await page.getByTestId('clone-url').fill(`${gitServer}/renamed.git`);
  await page.getByText('CORS proxy and private repositories').click();
  await page.getByLabel('CORS proxy').fill(proxy);
  await page.getByTestId('clone-submit').click();
  await expect(page.getByTestId('file-tree')).toBeVisible({ timeout: 60_000 });
  const host = new URL(gitServer).host;
  expect(seen).toContain(`GET /${host}/renamed.git/info/refs`);
  expect(seen).toContain(`GET /${host}/basic.git/info/refs`);
  expect(seen).toContain(`POST /${host}/basic.git/git-upload-pack`);
});
