import { execFileSync } from 'node:child_process';
import { appendFileSync, cpSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { expect, type Page, test } from '@playwright/test';
import sirv from 'sirv';
import { ensureFixtures } from '../server/fixtures/index.ts';
import { repoIdOf } from './ui.ts';

const gitServer = process.env.GIT_SERVER_URL ?? 'http://127.0.0.1:4174';
const dist = join(process.cwd(), 'dist');

let bare: string;
test.beforeAll(async () => {
  bare = join((await ensureFixtures()).dir, 'features.git');
});

function gitIn(args: string[]): string {
  return execFileSync('git', args, { cwd: bare, encoding: 'utf8' });
}

/** Width and height from a PNG's IHDR chunk (bytes 16 to 24, big-endian). */
function pngSize(bytes: Buffer): { width: number; height: number } {
  expect(bytes.subarray(1, 4).toString('latin1')).toBe('PNG');
  return { width: bytes.readUInt32BE(16), height: bytes.readUInt32BE(20) };
}

/** Every file of the build the app may need, as a path from the root: all but source maps. */
function builtFiles(dir = dist): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const path = join(dir, e.name);
    if (e.isDirectory()) return builtFiles(path);
    return e.name.endsWith('.map') ? [] : [relative(dist, path)];
  });
}

async function waitForController(page: Page): Promise<void> {
  await expect
    .poll(() => page.evaluate(async () => !!(await navigator.serviceWorker.getRegistration())?.active), {
      timeout: 20_000,
    })
    .toBe(true);
  if (!(await page.evaluate(() => !!navigator.serviceWorker.controller))) await page.reload();
  await expect.poll(() => page.evaluate(() => !!navigator.serviceWorker.controller)).toBe(true);
}

