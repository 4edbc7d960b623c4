// Using Blobless as people use a code host: shareable links, the ref picker, the styled editor, progress in
// view, honest last commits, errors that say what happened, the install button. The git CLI is the oracle.
import { execFileSync } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { createServer } from 'node:http';
import { join } from 'node:path';
import { expect, type Page, test } from '@playwright/test';
import { ensureFixtures } from '../server/fixtures/index.ts';
import { refShown } from './ui.ts';

const gitServer = process.env.GIT_SERVER_URL ?? 'http://127.0.0.1:4174';
const appPort = Number(process.env.E2E_PORT ?? 4173);
const shots = join(process.cwd(), 'e2e/screenshots');
mkdirSync(shots, { recursive: true });

let fixtures: string;
test.beforeAll(async () => {
  fixtures = (await ensureFixtures()).dir;
});

function gitIn(repo: string, args: string[]): string {
  return execFileSync('git', args, { cwd: join(fixtures, repo), encoding: 'utf8' });
}

test('a permalink copied in one browser opens the same file and lines in another', async ({ browser }) => {
  const path = 'notes/evolving.txt';
  const head = gitIn('features.git', ['rev-parse', 'main']).trim();
  const first = await browser.newContext({ permissions: ['clipboard-read', 'clipboard-write'] });
  const page = await first.newPage();
  await page.goto(`/?${new URLSearchParams({ repo: `${gitServer}/features.git`, path })}`);
  await expect(page.getByTestId('file-content')).toBeVisible({ timeout: 90_000 });
  // The address names the remote, not this browser's id for it.
  expect(new URL(page.url()).searchParams.get('repo')).toBe(`${gitServer}/features.git`);
  await page.locator('#L3 .ln').click();
  await page.locator('#L5 .ln').click({ modifiers: ['Shift'] });
  await page.getByTestId('copy-permalink').click();
  const link = await page.evaluate(() => navigator.clipboard.readText());
  const url = new URL(link);
  expect(url.searchParams.get('repo')).toBe(`${gitServer}/features.git`);
  expect(url.searchParams.get('ref')).toBe(head);
  expect(url.hash).toBe('#L3-L5');
  await first.close();

  // Another profile: nothing stored, so the link clones first, then shows those lines of that commit.
  const second = await browser.newContext();
  const other = await second.newPage();
  await other.goto(link);
  const content = other.getByTestId('file-content');
  await expect(content).toBeVisible({ timeout: 90_000 });
  expect(await content.evaluate((el) => el.textContent)).toBe(
    gitIn('features.git', ['show', `${head}:${path}`]),
  );
  for (const n of [3, 4, 5]) await expect(other.locator(`#L${n}`)).toHaveClass(/selected/);
  await expect(other.locator('#L2')).not.toHaveClass(/selected/);
  await expect(other.locator('#L6')).not.toHaveClass(/selected/);
  await second.close();
});

test('the editor is styled under the page’s CSP, with no violation, and highlights its language', async ({
  page,
}) => {
  const violations: string[] = [];
  page.on('console', (m) => {
    if (/Content Security Policy|Refused to apply/i.test(m.text())) violations.push(m.text());
  });
  await page.addInitScript(() => {
    const seen: string[] = [];
    (window as unknown as { cspViolations: string[] }).cspViolations = seen;
    document.addEventListener('securitypolicyviolation', (e) =>
      seen.push(`${e.violatedDirective} ${e.blockedURI}`),
    );
  });
  await page.setViewportSize({ width: 1280, height: 720 });
  await page.goto(
    `/?${new URLSearchParams({ repo: `${gitServer}/basic.git`, path: 'src/greet.js', view: 'edit' })}`,
  );
  const editor = page.getByTestId('file-editor');
  const content = editor.locator('.cm-content');
  await expect(content).toContainText('export function greet', { timeout: 90_000 });
  // The JavaScript mode arrived: a keyword is a token of its own, in the keyword colour.
  const keyword = content.locator('span', { hasText: /^export$/ }).first();
  await expect(keyword).toBeVisible();
  const keywordColour = await page.evaluate(() =>
    getComputedStyle(document.documentElement).getPropertyValue('--hl-keyword').trim(),
  );
  await expect.poll(() => keyword.evaluate((el) => getComputedStyle(el).color)).toBe(rgb(keywordColour));
  // CodeMirror's own layout rules apply: the gutter beside the text, not stacked above it.
  const gutter = await editor.locator('.cm-gutters').boundingBox();
  const text = await content.boundingBox();
  expect(gutter && text).toBeTruthy();
  expect(gutter!.x + gutter!.width).toBeLessThanOrEqual(text!.x + 1);
  expect(Math.abs(gutter!.y - text!.y)).toBeLessThan(4);
  const styles = await editor.locator('.cm-editor').evaluate((el) => {
    const s = getComputedStyle(el);
    const scroller = getComputedStyle(el.querySelector('.cm-scroller')!);
    return {
      display: s.display,
      position: s.position,
      font: scroller.fontFamily,
      overflow: scroller.overflowX,
    };
  });
  expect(styles).toMatchObject({ display: 'flex', position: 'relative', overflow: 'auto' });
  expect(styles.font).toMatch(/monospace/);
  await page.screenshot({ path: join(shots, 'editor-light.png') });
  expect(await page.evaluate(() => (window as unknown as { cspViolations: string[] }).cspViolations)).toEqual(
    [],
  );
  expect(violations).toEqual([]);
});

