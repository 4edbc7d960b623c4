import { execFileSync } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { expect, type Page, test } from '@playwright/test';
import { ensureFixtures } from '../server/fixtures/index.ts';
import { spaNavigate } from './navigate.ts';
import { openTab, switchRef } from './ui.ts';

const gitServer = process.env.GIT_SERVER_URL ?? 'http://127.0.0.1:4174';
const shots = join(process.cwd(), 'e2e/screenshots');
mkdirSync(shots, { recursive: true });

let bare: string;
test.beforeAll(async () => {
  bare = join((await ensureFixtures()).dir, 'features.git');
});

function gitIn(args: string[]): string {
  return execFileSync('git', args, { cwd: bare, encoding: 'utf8' });
}

/** What a person sees in the viewer is the text of the file: git show's bytes as text. */
async function shownText(page: Page): Promise<string> {
  return page.getByTestId('file-content').evaluate((el) => el.textContent ?? '');
}

/** The source text of the open file, switching a rendered Markdown view to its code first; '' until shown. */
async function sourceShown(page: Page): Promise<string> {
  const content = page.getByTestId('file-content');
  const code = page.getByRole('button', { name: 'Code', exact: true });
  if ((await content.count()) === 0 && (await code.count()) > 0) await code.click();
  return (await content.count()) > 0 ? shownText(page) : '';
}

async function cloneThroughForm(page: Page, repo: string): Promise<void> {
  await page.goto('/');
  await page.getByTestId('clone-url').fill(`${gitServer}/${repo}`);
  await page.getByTestId('clone-submit').click();
  await expect(page.getByTestId('file-tree')).toBeVisible({ timeout: 90_000 });
}

test('clone, read a file, switch branch, open a commit diff', async ({ page }) => {
  const phases = new Set<string>();
  await page.exposeFunction('notePhase', (p: string) => phases.add(p));
  await page.addInitScript(() => {
    new MutationObserver(() => {
      const el = document.querySelector('[data-testid="progress"]');
      const phase = el?.getAttribute('data-phase');
      if (phase) (window as unknown as { notePhase(p: string): void }).notePhase(phase);
    }).observe(document, { subtree: true, childList: true, attributes: true });
  });
  await cloneThroughForm(page, 'features.git');
  // The repository opened at its first view: no checkout ran before it.
  expect([...phases]).toContain('receiving');
  expect([...phases]).not.toContain('fetching-blobs');
  const fill = page.getByTestId('history-fill');
  await expect(fill).toHaveAttribute('data-status', 'complete', { timeout: 60_000 });
  await expect(fill).toContainText(
    `History complete: ${gitIn(['rev-list', '--count', '--all']).trim()} commits`,
  );
  // The working tree is checked out when first needed: opening it.
  await page.getByTestId('open-working-tree').click();
  await expect(page.getByTestId('working-tree')).toContainText('No changes in the working tree.', {
    timeout: 60_000,
  });
  await page.getByTestId('tab-code').click();
  // A file's content is git show's.
  await page.getByTestId('file-tree').getByRole('treeitem', { name: 'File README.md' }).click();
  // Markdown shows rendered first; its source is one toggle away.
  await page.getByRole('button', { name: 'Code', exact: true }).click();
  await expect(page.getByTestId('file-content')).toBeVisible();
  expect(await shownText(page)).toBe(gitIn(['show', 'main:README.md']));
  // After the checkout every file content of main is here, and the status line says so.
  const blobs = new Set(
    gitIn(['ls-tree', '-r', 'main'])
      .trim()
      .split('\n')
      .filter((l) => l.split(' ')[1] === 'blob')
      .map((l) => l.split(/\s+/)[2]),
  ).size;
  await expect(page.getByTestId('status-bar')).toContainText(
    `${blobs} of ${blobs} file contents of main stored`,
  );

  // Switching to feature/x with a changed file open shows its new content (the viewer must reload it).
  const branch = 'feature/x';
  const changed = gitIn(['diff', '--name-only', '--diff-filter=M', 'main', branch])
    .trim()
    .split('\n')
    .find((p) => p && !gitIn(['show', `${branch}:${p}`]).includes('\0'));
  expect(changed, `a text file that differs between main and ${branch}`).toBeTruthy();
  const before = gitIn(['show', `main:${changed}`]);
  const after = gitIn(['show', `${branch}:${changed}`]);
  expect(after).not.toBe(before);
  await spaNavigate(page, { path: changed! });
  await expect.poll(() => sourceShown(page)).toBe(before);
  await switchRef(page, branch);
  await expect(page).toHaveURL(/ref=feature%2Fx/);
  await expect.poll(() => sourceShown(page)).toBe(after);

  // A commit's diff shows its changed lines.
  const commit = gitIn(['log', '-1', '--format=%H', 'main', '--', 'notes/evolving.txt']).trim();
  const patch = gitIn(['show', '--format=', '--no-renames', commit, '--', 'notes/evolving.txt']);
  const added = patch.split('\n').filter((l) => l.startsWith('+') && !l.startsWith('+++'));
  const url = new URL(page.url());
  url.searchParams.set('commit', commit);
  await page.goto(url.toString());
  // Every file's diff is shown inline, with its line numbers.
  const diff = page.locator('.file-diff[data-path="notes/evolving.txt"]').getByTestId('diff');
  await expect(diff).toBeVisible();
  for (const line of added)
    await expect(diff.locator('.add', { hasText: line.slice(1) }).first()).toBeVisible();
});

