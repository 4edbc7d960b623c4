// The deployments of deploy/ as a person meets them: the app and the CORS proxy from the Cloudflare
// configuration running in workerd, against a git server that sends no CORS headers (as GitHub's), a
// token that goes through a proxy only with the person's consent, and a static host that sends no headers.

import { execFileSync } from 'node:child_process';
import { cpSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect, type Page, test } from '@playwright/test';
import sirv from 'sirv';
import { PRIVATE_REPO_CREDENTIALS } from '../server/fixtures/fixtureServerOptions.ts';
import { ensureFixtures } from '../server/fixtures/index.ts';
import { type GitServer, startGitServer } from '../server/gitServer.ts';
import { type Relay, startRelay } from '../test/support/relay.ts';
import { commitStaged, editFile, openTab } from './ui.ts';
import { startWorkerdDeploy } from './workerdDeploy.ts';

// Ports after the ones playwright.config.ts and embed.spec.ts take (E2E_PORT + 0..5).
const BASE_PORT = Number(process.env.E2E_PORT ?? 4173);
const WORKERD_PORT = BASE_PORT + 6;
const GIT_PORT = BASE_PORT + 7;
const RELAY_PORT = BASE_PORT + 8;
const STATIC_PORT = BASE_PORT + 9;

let root: string;
let git: GitServer;
let deployed: Awaited<ReturnType<typeof startWorkerdDeploy>>;
const gitIn = (repo: string, args: string[]) =>
  execFileSync('git', args, { cwd: join(root, repo), encoding: 'utf8' }).trim();

test.beforeAll(async () => {
  const { dir } = await ensureFixtures();
  // Copies: the push changes basic.git.
  root = mkdtempSync(join(tmpdir(), 'blobless-e2e-deploy-'));
  for (const repo of ['basic.git', 'private.git'])
    cpSync(join(dir, repo), join(root, repo), { recursive: true });
  git = await startGitServer({
    root,
    port: GIT_PORT,
    cors: false,
    receivePackRepos: ['basic.git'],
    auth: { 'private.git': PRIVATE_REPO_CREDENTIALS },
  });
  deployed = await startWorkerdDeploy({
    port: WORKERD_PORT,
    vars: { LOCAL_HOSTS: new URL(git.url).host },
  });
});

test.afterAll(async () => {
  await deployed?.close();
  await git?.close();
  rmSync(root, { recursive: true, force: true });
});

async function cloneFromForm(
  page: Page,
  url: string,
  proxy?: { proxy: string; user: string; token: string },
) {
  await page.getByTestId('clone-url').fill(url);
  if (proxy) {
    await page.getByText('CORS proxy and private repositories').click();
    await page.getByLabel('CORS proxy').fill(proxy.proxy);
    await page.getByLabel('User name').fill(proxy.user);
    await page.getByLabel(/^Token/).fill(proxy.token);
    await page.getByTestId('clone-token-proxy-consent').check();
  }
  await page.getByTestId('clone-submit').click();
  await expect(page.getByTestId('file-tree')).toBeVisible({ timeout: 90_000 });
}

test('the Cloudflare configuration in workerd: clone through its proxy, read a file, push', async ({
  page,
}) => {
  const base = gitIn('basic.git', ['rev-parse', 'main']);
  await page.goto(deployed.url);
  // The host sends no CORS headers: the direct request fails, and the app goes through config.json's proxy.
  await cloneFromForm(page, `${git.url}/basic.git`);
  await expect(page.getByTestId('repo-proxy')).toHaveText(`via ${new URL(deployed.url).host}`);
  const tree = page.getByTestId('file-tree');
  await tree.getByRole('treeitem', { name: 'Folder docs' }).click();
  await tree.getByRole('treeitem', { name: 'File guide.txt' }).click();
  await expect(page.getByTestId('file-content')).toHaveText(
    gitIn('basic.git', ['show', 'main:docs/guide.txt']),
  );

  await editFile(page, 'Getting started', async () => {
    await page.keyboard.press('Control+End');
    await page.keyboard.type('Pushed through the Worker.');
  });
  await openTab(page, 'changes');
  const panel = page.getByTestId('working-tree');
  await panel.getByTestId('stage-all').click();
  await commitStaged(page, 'Through the Worker');
  await panel.getByTestId('push').click();
  await expect(panel.getByTestId('push-result')).toContainText('Pushed main: 1 commit');
  expect(gitIn('basic.git', ['rev-parse', 'main~1'])).toBe(base);
  expect(gitIn('basic.git', ['show', 'main:docs/guide.txt'])).toMatch(/Pushed through the Worker\.$/);
});