/** `#cf222e` as getComputedStyle spells it. */
function rgb(hex: string): string {
  const n = Number.parseInt(hex.slice(1), 16);
  return `rgb(${(n >> 16) & 255}, ${(n >> 8) & 255}, ${n & 255})`;
}

test('the ref picker finds 4.19 by typing and switches only on Enter', async ({ page }) => {
  await page.goto(`/?${new URLSearchParams({ repo: `${gitServer}/refs.git`, path: 'VERSION' })}`);
  const content = page.getByTestId('file-content');
  await expect(content).toHaveText('5.1.1\n', { timeout: 90_000 });
  await expect(page.getByTestId('history-fill')).toHaveAttribute('data-status', 'complete', {
    timeout: 60_000,
  });
  await expect(refShown(page)).toHaveText('master');

  await page.getByTestId('branch-select').click();
  const picker = page.getByTestId('ref-picker');
  const names = () =>
    picker.getByRole('option').evaluateAll((els) => els.map((el) => el.getAttribute('data-ref')));
  // Branches, the default one first; then the tags, newest version first.
  expect((await names())[0]).toBe('master');
  await picker.getByTestId('ref-tab-tags').click();
  const tags = gitIn('refs.git', ['tag']).trim().split('\n');
  // The list is read again after the fill's last step stored the tags: that read may still be on its way.
  await expect.poll(names).toHaveLength(tags.length);
  expect((await names()).slice(0, 7)).toEqual([
    'v5.1.1',
    '5.1.0',
    '5.0.0',
    '5.0.0-beta.1',
    '4.19.2',
    '4.19.1',
    '4.19.0',
  ]);
  expect((await names()).indexOf('4.10.0')).toBeLessThan((await names()).indexOf('4.9.0'));

  await picker.getByTestId('ref-tab-branches').click();
  const search = page.getByTestId('ref-search');
  await expect(search).toBeFocused();
  await page.keyboard.type('4.19');
  // Typing finds (in the Tags tab, though Branches was open) and switches nothing.
  await expect.poll(names).toEqual(['4.19.2', '4.19.1', '4.19.0']);
  await expect(picker.getByTestId('ref-tab-tags')).toHaveAttribute('aria-selected', 'true');
  await page.waitForTimeout(300);
  expect(new URL(page.url()).searchParams.get('ref')).toBeNull();
  await expect(content).toHaveText('5.1.1\n');
  await page.keyboard.press('ArrowDown');
  await expect(picker.getByRole('option', { selected: true })).toHaveAttribute('data-ref', '4.19.1');
  expect(new URL(page.url()).searchParams.get('ref')).toBeNull();

  await page.keyboard.press('Enter');
  await expect(page).toHaveURL(/ref=4\.19\.1/, { timeout: 60_000 });
  await expect(content).toHaveText('4.19.1\n');
  // The header names the tag.
  await expect(refShown(page)).toHaveText('4.19.1');
  await expect(page.getByTestId('branch-select')).toContainText('tag');
  await expect(picker).toHaveCount(0);
});

/**
 * Every time the status bar is on the page, whether it is inside the window, and what it says: recorded
 * by a MutationObserver from before the app starts, so no state it passes through goes unseen.
 */
