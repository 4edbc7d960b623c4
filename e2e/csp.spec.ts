import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect, type Page, test } from '@playwright/test';
import { ensureFixtures } from '../server/fixtures/index.ts';
import { spaNavigate } from './navigate.ts';
import { openTab } from './ui.ts';

const gitServer = process.env.GIT_SERVER_URL ?? 'http://127.0.0.1:4174';
const proxy = process.env.CORS_PROXY_URL ?? 'http://127.0.0.1:4175';

// The policy, spelled out here rather than imported, so a change to server/csp.ts must change this too.
const META_POLICY =
  "default-src 'self'; script-src 'self' 'wasm-unsafe-eval'; style-src 'self'; img-src 'self' blob: https:; " +
  "connect-src 'self' https: http://localhost:* http://127.0.0.1:*; worker-src 'self'; manifest-src 'self'; " +
  "object-src 'none'; base-uri 'none'; form-action 'self'";
const HEADER_POLICY =
  "default-src 'self'; script-src 'self' 'wasm-unsafe-eval'; style-src 'self'; img-src 'self' blob: https:; " +
  `connect-src 'self' https: ${gitServer} ${proxy} http://localhost:* http://127.0.0.1:*; worker-src 'self'; manifest-src 'self'; ` +
  "object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'";

interface Watch {
  /** What a script in repository content would set. */
  pwned(): Promise<unknown>;
  dialogs: string[];
  violations: string[];
}

/**
 * Records dialogs, CSP violations the page reports, and every blob URL made and revoked (with its type),
 * in every page of the context.
 */
async function watch(page: Page): Promise<Watch> {
  const dialogs: string[] = [];
  const violations: string[] = [];
  const onPage = (p: Page) => {
    p.on('dialog', (d) => {
      dialogs.push(d.message());
      void d.dismiss();
    });
    p.on('console', (m) => {
      if (/Content Security Policy/i.test(m.text())) violations.push(m.text());
    });
  };
  onPage(page);
  page.context().on('page', onPage);
  await page.addInitScript(() => {
    const w = window as unknown as { blobUrls: { url: string; type: string; revoked: boolean }[] };
    w.blobUrls = [];
    const create = URL.createObjectURL.bind(URL);
    const revoke = URL.revokeObjectURL.bind(URL);
    URL.createObjectURL = (obj: Blob | MediaSource) => {
      const url = create(obj);
      w.blobUrls.push({ url, type: obj instanceof Blob ? obj.type : 'media', revoked: false });
      return url;
    };
    URL.revokeObjectURL = (url: string) => {
      for (const b of w.blobUrls) if (b.url === url) b.revoked = true;
      revoke(url);
    };
  });
  return {
    dialogs,
    violations,
    pwned: () => page.evaluate(() => (window as unknown as { __pwned?: unknown }).__pwned),
  };
}

function blobUrls(page: Page) {
  return page.evaluate(
    () => (window as unknown as { blobUrls: { url: string; type: string; revoked: boolean }[] }).blobUrls,
  );
}

/** Waits until the preview image decoded: the SVG really was loaded, so its script had every chance. */
async function expectPreviewLoaded(page: Page, width: number): Promise<void> {
  const img = page.getByTestId('file-preview');
  await expect(img).toBeVisible();
  await expect.poll(() => img.evaluate((el: HTMLImageElement) => el.complete && el.naturalWidth)).toBe(width);
}

test('the app is served with the exact policy, as a header and as a meta element', async ({ page }) => {
  const res = await page.goto('/');
  expect(res?.headers()['content-security-policy']).toBe(HEADER_POLICY);
  expect(res?.headers()['x-content-type-options']).toBe('nosniff');
  const meta = await page
    .locator('meta[http-equiv="Content-Security-Policy"]')
    .getAttribute('content', { timeout: 5_000 });
  expect(meta).toBe(META_POLICY);
  // The built page carries the meta too (a static host that sends no header still gets the policy).
  const built = readFileSync(join(process.cwd(), 'dist/index.html'), 'utf8');
  expect(built).toContain(`content="${META_POLICY}"`);
  // A worker's policy comes from its own response, not the page's meta: the header must be on it too.
  const worker = readdirSync(join(process.cwd(), 'dist/assets')).find((f) => /^git\.worker-.*\.js$/.test(f));
  const workerRes = await page.request.get(`/assets/${worker}`);
  expect(workerRes.headers()['content-security-policy']).toBe(HEADER_POLICY);
});

