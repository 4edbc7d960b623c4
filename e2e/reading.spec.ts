// The code-host views on reading.git, in Chromium, with the git CLI as the oracle.
import { execFileSync } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { type BrowserContext, expect, type Page, test } from '@playwright/test';
import { ensureFixtures } from '../server/fixtures/index.ts';
import { spaNavigate } from './navigate.ts';
import { mislabelledFiles, watchShownFiles } from './shownFiles.ts';
import { repoIdOf } from './ui.ts';

const gitServer = process.env.GIT_SERVER_URL ?? 'http://127.0.0.1:4174';
const shots = join(process.cwd(), 'e2e/screenshots');
mkdirSync(shots, { recursive: true });

let bare: string;
let context: BrowserContext;
let page: Page;
let repoId: string;

function gitIn(args: string[]): string {
  return execFileSync('git', args, { cwd: bare, encoding: 'utf8' });
}
const lines = (text: string) => text.split('\n').filter(Boolean);

async function open(query: Record<string, string>, hash = ''): Promise<void> {
  const q = new URLSearchParams({ repo: repoId, ...query });
  await page.goto(`/?${q}${hash}`);
}

async function shoot(name: string): Promise<void> {
  for (const scheme of ['light', 'dark'] as const) {
    await page.emulateMedia({ colorScheme: scheme });
    await page.screenshot({ path: join(shots, `reading-${name}-${scheme}.png`), fullPage: true });
  }
  await page.emulateMedia({ colorScheme: 'light' });
}

test.describe.configure({ mode: 'serial' });

test.beforeAll(async ({ browser }) => {
  bare = join((await ensureFixtures()).dir, 'reading.git');
  context = await browser.newContext();
  page = await context.newPage();
  page.on('dialog', (d) => {
    throw new Error(`A dialog opened: ${d.message()}`);
  });
  await page.goto('/');
  await page.getByTestId('clone-url').fill(`${gitServer}/reading.git`);
  await page.getByTestId('clone-submit').click();
  await expect(page.getByTestId('file-tree')).toBeVisible({ timeout: 90_000 });
  // File history, blame and compare read the whole history, which arrives behind the first view.
  await expect(page.getByTestId('history-fill')).toHaveAttribute('data-status', 'complete', {
    timeout: 60_000,
  });
  repoId = await repoIdOf(page);
});

test.afterAll(async () => {
  await context.close();
});

test('the repo home shows the tree, then the README rendered with GitHub’s flavour', async () => {
  await open({});
  const md = page.getByTestId('markdown');
  await expect(md.locator('.md-h1')).toHaveText(/Reading fixture/);
  await expect(md.locator('table td').first()).toHaveText('Tables');
  await expect(md.locator('input[type="checkbox"]')).toHaveCount(2);
  await expect(md.locator('input[type="checkbox"]').first()).toBeChecked();
  await expect(md.locator('.md-h2#user-content-second-heading')).toBeVisible();
  // Fenced code is highlighted.
  await expect(md.locator('pre code.hljs .hljs-keyword').first()).toHaveText('const');
  // The relative image is read from the repo and shown.
  const img = md.locator('img[alt="The logo"]');
  await expect(img).toHaveAttribute('src', /^blob:/);
  await expect.poll(() => img.evaluate((el: HTMLImageElement) => el.naturalWidth)).toBe(1);
  // Each entry gets the last commit that changed it, after the listing.
  const docs = gitIn(['log', '-1', '--format=%s', 'main', '--', 'docs']).trim();
  await expect(page.getByTestId('file-tree').locator('li[data-type="tree"]').first()).toContainText(docs);
  await shoot('home');
});

