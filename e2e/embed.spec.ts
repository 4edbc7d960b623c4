import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { expect, type Frame, type Page, test } from '@playwright/test';
import { ensureFixtures } from '../server/fixtures/index.ts';
import { startGitServer } from '../server/gitServer.ts';
import { type PageServer, startEmbedHost } from './embedHost.ts';

const gitServer = process.env.GIT_SERVER_URL ?? 'http://127.0.0.1:4174';
const appPort = Number(process.env.E2E_PORT ?? 4173);
const repo = `${gitServer}/features.git`;

let bare: string;
let host: PageServer;
let third: PageServer;

test.beforeAll(async () => {
  bare = join((await ensureFixtures()).dir, 'features.git');
  // Two more origins: the embedding site, and a third one it also frames, which it does not trust.
  host = await startEmbedHost(appPort + 4);
  third = await startEmbedHost(appPort + 5);
});

test.afterAll(async () => {
  await host?.close();
  await third?.close();
});

function gitShow(spec: string): string {
  return execFileSync('git', ['show', spec], { cwd: bare, encoding: 'utf8' });
}

function widgetUrl(baseURL: string, params: Record<string, string>): string {
  const url = new URL('/embed.html', baseURL);
  for (const [k, v] of Object.entries(params)) url.searchParams.set(k, v);
  return url.href;
}

interface Received {
  type: string;
  [key: string]: unknown;
}

async function received(page: Page): Promise<Received[]> {
  return page.evaluate(() => (window as unknown as { received: Received[] }).received);
}

async function widgetFrame(page: Page): Promise<Frame> {
  await expect.poll(() => page.frames().some((f) => f.url().includes('/embed.html'))).toBe(true);
  return page.frames().find((f) => f.url().includes('/embed.html'))!;
}

async function shown(frame: Frame): Promise<string> {
  return frame.getByTestId('embed-content').evaluate((el) => el.textContent ?? '');
}

test("the widget's JS loaded up front is under 60 KB gzipped (the highlighter and Markdown come later)", () => {
  const dist = join(process.cwd(), 'dist');
  const html = readFileSync(join(dist, 'embed.html'), 'utf8');
  const upFront = [...html.matchAll(/(?:src|href)="\/assets\/([^"]+\.js)"/g)].map((m) => m[1]);
  expect(upFront.length).toBeGreaterThanOrEqual(1);
  const gz = upFront.reduce((sum, f) => sum + gzipSync(readFileSync(join(dist, 'assets', f))).length, 0);
  expect(gz).toBeLessThanOrEqual(60 * 1024);
  // What it loads up front holds no git code: that is in its worker.
  for (const f of upFront)
    expect(readFileSync(join(dist, 'assets', f), 'utf8')).not.toContain('git-upload-pack');
});