async function watchStatusBar(page: Page): Promise<void> {
  await page.addInitScript(() => {
    const seen: { inside: boolean; kind: string; moved: string }[] = [];
    (window as unknown as { statusBars: typeof seen }).statusBars = seen;
    const look = () => {
      const bar = document.querySelector('[data-testid="status-bar"]');
      if (!bar) return;
      const r = bar.getBoundingClientRect();
      const inside =
        r.height > 0 &&
        r.top >= 0 &&
        r.bottom <= window.innerHeight + 0.5 &&
        r.left >= 0 &&
        r.right <= window.innerWidth + 0.5;
      const fill = bar.querySelector('[data-testid="history-fill"]')?.getAttribute('data-status');
      const moved = bar.querySelector('[data-testid="bytes-moved"]')?.textContent ?? '';
      seen.push({
        inside,
        kind: bar.classList.contains('clone-status') ? 'clone' : `repo:${fill ?? ''}`,
        moved,
      });
    };
    new MutationObserver(look).observe(document, {
      subtree: true,
      childList: true,
      attributes: true,
      characterData: true,
    });
    addEventListener('scroll', look, { passive: true });
  });
}

for (const width of [1280, 390]) {
  test(`the status bar is inside the window during a clone and its history fill, at ${width} px`, async ({
    browser,
  }) => {
    const context = await browser.newContext({ viewport: { width, height: width > 400 ? 720 : 844 } });
    const page = await context.newPage();
    await watchStatusBar(page);
    await page.goto(`/?clone=${encodeURIComponent(`${gitServer}/reading.git`)}`);
    await page.getByTestId('clone-submit').click();
    await expect(page.getByTestId('file-tree')).toBeVisible({ timeout: 90_000 });
    // Scrolled down a long page, the bar stays at the bottom of the window.
    await page.evaluate(() => window.scrollTo(0, document.body.scrollHeight));
    await expect(page.getByTestId('history-fill')).toHaveAttribute('data-status', 'complete', {
      timeout: 60_000,
    });
    await page.evaluate(() => window.scrollTo(0, document.body.scrollHeight / 2));
    const seen = await page.evaluate(
      () =>
        (window as unknown as { statusBars: { inside: boolean; kind: string; moved: string }[] }).statusBars,
    );
    expect(seen.some((s) => s.kind === 'clone')).toBe(true);
    expect(seen.some((s) => s.kind === 'repo:filling')).toBe(true);
    expect(seen.filter((s) => !s.inside)).toEqual([]);
    // Nothing said the history was incomplete before the fill started (it never stopped here).
    expect(seen.filter((s) => s.kind === 'repo:stopped' || s.kind === 'repo:failed')).toEqual([]);
    // The bytes moved grew while the history arrived, not only once it was stored.
    const moved = [...new Set(seen.filter((s) => s.kind.startsWith('repo:')).map((s) => s.moved))];
    expect(moved.length).toBeGreaterThan(1);
    await expect(page.getByTestId('status-bar')).toBeInViewport({ ratio: 1 });
    expect(await page.evaluate(() => document.documentElement.scrollHeight > innerHeight)).toBe(true);
    await context.close();
  });
}

test('the last commit of a folder’s entries is never one git log -1 disagrees with, while the history fills', async ({
  browser,
}) => {
  const folder = 'docs';
  const context = await browser.newContext();
  const page = await context.newPage();
  // Every last commit the folder view ever names, or "…", by entry, from the first render on.
  await page.addInitScript(() => {
    const seen = new Set<string>();
    (window as unknown as { lastSeen: Set<string> }).lastSeen = seen;
    new MutationObserver(() => {
      for (const row of document.querySelectorAll('[data-testid="file-tree"] li[data-name]')) {
        const last = row.querySelector('[data-last]')?.getAttribute('data-last');
        if (last) seen.add(`${row.getAttribute('data-name')} ${last}`);
      }
    }).observe(document, { subtree: true, childList: true, attributes: true, characterData: true });
  });
  await page.goto(`/?${new URLSearchParams({ repo: `${gitServer}/small-sized.git`, path: folder })}`);
  await expect(page.getByTestId('history-fill')).toHaveAttribute('data-status', 'complete', {
    timeout: 90_000,
  });
  const names = gitIn('small-sized.git', ['ls-tree', '--name-only', `HEAD:${folder}`])
    .trim()
    .split('\n');
  // In the end every entry has its commit.
  await expect
    .poll(() => page.getByTestId('file-tree').locator('[data-last="unknown"]').count(), { timeout: 30_000 })
    .toBe(0);
  const seen = [
    ...(await page.evaluate(() => [...(window as unknown as { lastSeen: Set<string> }).lastSeen])),
  ];
  const truth = new Map(
    names.map((n) => [
      n,
      gitIn('small-sized.git', ['log', '-1', '--format=%H', 'HEAD', '--', `${folder}/${n}`]).trim(),
    ]),
  );
  // The first view (depth 1) knew none of them: "…" was shown, not the tip.
  expect(seen.filter((s) => s.endsWith(' unknown')).length).toBeGreaterThan(0);
  const wrong = seen.filter((s) => {
    const [name, oid] = s.split(' ');
    return oid !== 'unknown' && truth.get(name) !== oid;
  });
  expect(wrong).toEqual([]);
  expect(seen.filter((s) => !s.endsWith(' unknown')).length).toBeGreaterThanOrEqual(names.length);
  await context.close();
});