test('a deep link opens a file straight away in a fresh profile', async ({ browser }) => {
  const context = await browser.newContext();
  const page = await context.newPage();
  const path = 'docs/with space/ünïcødé – файл.txt';
  const q = new URLSearchParams({ repo: `${gitServer}/features.git`, ref: 'main', path });
  await page.goto(`/?${q}#L1`);
  await expect(page.getByTestId('file-content')).toBeVisible({ timeout: 90_000 });
  expect(await shownText(page)).toBe(gitIn(['show', `main:${path}`]));
  await expect(page.locator('#L1')).toHaveClass(/selected/);
  await context.close();
});

test('offline: present files read, a missing one shows the typed error', async ({ page, context }) => {
  await cloneThroughForm(page, 'features.git');
  // The tags arrive with the history, behind the first view.
  await expect(page.getByTestId('history-fill')).toHaveAttribute('data-status', 'complete', {
    timeout: 60_000,
  });
  // A file whose v0.1 version appears nowhere in main's tree: nothing fetched it.
  const mainBlobs = new Set(
    gitIn(['ls-tree', '-r', 'main'])
      .trim()
      .split('\n')
      .map((l) => l.split(/\s+/)[2]),
  );
  const missing = gitIn(['ls-tree', '-r', '--name-only', 'v0.1'])
    .trim()
    .split('\n')
    .find((p) => !mainBlobs.has(gitIn(['rev-parse', `v0.1:${p}`]).trim()))!;
  expect(missing).toBeTruthy();

  await context.setOffline(true);
  await spaNavigate(page, { path: 'README.md' });
  await page.getByRole('button', { name: 'Code', exact: true }).click();
  await expect(page.getByTestId('file-content')).toBeVisible();
  expect(await shownText(page)).toBe(gitIn(['show', 'main:README.md']));

  await spaNavigate(page, { ref: 'v0.1', path: missing });
  const error = page.getByTestId('file-error');
  // The worker knows the device is offline, so it says so rather than trying and calling the blob missing.
  await expect(error).toContainText('OFFLINE');
  await expect(error).toContainText(missing);
  await context.setOffline(false);
});

test("a commit's diff being read stays as it is while the history arrives", async ({ page }) => {
  // The clone's first view (depth 1) and the fill's first step go through; the steps after it wait until
  // the commit's diff is on screen, so that they land while it is read.
  let deepening = 0;
  let release!: () => void;
  const held = new Promise<void>((resolve) => {
    release = resolve;
  });
  await page.route('**/small-sized.git/git-upload-pack', async (route) => {
    const body = route.request().postData() ?? '';
    if (body.includes('command=fetch') && body.includes('deepen') && ++deepening > 2) await held;
    await route.continue();
  });
  await page.goto(`/?clone=${encodeURIComponent(`${gitServer}/small-sized.git`)}`);
  await page.getByTestId('clone-submit').click();
  await expect(page.getByTestId('file-tree')).toBeVisible({ timeout: 90_000 });
  await openTab(page, 'history');
  await page.getByTestId('commit-list').locator('li a').first().click();
  const diff = page.locator('.file-diff').first().getByTestId('diff');
  await expect(diff).toBeVisible({ timeout: 60_000 });
  // A view mounted again would fold, fetch and lay out every diff anew: the element itself must stay.
  await diff.evaluate((el) => el.setAttribute('data-read', 'yes'));
  const fill = page.getByTestId('history-fill');
  await expect(fill).toHaveAttribute('data-status', 'filling');
  release();
  await expect(fill).toHaveAttribute('data-status', 'complete', { timeout: 90_000 });
  await expect(diff).toBeVisible();
  await expect(diff).toHaveAttribute('data-read', 'yes');
});

test('screenshots of home, progress, repo and diff views, light and dark', async ({ browser }) => {
  for (const colorScheme of ['light', 'dark'] as const) {
    const context = await browser.newContext({ colorScheme, viewport: { width: 1200, height: 860 } });
    const page = await context.newPage();
    await page.goto(`/?clone=${encodeURIComponent(`${gitServer}/small-sized.git`)}`);
    await page.screenshot({ path: join(shots, `home-${colorScheme}.png`) });
    // The clone's pack request is held until the progress is on screen: a small clone can otherwise be
    // over between two looks at the page.
    let release!: () => void;
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    await page.route('**/small-sized.git/git-upload-pack', async (route) => {
      if (route.request().postData()?.includes('command=fetch')) await held;
      await route.continue();
    });
    await page.getByTestId('clone-submit').click();
    await expect(page.getByTestId('progress')).toHaveAttribute('data-phase', /.+/);
    await page.screenshot({ path: join(shots, `progress-${colorScheme}.png`) });
    release();
    await expect(page.getByTestId('file-tree')).toBeVisible({ timeout: 90_000 });
    await page.unrouteAll();
    await page.screenshot({ path: join(shots, `repo-${colorScheme}.png`) });
    await openTab(page, 'history');
    await page.getByTestId('commit-list').locator('li a').first().click();
    await expect(page.getByTestId('diff').first()).toBeVisible();
    await page.screenshot({ path: join(shots, `diff-${colorScheme}.png`) });
    await context.close();
  }
  // A phone's width: one column, nothing cut off.
  const phone = await browser.newContext({ viewport: { width: 390, height: 844 }, isMobile: true });
  const page = await phone.newPage();
  await page.goto(`/?repo=${encodeURIComponent(`${gitServer}/features.git`)}&path=README.md`);
  await expect(page.getByTestId('markdown')).toBeVisible({ timeout: 90_000 });
  expect(await page.evaluate(() => document.documentElement.scrollWidth <= window.innerWidth + 1)).toBe(true);
  await page.screenshot({ path: join(shots, 'phone-file.png'), fullPage: true });
  await phone.close();
});

// How long the main thread is busy while small-sized.git clones and checks out is a timing: it is the
// benchmark's `blobless.longestMainTaskMs` (bench/README.md). That no git code runs on the main thread is
// checked by its source maps (clone.spec.ts).