test('a page on another origin embeds one file: range, messages, navigate, and a third origin ignored', async ({
  page,
  baseURL,
}) => {
  const head = execFileSync('git', ['rev-parse', 'main'], { cwd: bare, encoding: 'utf8' }).trim();
  const path = 'notes/evolving.txt';
  const src = widgetUrl(baseURL!, { repo, ref: 'main', path, lines: '10-20', allowedOrigins: host.origin });
  await page.goto(
    `${host.origin}/host.html?src=${encodeURIComponent(src)}&third=${encodeURIComponent(`${third.origin}/plain.html`)}`,
  );
  const frame = await widgetFrame(page);

  // Only lines 10 to 20, numbered as in the file.
  const lines = gitShow(`main:${path}`).split('\n');
  await expect.poll(() => shown(frame)).toBe(`${lines.slice(9, 20).join('\n')}\n`);
  await expect(frame.locator('.ln').first()).toHaveAttribute('data-line', '10');
  await expect(frame.getByTestId('embed-commit')).toHaveText(head.slice(0, 7));
  // The whole file, with the range marked.
  await frame.getByTestId('embed-toggle-range').click();
  await expect.poll(() => shown(frame)).toBe(gitShow(`main:${path}`));
  await expect(frame.locator('.line.marked')).toHaveCount(11);

  await expect.poll(async () => (await received(page)).map((m) => m.type)).toContain('loaded');
  const messages = await received(page);
  expect(messages[0].type).toBe('ready');
  expect(messages.find((m) => m.type === 'loaded')).toMatchObject({ repo, ref: 'main', commit: head, path });
  const resize = messages.filter((m) => m.type === 'resize');
  expect(resize.length).toBeGreaterThan(0);
  expect(resize.at(-1)!.height as number).toBeGreaterThan(0);
  // The host sized the iframe to the reported height.
  const frameHeight = await page.locator('#widget').evaluate((el) => el.getBoundingClientRect().height);
  expect(frameHeight).toBe(resize.at(-1)!.height);

  // The third origin, framed by the same page, tries to move the widget: nothing happens.
  const thirdFrame = page.frames().find((f) => f.url().startsWith(third.origin))!;
  const before = (await received(page)).length;
  await thirdFrame.evaluate(() => {
    window.parent.frames[0].postMessage({ type: 'navigate', path: 'scripts/build.sh' }, '*');
  });
  // The host's own message after it is handled after it: once that one shows, the third one was dropped.
  await page.evaluate(() =>
    (window as unknown as { sendToWidget(m: unknown): void }).sendToWidget({
      type: 'navigate',
      lines: '1-2',
    }),
  );
  await expect.poll(() => shown(frame)).toBe(`${lines.slice(0, 2).join('\n')}\n`);
  expect(
    (await received(page)).slice(before).filter((m) => m.type === 'loaded'),
    'no file was loaded for the third origin',
  ).toEqual([]);
  await expect(frame.getByTestId('embed-name')).toHaveText('evolving.txt');

  // navigate from the host shows another file.
  await page.evaluate(() =>
    (window as unknown as { sendToWidget(m: unknown): void }).sendToWidget({
      type: 'navigate',
      path: 'scripts/build.sh',
    }),
  );
  await expect(frame.getByTestId('embed-name')).toHaveText('build.sh');
  await expect.poll(() => shown(frame)).toBe(gitShow('main:scripts/build.sh'));
  await expect
    .poll(async () => (await received(page)).filter((m) => m.type === 'loaded').at(-1)?.path)
    .toBe('scripts/build.sh');
});

test('a folder is listed, Markdown rendered, a missing file reported to the host', async ({
  page,
  baseURL,
}) => {
  const src = widgetUrl(baseURL!, { repo, ref: 'v1.0', path: 'notes', allowedOrigins: host.origin });
  await page.goto(`${host.origin}/host.html?src=${encodeURIComponent(src)}`);
  const frame = await widgetFrame(page);
  const names = execFileSync('git', ['ls-tree', '--name-only', 'v1.0:notes'], { cwd: bare, encoding: 'utf8' })
    .trim()
    .split('\n');
  await expect
    .poll(() =>
      frame
        .locator('[data-testid="embed-listing"] button[data-name]')
        .evaluateAll((els) => els.map((e) => e.getAttribute('data-name'))),
    )
    .toEqual(names);

  await page.evaluate(() =>
    (window as unknown as { sendToWidget(m: unknown): void }).sendToWidget({
      type: 'navigate',
      ref: 'main',
      path: 'README.md',
    }),
  );
  const article = frame.getByTestId('embed-markdown');
  await expect(article).toBeVisible();
  const firstHeading = gitShow('main:README.md')
    .split('\n')
    .find((l) => l.startsWith('#'))!;
  // The renderer puts a "#" anchor before each heading's text.
  await expect(article.locator('h1, h2, h3').first()).toHaveText(`#${firstHeading.replace(/^#+\s*/, '')}`);
  await expect(article.locator('script')).toHaveCount(0);

  await page.evaluate(() =>
    (window as unknown as { sendToWidget(m: unknown): void }).sendToWidget({
      type: 'navigate',
      path: 'no/such/file',
    }),
  );
  await expect(frame.getByTestId('embed-error')).toContainText('PATH_NOT_FOUND');
  await expect
    .poll(async () => (await received(page)).filter((m) => m.type === 'error').at(-1))
    .toMatchObject({ code: 'PATH_NOT_FOUND' });
});