test('errors say what happened: a host not found, a host without CORS headers, a web page', async ({
  page,
}) => {
  // A server that answers, without CORS headers: what most git hosts are to a browser.
  const server = createServer((_req, res) => {
    res.writeHead(200, { 'Content-Type': 'text/plain' });
    res.end('hello');
  });
  const port = appPort + 6;
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  try {
    const cloneError = async (url: string) => {
      await page.goto('/');
      await page.getByTestId('clone-url').fill(url);
      await page.getByTestId('clone-submit').click();
      const error = page.getByTestId('clone-error');
      await expect(error).toBeVisible({ timeout: 60_000 });
      return (await error.textContent()) ?? '';
    };
    const missing = await cloneError('https://example.invalid/x.git');
    expect(missing).toContain('Could not reach example.invalid');
    expect(missing).toContain('HOST_UNREACHABLE');
    // The app has a fallback proxy configured; the person chose none, so none is named.
    expect(missing).not.toMatch(/proxy/i);

    const cors = await cloneError(`http://127.0.0.1:${port}/x.git`);
    expect(cors).toContain('CORS_REFUSED');
    expect(cors).toContain('sends no CORS headers');
    expect(cors).not.toContain('The CORS proxy refused');

    // "Check the address" once, not twice.
    const notFound = await cloneError(`${gitServer}/no-such-repo.git`);
    expect(notFound.match(/Check the address/g)).toHaveLength(1);
  } finally {
    await new Promise((resolve) => server.close(resolve));
  }
});

test('a .git-less address and the owner/repo shorthand are accepted', async ({ page }) => {
  await page.goto('/');
  // The local server serves basic.git only under its .git name: the clone tries that too.
  await page.getByTestId('clone-url').fill(`${gitServer}/basic`);
  await page.getByTestId('clone-submit').click();
  await expect(page.getByTestId('file-tree')).toBeVisible({ timeout: 60_000 });
  expect(new URL(page.url()).searchParams.get('repo')).toBe(`${gitServer}/basic.git`);
  // A shorthand is a GitHub address, not "Please enter a URL" (there is no network here to reach it).
  await page.goto('/');
  await page.getByTestId('clone-url').fill('expressjs/express');
  await page.getByTestId('clone-submit').click();
  await expect(page.getByTestId('clone-error')).toContainText('github.com', { timeout: 60_000 });
});

test('deleting a stored repository asks in the app’s own dialog', async ({ page }) => {
  page.on('dialog', (d) => {
    throw new Error(`A native dialog opened: ${d.message()}`);
  });
  await page.goto(`/?repo=${encodeURIComponent(`${gitServer}/basic.git`)}`);
  await expect(page.getByTestId('file-tree')).toBeVisible({ timeout: 60_000 });
  await page.goto('/');
  const list = page.getByTestId('repo-list');
  const row = list.locator('li', { hasText: `${gitServer}/basic.git` });
  await expect(row).toHaveCount(1);
  // The name links to the remote's address, not this browser's id.
  const href = (await row.locator('a.repo-name').getAttribute('href')) ?? '';
  expect(new URL(href, 'http://x').searchParams.get('repo')).toBe(`${gitServer}/basic.git`);
  await row.getByRole('button', { name: /^Delete/ }).click();
  const dialog = page.getByRole('dialog', { name: /Delete basic/ });
  await expect(dialog).toBeVisible();
  await dialog.getByRole('button', { name: 'Cancel' }).click();
  await expect(dialog).toHaveCount(0);
  await expect(row).toHaveCount(1);
  await row.getByRole('button', { name: /^Delete/ }).click();
  await page.getByTestId('ask-confirm').click();
  await expect(row).toHaveCount(0);
});