test('a token goes through a proxy only once the person agreed to it in the token dialog', async ({
  page,
}) => {
  // A counting relay in front of the proxy: it sees every request the page sends the proxy.
  const seen: { path: string; body: Buffer; authorized?: boolean }[] = [];
  const relay: Relay = await startRelay(deployed.url, { kind: 'record', requests: seen }, RELAY_PORT);
  try {
    const viaRelay = `${relay.url}/proxy`;
    await page.goto(deployed.url);
    // Cloned with the token for this session, the form's consent ticked.
    await cloneFromForm(page, `${git.url}/private.git`, { proxy: viaRelay, user: 'alice', token: 'secret' });
    await expect(page.getByTestId('repo-proxy')).toHaveText(`via ${new URL(relay.url).host}`);
    // The history arrives behind the first view, with the session's token.
    await expect(page.getByTestId('history-fill')).toHaveAttribute('data-status', 'complete', {
      timeout: 60_000,
    });
    expect(seen.some((r) => r.authorized)).toBe(true);

    // A reload forgets the session's token; an older file's blob needs it again.
    await page.reload();
    await expect(page.getByTestId('file-tree')).toBeVisible();
    const first = gitIn('private.git', ['rev-list', '--max-parents=0', 'HEAD']);
    const url = new URL(page.url());
    url.searchParams.set('ref', first);
    url.searchParams.set('path', 'src/greet.js');
    seen.length = 0;
    await page.goto(url.toString());
    const dialog = page.getByRole('dialog', { name: /Token for/ });
    await expect(dialog).toBeVisible({ timeout: 30_000 });
    await expect(dialog).toContainText(viaRelay);
    await dialog.getByLabel('User name').fill('alice');
    await dialog.getByLabel('Token or password').fill('secret');
    await dialog.getByRole('button', { name: 'Continue' }).click();
    // Refused: the dialog stays and says why, and nothing carrying the token reached the proxy.
    await expect(dialog.getByRole('alert')).toContainText(
      `Tick the box to send the token through ${viaRelay}`,
    );
    await page.waitForTimeout(500);
    expect(seen.length).toBeGreaterThan(0);
    expect(seen.filter((r) => r.authorized)).toEqual([]);

    await dialog.getByTestId('token-proxy-consent').check();
    await dialog.getByRole('button', { name: 'Continue' }).click();
    await expect(dialog).toHaveCount(0);
    await expect(page.getByTestId('file-content')).toHaveText(
      gitIn('private.git', ['show', `${first}:src/greet.js`]),
    );
    expect(seen.some((r) => r.authorized)).toBe(true);
  } finally {
    await relay.close();
  }
});

test('on a static host that sends no headers, the app framed by a page of its own site does not run', async ({
  page,
}) => {
  const dist = join(import.meta.dirname, '..', 'dist');
  const files = sirv(dist, { single: true });
  const server: Server = createServer((req, res) => {
    if (req.url === '/framing.html') {
      res.writeHead(200, { 'Content-Type': 'text/html; charset=utf-8' });
      res.end(
        '<!doctype html><title>Same site</title><iframe src="/" title="app" width="800" height="400"></iframe>',
      );
      return;
    }
    files(req, res);
  });
  await new Promise<void>((resolve) => server.listen(STATIC_PORT, '127.0.0.1', resolve));
  try {
    const origin = `http://127.0.0.1:${STATIC_PORT}`;
    // Unframed, on the same host, it runs.
    await page.goto(origin);
    await expect(page.getByTestId('clone-url')).toBeVisible();
    await page.goto(`${origin}/framing.html`);
    const framed = page.frameLocator('iframe[title="app"]');
    await expect(framed.locator('#app')).toHaveText(/does not run inside a frame/);
    await expect(framed.getByTestId('clone-url')).toHaveCount(0);
  } finally {
    await new Promise((resolve) => server.close(resolve));
  }
});
