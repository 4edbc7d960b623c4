import { expect, type Frame, type Locator, type Page, test } from '@playwright/test';
import { type PageServer, startEmbedHost } from './embedHost.ts';

// markdown.git's README (server/fixtures/markdown.sh) holds every way a README was found to escape the
// renderer's rewrite (issue 24). Each case is clicked or looked up where it shows: the app, a private
// repo's copy of it, and the widget in another site's page.
const gitServer = process.env.GIT_SERVER_URL ?? 'http://127.0.0.1:4174';
const appPort = Number(process.env.E2E_PORT ?? 4173);
const TRACKER = 'https://tracker.invalid/';
const PIXEL = 'img[alt="a tracking pixel"]';
const GIF = Buffer.from('R0lGODlhAQABAIAAAP///wAAACH5BAEAAAAALAAAAAABAAEAAAICRAEAOw==', 'base64');

let host: PageServer;
test.beforeAll(async () => {
  host = await startEmbedHost(appPort + 6);
});
test.afterAll(async () => {
  await host?.close();
});

/** Requests to the tracking host, as the network sees them (answered here: the host does not exist). */
async function countTracker(page: Page): Promise<string[]> {
  const seen: string[] = [];
  await page.context().route(`${TRACKER}**`, (route) => {
    seen.push(route.request().url());
    return route.fulfill({ status: 200, contentType: 'image/gif', body: GIF });
  });
  return seen;
}

/** Page errors (an exception nobody caught), and pages opened by a click (closed at once). */
function watch(page: Page): { errors: string[] } {
  const errors: string[] = [];
  page.on('pageerror', (e) => errors.push(e.message));
  page.context().on('page', (p) => void p.close());
  return { errors };
}

/** The route: the address without its hash. */
const route = (page: Page) => {
  const u = new URL(page.url());
  return u.pathname + u.search;
};

/** What the rewrite left of each case, read from the rendered README. */
async function rendered(body: Locator) {
  return body.evaluate((root) => {
    const attrs = (names: string[]) =>
      [...root.querySelectorAll('*')].flatMap((el) =>
        names.filter((n) => el.hasAttribute(n)).map((n) => `${el.localName}[${n}]`),
      );
    return {
      ids: [...root.querySelectorAll('[id]')].map((el) => el.id),
      names: [...root.querySelectorAll('[name]')].map((el) => el.getAttribute('name') ?? ''),
      authorData: attrs(['data-repo-src']).concat(
        [...root.querySelectorAll('a[data-repo-link]')]
          .filter((a) => !(a as HTMLAnchorElement).href.startsWith(location.origin))
          .map(() => 'a[data-repo-link] to another site'),
      ),
      areas: root.querySelectorAll('area').length,
      svgLinks: [...root.querySelectorAll('svg *')].filter((el) => el.localName === 'a').length,
      popovers: attrs(['popover', 'popovertarget', 'popovertargetaction', 'command', 'commandfor']),
      labelFor: root.querySelector('label')?.getAttribute('for'),
      fill: root.querySelector('svg rect[fill^="url"]')?.getAttribute('fill'),
    };
  });
}

/** Clicks each hostile case in `where`, checking after each that `unchanged()` holds and nothing popped up. */
async function clickEveryCase(where: Page | Frame, unchanged: () => Promise<void>) {
  // By the end of each id, so that a renderer that left ids as written is tested too.
  for (const selector of [
    '[id$="data-repo-link"]',
    '[id$="data-repo-link-relative"]',
    '[id$="mapped"]',
    'svg rect >> nth=0',
    'svg rect >> nth=1',
    '[id$="popover-button"]',
    '[id$="command-button"]',
    '[id$="label"]',
  ]) {
    await where.locator(selector).click();
    await unchanged();
    expect(
      await where.evaluate(() => document.querySelector(':popover-open')?.id ?? null),
      selector,
    ).toBeNull();
  }
}

function checkRewrite(r: Awaited<ReturnType<typeof rendered>>) {
  expect(r.ids.length).toBeGreaterThan(10);
  expect(r.ids.filter((id) => !id.startsWith('user-content-'))).toEqual([]);
  expect(r.names.filter((n) => !n.startsWith('user-content-'))).toEqual([]);
  expect(r.authorData).toEqual([]);
  expect([r.areas, r.svgLinks]).toEqual([0, 0]);
  expect(r.popovers).toEqual([]);
  // What named the README's own ids follows their prefix.
  expect(r.labelFor).toBe('user-content-token-title');
  expect(r.fill).toBe('url(#user-content-fill)');
}