test('the web app manifest is served, complete, and its icons load at their sizes', async ({
  page,
  request,
}) => {
  await page.goto('/');
  const href = await page.locator('link[rel="manifest"]').getAttribute('href');
  expect(href).toBeTruthy();
  const manifestUrl = new URL(href!, page.url());
  const res = await request.get(manifestUrl.toString());
  expect(res.status()).toBe(200);
  const manifest = await res.json();
  expect(manifest).toMatchObject({
    name: expect.stringContaining('Blobless'),
    short_name: 'Blobless',
    description: expect.any(String),
    display: 'standalone',
    theme_color: expect.stringMatching(/^#[0-9a-f]{6}$/i),
    background_color: expect.stringMatching(/^#[0-9a-f]{6}$/i),
  });
  // start_url and scope resolve against the manifest's URL, and the app's page must be inside the scope.
  const start = new URL(manifest.start_url, manifestUrl);
  const scope = new URL(manifest.scope, manifestUrl);
  expect(start.origin).toBe(manifestUrl.origin);
  expect(start.href.startsWith(scope.href)).toBe(true);
  expect(page.url().startsWith(scope.href)).toBe(true);

  const icons = manifest.icons as { src: string; sizes: string; type: string; purpose?: string }[];
  for (const size of [192, 512]) {
    expect(icons.some((i) => i.sizes === `${size}x${size}` && (i.purpose ?? 'any').includes('any'))).toBe(
      true,
    );
    expect(icons.some((i) => i.sizes === `${size}x${size}` && i.purpose?.includes('maskable'))).toBe(true);
  }
  for (const icon of icons) {
    const got = await request.get(new URL(icon.src, manifestUrl).toString());
    expect(got.status(), icon.src).toBe(200);
    expect(got.headers()['content-type']).toBe(icon.type);
    const [w, h] = icon.sizes.split('x').map(Number);
    expect(pngSize(await got.body()), icon.src).toEqual({ width: w, height: h });
  }

  // A theme colour for each scheme, and a service worker the server lets browsers check on every load.
  const themes = await page
    .locator('meta[name="theme-color"]')
    .evaluateAll((els) => els.map((e) => [e.getAttribute('media'), e.getAttribute('content')]));
  expect(themes).toEqual(
    expect.arrayContaining([
      ['(prefers-color-scheme: light)', expect.stringMatching(/^#/)],
      ['(prefers-color-scheme: dark)', expect.stringMatching(/^#/)],
    ]),
  );
  const sw = await request.get('/sw.js');
  expect(sw.status()).toBe(200);
  expect(sw.headers()['cache-control']).toBe('no-cache');
});

test('a service worker controls the page after the first load and has precached the whole build', async ({
  page,
}) => {
  await page.goto('/');
  await waitForController(page);
  const cached = await page.evaluate(async () => {
    const urls: string[] = [];
    for (const name of await caches.keys()) {
      if (!name.includes('precache')) continue;
      for (const req of await (await caches.open(name)).keys()) urls.push(new URL(req.url).pathname.slice(1));
    }
    return urls;
  });
  // _headers is read by static hosts (deploy/cloudflare), never by the page.
  const files = builtFiles().filter(
    (f) => f !== 'sw.js' && f !== '_headers' && !/^workbox-[\w-]+\.js$/.test(f),
  );
  // The app shell, the git worker (its wasm is inlined in it), the highlighter and every other lazy chunk.
  expect(files).toEqual(
    expect.arrayContaining(['index.html', expect.stringMatching(/^assets\/git\.worker-/)]),
  );
  expect(cached.sort()).toEqual(expect.arrayContaining(files.sort()));
});

test('offline, a reload opens the app, a stored repo, its history and diffs, and fetched files', async ({
  page,
  context,
}) => {
  await page.goto('/');
  await waitForController(page);
  await page.getByTestId('clone-url').fill(`${gitServer}/features.git`);
  await page.getByTestId('clone-submit').click();
  await expect(page.getByTestId('file-tree')).toBeVisible({ timeout: 90_000 });
  const repoId = await repoIdOf(page);
  // The history arrives behind the first view; the working tree (all of main's files) when asked for.
  await expect(page.getByTestId('history-fill')).toHaveAttribute('data-status', 'complete', {
    timeout: 60_000,
  });
  await page.getByTestId('open-working-tree').click();
  await expect(page.getByTestId('working-tree')).toContainText('No changes in the working tree.', {
    timeout: 60_000,
  });

  // The first clone asked for persistent storage; the home page gives the answer and the space.
  await page.goto('/');
  await expect(page.getByTestId('storage-persistence')).toContainText(
    /Persistent storage: (granted|not granted)/,
  );
  expect(
    await page.evaluate(
      async () => (await navigator.storage.persisted()) || !!localStorage.getItem('blobless.persistAsked'),
    ),
  ).toBe(true);
  await expect(page.getByTestId('storage-estimate')).toContainText(/used, .+ more available/);

  // Blobs the checkout of main fetched; a file of v0.1 whose blob is none of them was never fetched.
  const mainBlobs = new Set(
    gitIn(['ls-tree', '-r', 'main'])
      .trim()
      .split('\n')
      .map((l) => l.split(/\s+/)[2]),
  );
  const missing = gitIn(['ls-tree', '-r', '--name-only', 'v0.1'])
    .trim()
    .split('\n')
    .find((p) => !p.endsWith('.md') && !mainBlobs.has(gitIn(['rev-parse', `v0.1:${p}`]).trim()))!;
  expect(missing).toBeTruthy();
  // A commit of main whose every changed file, before and after, is stored: its diff needs no network.
  const zero = '0'.repeat(40);
  const stored = (oid: string) => oid === zero || mainBlobs.has(oid);
  let diffCommit: { oid: string; path: string } | undefined;
  for (const oid of gitIn(['rev-list', 'main']).trim().split('\n')) {
    const changes = gitIn(['diff-tree', '-r', '--root', '--no-commit-id', '--no-renames', oid])
      .trim()
      .split('\n')
      .filter(Boolean)
      .map((l) => l.split(/\s+/));
    // :old-mode new-mode old-oid new-oid status path
    const text = changes.find(
      (c) => (c[4] === 'M' || c[4] === 'A') && !gitIn(['show', `${c[3]}`]).includes('\0'),
    );
    if (text && changes.every((c) => stored(c[2]) && stored(c[3]))) {
      diffCommit = { oid, path: text.slice(5).join(' ') };
      break;
    }
  }
  expect(diffCommit, 'a commit of main whose diff is all stored').toBeTruthy();

  await context.setOffline(true);
  try {
    await page.reload();
    await expect(page.locator('.brand')).toBeVisible();
    await expect(page.getByTestId('offline-badge')).toBeVisible();
    // config.json (the CORS proxy to fall back on) answers from the cache of its last online answer.
    const config = await page.evaluate(() => fetch('config.json').then((r) => r.json()));
    expect(config).toEqual({ corsProxy: expect.stringMatching(/^http:\/\/127\.0\.0\.1:\d+$/) });

    // A stored file, by a real page load of its address (not Markdown, which is shown rendered).
    await page.goto(`/?${new URLSearchParams({ repo: repoId, path: 'notes/evolving.txt' })}`);
    await expect(page.getByTestId('file-content')).toBeVisible();
    expect(await page.getByTestId('file-content').evaluate((el) => el.textContent)).toBe(
      gitIn(['show', 'main:notes/evolving.txt']),
    );
    // The history, from a real page load of its address.
    await page.goto(`/?${new URLSearchParams({ repo: repoId, view: 'history' })}`);
    await expect(page.getByTestId('commit-list').locator('li').first()).toBeVisible();

    // A commit's diff, inline.
    await page.goto(`/?${new URLSearchParams({ repo: repoId, commit: diffCommit!.oid })}`);
    const diff = page.locator(`.file-diff[data-path="${diffCommit!.path}"]`).getByTestId('diff');
    await expect(diff).toBeVisible();
    await expect(diff.locator('.add, .del').first()).toBeVisible();

    // A file never fetched: the worker says offline, without trying.
    await page.goto(`/?${new URLSearchParams({ repo: repoId, ref: 'v0.1', path: missing })}`);
    const error = page.getByTestId('file-error');
    await expect(error).toContainText('OFFLINE');
    await expect(error).toContainText(missing);
    await expect(error).toContainText('This device is offline');

    // A link to a repository this browser does not have: the clone it starts says offline, sending nothing.
    const sent: string[] = [];
    page.on('request', (req) => {
      if (req.url().startsWith(gitServer)) sent.push(req.url());
    });
    await page.goto(`/?${new URLSearchParams({ repo: `${gitServer}/basic.git` })}`);
    await expect(page.getByTestId('clone-error')).toContainText('Error code: OFFLINE');
    await expect(page.getByTestId('clone-error')).toContainText(
      'Repositories already stored open without it',
    );
    expect(sent).toEqual([]);

    // Cloning says so before it is tried.
    await page.goto('/');
    await expect(page.getByTestId('clone-offline')).toBeVisible();
    await expect(page.getByTestId('clone-submit')).toBeDisabled();
  } finally {
    await context.setOffline(false);
  }
  await expect(page.getByTestId('offline-badge')).toBeHidden();
  await expect(page.getByTestId('clone-submit')).toBeEnabled();
});

test('a new version shows "update available" and reloads only when asked, never in the middle of a clone', async ({
  page,
  context,
}) => {
  // A copy of the build on its own server, so the test can publish a "new version" of it.
  const root = mkdtempSync(join(tmpdir(), 'blobless-pwa-'));
  cpSync(dist, root, { recursive: true });
  const assets = sirv(root, { dev: true, single: true });
  const server = createServer((req, res) => assets(req, res));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const origin = `http://localhost:${(server.address() as AddressInfo).port}`;
  const markDocument = (p: Page) =>
    p.evaluate(() => {
      (window as unknown as { sameDocument: boolean }).sameDocument = true;
    });
  // A page that is navigating away destroys the evaluation: that too means the document is gone.
  const sameDocument = (p: Page) => () =>
    p
      .evaluate(() => (window as unknown as { sameDocument?: boolean }).sameDocument === true)
      .catch(() => false);
  try {
    await page.goto(`${origin}/`);
    await waitForController(page);
    // A returning visit, as most are: the page starts under the service worker.
    await page.reload();
    await markDocument(page);

    // The next version: any byte of sw.js changed makes the browser install it beside the running one.
    appendFileSync(join(root, 'sw.js'), '\n// the next version\n');
    await page.evaluate(async () => (await navigator.serviceWorker.getRegistration())!.update());
    const prompt = page.getByTestId('update-prompt');
    await expect(prompt).toContainText('update of Blobless is available');
    expect(
      await page.evaluate(async () => !!(await navigator.serviceWorker.getRegistration())?.waiting),
    ).toBe(true);

    // A clone holds the reload back: its first request is held until the checks below are done.
    let release!: () => void;
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    await page.route('**/features.git/info/refs*', async (route) => {
      await held;
      await route.continue();
    });
    await page.getByTestId('clone-url').fill(`${gitServer}/features.git`);
    await page.getByTestId('clone-submit').click();
    await expect(prompt).toContainText('when the clone finishes');
    await expect(page.getByTestId('update-reload')).toBeDisabled();

    // Another tab applies the update meanwhile: this one is taken over by the new version, keeps cloning,
    // and only says so.
    const other = await context.newPage();
    await other.goto(`${origin}/`);
    await markDocument(other);
    await other.getByTestId('update-reload').click();
    await expect.poll(sameDocument(other)).toBe(false);
    await expect(other.getByTestId('update-prompt')).toBeHidden();
    await expect(prompt).toContainText('updated in another tab');
    await expect(page.getByTestId('update-reload')).toBeDisabled();
    await other.close();

    release();
    await expect(page.getByTestId('file-tree')).toBeVisible({ timeout: 90_000 });
    await expect(page.getByTestId('update-reload')).toBeEnabled();
    // Nothing reloaded this page by itself, all along.
    expect(await sameDocument(page)()).toBe(true);

    await page.getByTestId('update-reload').click();
    await expect.poll(sameDocument(page)).toBe(false);
    await expect(page.getByTestId('file-tree')).toBeVisible();
    await expect(prompt).toBeHidden();
    expect(
      await page.evaluate(async () => {
        const reg = await navigator.serviceWorker.getRegistration();
        return { waiting: !!reg?.waiting, controlled: !!navigator.serviceWorker.controller };
      }),
    ).toEqual({ waiting: false, controlled: true });
  } finally {
    server.close();
    rmSync(root, { recursive: true, force: true });
  }
});