test('relative links open inside the repo at the same commit, headings included', async () => {
  await open({});
  await page.getByTestId('markdown').getByRole('link', { name: 'its install part' }).click();
  await expect(page).toHaveURL(/path=docs%2Fguide\.md/);
  await expect(page).toHaveURL(/#user-content-install$/);
  await expect(page.getByTestId('markdown').locator('.md-h2')).toHaveText(/Install/);
  // A Markdown file opened on its own shows rendered, with a toggle to its source.
  await page.getByRole('button', { name: 'Code' }).click();
  expect(await page.getByTestId('file-content').evaluate((el) => el.textContent)).toBe(
    gitIn(['show', 'main:docs/guide.md']),
  );
  await page.getByRole('button', { name: 'Preview' }).click();
  await expect(page.getByTestId('markdown')).toBeVisible();
});

test('going from one file to another never shows the first one’s content under the second’s name', async () => {
  await open({ path: 'src/blame.txt' });
  await expect(page.getByTestId('file-content')).toBeVisible();
  await watchShownFiles(page);
  const oids = new Map(
    lines(gitIn(['ls-tree', '-r', 'main'])).map((l) => [l.split('\t')[1], l.split(' ')[2].split('\t')[0]]),
  );
  // In-app navigation, as a link in the tree does it: the view stays mounted and gets the new path.
  for (const path of ['src/main-only.txt', 'docs/new-name.txt', 'src/blame.txt']) {
    await spaNavigate(page, { path });
    await expect(page.getByTestId('file-oid')).toHaveText(oids.get(path)!.slice(0, 10));
  }
  expect(await mislabelledFiles(page, (p) => oids.get(p))).toEqual([]);
});

test('a README carrying script, an onerror handler and javascript: links runs none of them', async () => {
  await open({ path: 'hostile' });
  const md = page.getByTestId('markdown');
  await expect(md).toContainText('Safe text after the attempts.');
  await expect(md.locator('script, iframe, [onerror]')).toHaveCount(0);
  for (const a of await md.locator('a').all()) {
    expect((await a.getAttribute('href')) ?? '').not.toMatch(/^\s*javascript:/i);
  }
  // Click every link that was a javascript: one: nothing runs.
  for (const name of ['click me', 'raw link']) {
    const link = md.getByText(name);
    if (await link.count()) await link.click({ noWaitAfter: true }).catch(() => undefined);
  }
  await page.waitForTimeout(300);
  expect(
    await page.evaluate(() => (window as unknown as { __readmeScriptRan?: boolean }).__readmeScriptRan),
  ).toBe(undefined);
});

test('go to file finds a deep path by a fuzzy query, from the keyboard', async () => {
  await open({});
  await expect(page.getByTestId('file-tree')).toBeVisible();
  await page.keyboard.press('t');
  const input = page.getByTestId('goto-input');
  await expect(input).toBeFocused();
  await input.fill('dpwidg');
  const first = page.getByTestId('goto-results').getByRole('option').first();
  await expect(first).toHaveText('src/app/components/deeply/nested/widgets/DeepWidget.tsx');
  await shoot('goto');
  await page.keyboard.press('Enter');
  await expect(page).toHaveURL(/path=src%2Fapp%2Fcomponents%2Fdeeply%2Fnested%2Fwidgets%2FDeepWidget\.tsx/);
  await expect(page.getByTestId('file-content')).toContainText('export const Deep');
  // Ctrl+P opens it too.
  await page.keyboard.press('Control+p');
  await expect(page.getByTestId('goto-input')).toBeFocused();
  await page.keyboard.press('Escape');
  await expect(page.getByTestId('goto-input')).toHaveCount(0);
});

test('file history equals git log --follow on a renamed file', async () => {
  await open({ path: 'docs/new-name.txt', view: 'history' });
  const expected = lines(gitIn(['log', '--follow', '--format=%H', 'main', '--', 'docs/new-name.txt']));
  await expect(page.getByTestId('file-history').locator('li')).toHaveCount(expected.length);
  const shown = await page
    .getByTestId('file-history')
    .locator('li')
    .evaluateAll((els) => els.map((el) => el.getAttribute('data-oid')));
  expect(shown).toEqual(expected);
  await expect(page.getByTestId('file-history')).toContainText('renamed from notes/old-name.txt');
  await shoot('history');
});

test('blame equals git blame --porcelain line by line, in at most one blob request per ten versions', async () => {
  const path = 'src/blame.txt';
  const versions = lines(gitIn(['log', '--format=%H', 'main', '--', path])).length;
  expect(versions).toBeGreaterThanOrEqual(20);
  // A fresh profile: none of the old versions is stored.
  const fresh = await page.context().browser()!.newContext();
  const p = await fresh.newPage();
  try {
    let blobRequests = 0;
    p.on('request', (r) => {
      if (r.method() === 'POST' && r.url().endsWith('/reading.git/git-upload-pack')) blobRequests++;
    });
    await p.goto(`/?repo=${encodeURIComponent(`${gitServer}/reading.git`)}`);
    await expect(p.getByTestId('file-tree')).toBeVisible({ timeout: 90_000 });
    // Blame walks the whole history, which arrives behind the first view (its fetches are no blob requests).
    await expect(p.getByTestId('history-fill')).toHaveAttribute('data-status', 'complete', {
      timeout: 60_000,
    });
    const before = blobRequests;
    const id = await repoIdOf(p);
    // Blame's second blob request is held back: the lines attributed before it are on screen meanwhile.
    let posts = 0;
    await p.route(/\/reading\.git\/git-upload-pack$/, async (route) => {
      if (route.request().method() === 'POST' && ++posts === 2) await new Promise((r) => setTimeout(r, 2000));
      await route.continue();
    });
    await p.goto(`/?${new URLSearchParams({ repo: id, path, view: 'blame' })}`);
    const partial = p.getByTestId('blame-partial');
    await expect(partial.locator('tr:not([data-commit=""])').first()).toBeVisible();
    await expect(partial.locator('tr[data-commit=""]').first()).toBeVisible();
    const rows = p.getByTestId('blame').locator('tr');
    const porcelain = gitIn(['blame', '--porcelain', 'main', '--', path]);
    const expected = [...porcelain.matchAll(/^([0-9a-f]{40}) (\d+) (\d+)/gm)].map((m) => `${m[1]} ${m[2]}`);
    await expect(rows).toHaveCount(expected.length);
    const shown = await rows.evaluateAll((els) =>
      els.map((el) => `${el.getAttribute('data-commit')} ${el.getAttribute('data-orig-line')}`),
    );
    expect(shown).toEqual(expected);
    const requests = blobRequests - before;
    console.log(`blame of ${path}: ${versions} versions, ${requests} blob requests`);
    expect(requests).toBeLessThanOrEqual(Math.ceil(versions / 10));
    await expect(p.getByTestId('blame-summary')).toContainText(`in ${requests} requests`);
  } finally {
    await fresh.close();
  }
  await open({ path, view: 'blame' });
  await expect(page.getByTestId('blame')).toBeVisible();
  await shoot('blame');
});

test('compare lists what git log a..b and git diff --name-status a...b list', async () => {
  await open({ compare: 'main...feature' });
  const commits = lines(gitIn(['log', '--format=%H', 'main..feature']));
  await expect(page.getByTestId('compare-commits').locator('li')).toHaveCount(commits.length);
  expect(
    await page
      .getByTestId('compare-commits')
      .locator('li')
      .evaluateAll((els) => els.map((el) => el.getAttribute('data-oid'))),
  ).toEqual(commits);
  const files = lines(gitIn(['diff', '--no-renames', '--name-status', 'main...feature']));
  const shown = await page
    .getByTestId('compare-files')
    .locator('li.file-diff')
    .evaluateAll((els) =>
      els.map((el) => `${el.getAttribute('data-status')}\t${el.getAttribute('data-path')}`),
    );
  expect(shown).toEqual(files);
  // Every file's diff is inline, fetched as it comes on screen.
  await expect(
    page.getByTestId('compare-files').locator('li.file-diff[data-path="README.md"]').getByTestId('diff'),
  ).toContainText('on the feature branch');
  await shoot('compare');
});

test('y makes the address a permalink; ? lists the shortcuts', async () => {
  await open({ path: 'README.md' });
  await expect(page.getByTestId('markdown')).toBeVisible();
  await page.keyboard.press('y');
  const head = gitIn(['rev-parse', 'main']).trim();
  await expect(page).toHaveURL(new RegExp(`ref=${head}`));
  await page.keyboard.press('?');
  await expect(page.getByRole('dialog', { name: 'Keyboard shortcuts' })).toBeVisible();
  await page.keyboard.press('Escape');
  await expect(page.getByRole('dialog', { name: 'Keyboard shortcuts' })).toHaveCount(0);
});

test('every view fits a 360 px screen', async () => {
  await page.setViewportSize({ width: 360, height: 740 });
  try {
    const views: [string, Record<string, string>][] = [
      ['home', {}],
      ['file', { path: 'src/blame.txt' }],
      ['history', { path: 'docs/new-name.txt', view: 'history' }],
      ['blame', { path: 'src/blame.txt', view: 'blame' }],
      ['compare', { compare: 'main...feature' }],
    ];
    for (const [name, query] of views) {
      await open(query);
      await page.waitForLoadState('networkidle');
      await expect(page.locator('.repo-view')).toBeVisible();
      await page.waitForTimeout(200);
      const widest = await page.evaluate(() => document.documentElement.scrollWidth);
      expect(widest, `${name} at 360 px`).toBeLessThanOrEqual(360);
      await shoot(`phone-${name}`);
    }
  } finally {
    await page.setViewportSize({ width: 1280, height: 720 });
  }
});