test('the app: no case of the README leaves the rewrite, and a public repo loads its images as before', async ({
  page,
}) => {
  const tracker = await countTracker(page);
  const { errors } = watch(page);
  await page.goto(`/?repo=${encodeURIComponent(`${gitServer}/markdown.git`)}`);
  const body = page.getByTestId('markdown');
  await expect(body.locator(PIXEL)).toBeVisible({ timeout: 90_000 });
  checkRewrite(await rendered(body));
  // No id of the README's is also one of the page's.
  const ids = await page.evaluate(() => [...document.querySelectorAll('[id]')].map((el) => el.id));
  expect(ids.filter((id, i) => ids.indexOf(id) !== i)).toEqual([]);
  await expect(page.getByTestId('external-held')).toHaveCount(0);
  await expect.poll(() => new Set(tracker).size).toBe(4);

  const before = route(page);
  await clickEveryCase(page, async () => {
    await page.waitForTimeout(200);
    expect(route(page)).toBe(before);
  });

  // An in-page link still lands on its heading, whose id has the prefix; the route stays.
  await body.getByRole('link', { name: 'a link to the second section' }).click();
  expect(new URL(page.url()).hash).toBe('#user-content-second-section');
  expect(route(page)).toBe(before);
  // A hash that does not decode does nothing, here or in another file's link, nor in the address.
  await body.getByRole('link', { name: 'a broken hash', exact: true }).click();
  await body.getByRole('link', { name: 'another file, with a broken hash' }).click();
  await expect(page.getByTestId('markdown').locator('.md-h1#user-content-other')).toBeVisible();
  expect(new URL(page.url()).searchParams.get('path')).toBe('docs/other.md');
  await page.getByTestId('markdown').getByRole('link', { name: 'back' }).click();
  await expect(body.locator(PIXEL)).toBeVisible();
  await page.goto(`${page.url().replace(/#.*/, '')}#%`);
  await expect(body.locator(PIXEL)).toBeVisible({ timeout: 30_000 });
  await page.waitForTimeout(500);
  expect(errors).toEqual([]);
});

test('a repository that needed a token: no request to another site until "Load external images"', async ({
  page,
}) => {
  const tracker = await countTracker(page);
  watch(page);
  await page.goto('/');
  await page.getByTestId('clone-url').fill(`${gitServer}/markdown-private.git`);
  await page.getByText('CORS proxy and private repositories').click();
  await page.getByLabel('User name').fill('alice');
  await page.getByLabel(/^Token/).fill('secret');
  await page.getByTestId('clone-submit').click();
  const body = page.getByTestId('markdown');
  await expect(body.locator(PIXEL)).toBeAttached({ timeout: 90_000 });
  checkRewrite(await rendered(body));
  await expect(page.getByTestId('external-held')).toBeVisible();
  await page.waitForTimeout(1500);
  expect(tracker).toEqual([]);

  await page.getByTestId('load-external').click();
  await expect.poll(() => new Set(tracker).size).toBe(4);
  await expect(page.getByTestId('external-held')).toHaveCount(0);
});

test('the widget: no case navigates its frame, and none opens a popover', async ({ page, baseURL }) => {
  await countTracker(page);
  const { errors } = watch(page);
  const src = new URL('/embed.html', baseURL);
  src.searchParams.set('repo', `${gitServer}/markdown.git`);
  src.searchParams.set('path', 'README.md');
  src.searchParams.set('allowedOrigins', host.origin);
  await page.goto(`${host.origin}/host.html?src=${encodeURIComponent(src.href)}`);
  await expect.poll(() => page.frames().some((f) => f.url().includes('/embed.html'))).toBe(true);
  const frame = page.frames().find((f) => f.url().includes('/embed.html'))!;
  const body = frame.getByTestId('embed-markdown');
  await expect(body.locator(PIXEL)).toBeVisible({ timeout: 60_000 });
  checkRewrite(await rendered(body));

  const navigations: string[] = [];
  page.on('framenavigated', (f) => {
    if (f !== page.mainFrame()) navigations.push(f.url());
  });
  const shown = frame.url();
  await clickEveryCase(frame, async () => {
    await page.waitForTimeout(200);
    expect(frame.url()).toBe(shown);
    expect(navigations).toEqual([]);
  });
  // A link to an anchor of the file stays in the frame, as a scroll, and does not load a page.
  await body.getByRole('link', { name: 'a link to the second section' }).click();
  await body.getByRole('link', { name: 'a broken hash', exact: true }).click();
  expect(frame.url().replace(/#.*/, '')).toBe(shown);
  expect(errors).toEqual([]);
});