test('Install appears when the browser offers it, and goes once installed', async ({ page }) => {
  await page.goto('/');
  await expect(page.getByRole('heading', { name: 'Clone a repository' })).toBeVisible();
  await expect(page.getByTestId('install')).toHaveCount(0);
  // What Chromium fires when the app may be installed (it does not in a headless, unengaged profile).
  await page.evaluate(() => {
    const offer = new Event('beforeinstallprompt', { cancelable: true }) as Event & {
      prompt(): Promise<void>;
      userChoice: Promise<{ outcome: string }>;
    };
    offer.prompt = async () => {
      (window as unknown as { prompted: boolean }).prompted = true;
    };
    offer.userChoice = Promise.resolve({ outcome: 'dismissed' });
    dispatchEvent(offer);
    (window as unknown as { offerPrevented: boolean }).offerPrevented = offer.defaultPrevented;
  });
  expect(await page.evaluate(() => (window as unknown as { offerPrevented: boolean }).offerPrevented)).toBe(
    true,
  );
  await page.getByTestId('install').click();
  expect(await page.evaluate(() => (window as unknown as { prompted: boolean }).prompted)).toBe(true);
  // Dismissed: the offer is spent until the browser makes another.
  await expect(page.getByTestId('install')).toHaveCount(0);
  await page.evaluate(() => {
    const offer = new Event('beforeinstallprompt', { cancelable: true }) as Event & {
      prompt(): Promise<void>;
    };
    offer.prompt = async () => undefined;
    dispatchEvent(offer);
  });
  await expect(page.getByTestId('install')).toBeVisible();
  await page.evaluate(() => dispatchEvent(new Event('appinstalled')));
  await expect(page.getByTestId('install')).toHaveCount(0);
});

test('keyboard: a skip link, one h1, focus follows a folder opened, one tab stop per tree, l selects lines', async ({
  page,
}) => {
  await page.goto(`/?${new URLSearchParams({ repo: `${gitServer}/features.git` })}`);
  const tree = page.getByTestId('file-tree');
  await expect(tree).toBeVisible({ timeout: 90_000 });
  // Counted once the README, whose own `#` heading would be a second h1, is on the page.
  await expect(page.getByTestId('markdown').getByRole('heading').first()).toBeVisible();
  await expect(page.getByRole('heading', { level: 1 })).toHaveCount(1);
  await page.keyboard.press('Tab');
  await expect(page.getByRole('link', { name: 'Skip to content' })).toBeFocused();
  await page.keyboard.press('Enter');
  await expect(page.locator('main')).toBeFocused();

  // The whole list is one tab stop; arrows move, Enter opens a folder, and its first row takes focus.
  const rows = tree.getByRole('treeitem');
  expect(await rows.evaluateAll((els) => els.filter((el) => (el as HTMLElement).tabIndex === 0).length)).toBe(
    1,
  );
  await rows.first().focus();
  const folder = gitIn('features.git', ['ls-tree', 'HEAD'])
    .trim()
    .split('\n')
    .findIndex((l) => l.split(' ')[1] === 'tree');
  for (let i = 0; i < folder; i++) await page.keyboard.press('ArrowDown');
  const name = await page.evaluate(() => document.activeElement?.getAttribute('data-name'));
  await page.keyboard.press('Enter');
  await expect(page).toHaveURL(new RegExp(`path=${name}`));
  await expect(tree.getByRole('treeitem').first()).toBeFocused();
  expect(await page.evaluate(() => document.activeElement?.tagName)).toBe('LI');

  // A file's line numbers are out of the tab order; `l` selects lines from the keyboard.
  await page.goto(
    `/?${new URLSearchParams({ repo: `${gitServer}/features.git`, path: 'notes/evolving.txt' })}`,
  );
  await expect(page.getByTestId('file-content')).toBeVisible();
  expect(
    await page.locator('.ln').evaluateAll((els) => els.every((el) => (el as HTMLElement).tabIndex === -1)),
  ).toBe(true);
  await page.keyboard.press('l');
  await page.getByTestId('line-input').fill('2-4');
  await page.keyboard.press('Enter');
  await expect(page).toHaveURL(/#L2-L4$/);
  for (const n of [2, 3, 4]) await expect(page.locator(`#L${n}`)).toHaveClass(/selected/);
});