test("the app's Embed button gives a permalink snippet that shows the selected lines", async ({ page }) => {
  const head = execFileSync('git', ['rev-parse', 'main'], { cwd: bare, encoding: 'utf8' }).trim();
  const path = 'notes/evolving.txt';
  await page.goto(`/?repo=${encodeURIComponent(repo)}&ref=main&path=${encodeURIComponent(path)}`);
  const content = page.getByTestId('file-content');
  await expect(content).toBeVisible({ timeout: 90_000 });
  await page.locator('#L10 .ln').click();
  await page.locator('#L12 .ln').click({ modifiers: ['Shift'] });
  await page.getByTestId('file-embed').click();
  const snippet = await page.getByTestId('embed-snippet').inputValue();
  const src = /src="([^"]+)"/.exec(snippet)![1].replace(/&amp;/g, '&');
  const params = new URL(src).searchParams;
  expect(new URL(src).pathname).toBe('/embed.html');
  expect(Object.fromEntries(params)).toEqual({ repo, ref: head, path, lines: '10-12' });

  // The snippet, pasted as it is into another site, shows those lines of that commit, in a frame as tall
  // as what it shows (its script follows the widget's resize messages), in either colour scheme, with
  // nothing of the widget's page painted around its box.
  for (const colorScheme of ['light', 'dark'] as const) {
    await page.emulateMedia({ colorScheme });
    await page.goto(`${host.origin}/snippet.html?html=${encodeURIComponent(snippet)}`);
    const frame = await widgetFrame(page);
    const lines = gitShow(`${head}:${path}`).split('\n');
    await expect.poll(() => shown(frame)).toBe(`${lines.slice(9, 12).join('\n')}\n`);
    const widgetHeight = await frame
      .getByTestId('embed-root')
      .evaluate((el) => el.getBoundingClientRect().height);
    await expect
      .poll(() => page.locator('iframe[id^="blobless-"]').evaluate((el) => el.getBoundingClientRect().height))
      .toBe(Math.ceil(widgetHeight));
    expect(widgetHeight).toBeLessThan(150);
    expect(await frame.evaluate(() => getComputedStyle(document.documentElement).backgroundColor)).toBe(
      'rgba(0, 0, 0, 0)',
    );
    // The frame's page is in the host's scheme (so the browser paints no opaque backdrop), the widget's box in the reader's.
    expect(await frame.evaluate(() => getComputedStyle(document.documentElement).colorScheme)).toBe('normal');
    expect(await frame.getByTestId('embed-root').evaluate((el) => getComputedStyle(el).colorScheme)).toBe(
      colorScheme,
    );
  }
  await page.emulateMedia({ colorScheme: 'light' });
});

test('screenshots of the widget in light and dark', async ({ page, baseURL }) => {
  test.skip(!process.env.BLOBLESS_SCREENSHOTS, 'set BLOBLESS_SCREENSHOTS=1 to refresh docs/screenshots');
  // Blobless's own code makes a better picture than the fixtures: a bare copy of this checkout, served.
  const scratch = mkdtempSync(join(tmpdir(), 'blobless-shots-'));
  const self = join(scratch, 'blobless.git');
  execFileSync('git', ['clone', '-q', '--bare', process.cwd(), self]);
  execFileSync('git', ['-C', self, 'config', 'uploadpack.allowFilter', 'true']);
  const server = await startGitServer({ root: scratch });
  try {
    const dir = join(process.cwd(), 'docs/screenshots');
    mkdirSync(dir, { recursive: true });
    await page.setViewportSize({ width: 760, height: 520 });
    for (const theme of ['light', 'dark']) {
      const src = widgetUrl(baseURL!, {
        repo: `${server.url}/blobless.git`,
        ref: 'main',
        path: 'src/highlight.ts',
        lines: '66-87',
        theme,
      });
      await page.goto(src);
      await expect(page.locator('.hljs-keyword').first()).toBeVisible();
      await page.getByTestId('embed-root').screenshot({ path: join(dir, `widget-${theme}.png`) });
    }
  } finally {
    await server.close();
    rmSync(scratch, { recursive: true, force: true });
  }
});