test('an SVG that carries script is shown as an image and runs nothing, in UTF-8 and UTF-16', async ({
  page,
}) => {
  const w = await watch(page);
  await page.goto(`/?repo=${encodeURIComponent(`${gitServer}/previews.git`)}&path=pwned.svg`);
  await expectPreviewLoaded(page, 64);
  // While the image is on screen its URL is already dead: "open image in new tab" finds nothing.
  const shown = await page.getByTestId('file-preview').getAttribute('src');
  await expect
    .poll(async () => (await blobUrls(page)).find((b) => b.url === shown))
    .toEqual({ url: shown, type: 'image/svg+xml', revoked: true });
  // The UTF-8 SVG is text: its source is shown too, escaped.
  await expect(page.getByTestId('file-content')).toContainText('<script>top.__pwned');
  await page.screenshot({ path: join(process.cwd(), 'e2e/screenshots/svg-preview.png') });

  await spaNavigate(page, { path: 'pwned-utf16.svg' });
  await expectPreviewLoaded(page, 64);
  await expect(page.getByTestId('file-content')).toHaveCount(0);

  await spaNavigate(page, { path: 'page.html' });
  await expect(page.getByTestId('file-content')).toContainText('<script>top.__pwned');
  await expect(page.getByTestId('file-preview')).toHaveCount(0);

  expect(await w.pwned()).toBeUndefined();
  expect(w.dialogs).toEqual([]);
  // Every preview's blob URL was an image and is gone once the image loaded.
  const made = await blobUrls(page);
  expect(made.length).toBeGreaterThanOrEqual(2);
  for (const b of made) {
    expect(b.type).toMatch(/^image\//);
    expect(b.revoked, b.url).toBe(true);
  }
});

test('a download is octet-stream with the file name, and its blob URL is revoked', async ({ page }) => {
  const w = await watch(page);
  await page.goto(`/?repo=${encodeURIComponent(`${gitServer}/previews.git`)}&path=pwned.svg`);
  await expectPreviewLoaded(page, 64);
  const [download] = await Promise.all([
    page.waitForEvent('download'),
    page.getByTestId('file-download').click(),
  ]);
  expect(download.suggestedFilename()).toBe('pwned.svg');
  const bare = join((await ensureFixtures()).dir, 'previews.git');
  const expected = execFileSync('git', ['--git-dir', bare, 'cat-file', 'blob', 'HEAD:pwned.svg']);
  expect(readFileSync(await download.path())).toEqual(expected);
  await expect
    .poll(async () => (await blobUrls(page)).filter((b) => b.type === 'application/octet-stream'))
    .toEqual([expect.objectContaining({ revoked: true })]);
  expect(await w.pwned()).toBeUndefined();
  expect(w.dialogs).toEqual([]);
});

test('even an SVG opened as a document of the app origin runs no script: it inherits the policy', async ({
  page,
}) => {
  const w = await watch(page);
  await page.goto('/');
  const bare = join((await ensureFixtures()).dir, 'previews.git');
  const svg = execFileSync('git', ['--git-dir', bare, 'cat-file', 'blob', 'HEAD:pwned.svg'], {
    encoding: 'utf8',
  });
  // What "open image in new tab" would do if a preview's URL were still alive.
  const [popup] = await Promise.all([
    page.waitForEvent('popup'),
    page.evaluate((text) => {
      const url = URL.createObjectURL(new Blob([text], { type: 'image/svg+xml' }));
      window.open(url);
    }, svg),
  ]);
  await popup.waitForLoadState();
  expect(new URL(popup.url()).protocol).toBe('blob:');
  // The document is there (its rect drew) but neither handler ran.
  await expect(popup.locator('rect')).toHaveCount(1);
  expect(await popup.evaluate(() => (window as unknown as { __pwned?: unknown }).__pwned)).toBeUndefined();
  expect(await w.pwned()).toBeUndefined();
  expect(w.dialogs).toEqual([]);
});

test('clone, browse, Markdown, highlighting and history work under the policy with no violation', async ({
  page,
}) => {
  const w = await watch(page);
  await page.addInitScript(() => {
    const v: string[] = [];
    (window as unknown as { cspViolations: string[] }).cspViolations = v;
    document.addEventListener('securitypolicyviolation', (e) =>
      v.push(`${e.violatedDirective} ${e.blockedURI}`),
    );
  });
  await page.goto(`/?clone=${encodeURIComponent(`${gitServer}/features.git`)}`);
  await page.getByTestId('clone-submit').click();
  await expect(page.getByTestId('file-tree')).toBeVisible({ timeout: 90_000 });
  // README.md renders as Markdown (marked, DOMPurify); the other files are highlighted code.
  await page.getByTestId('file-tree').getByRole('treeitem', { name: 'File README.md' }).click();
  await expect(page.getByTestId('markdown')).toBeVisible();
  await spaNavigate(page, { path: 'src/new-name.js' });
  await spaNavigate(page, { path: 'scripts/build.sh' });
  await expect(
    page
      .locator('[data-testid="file-content"] .hljs-meta, [data-testid="file-content"] .hljs-built_in')
      .first(),
  ).toBeVisible();
  await openTab(page, 'history');
  await expect(page.getByTestId('commit-list').locator('li').first()).toBeVisible();
  expect(await page.evaluate(() => (window as unknown as { cspViolations: string[] }).cspViolations)).toEqual(
    [],
  );
  expect(w.violations).toEqual([]);
});
