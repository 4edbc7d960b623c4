import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { rename, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { expect, type Page, test } from '@playwright/test';
import { ensureFixtures, SIZED_PRESETS } from '../server/fixtures/index.ts';
import { openTab } from './ui.ts';

const gitServer = process.env.GIT_SERVER_URL ?? 'http://127.0.0.1:4174';
const README_TEXT = 'This line is shown before the history has arrived.';

/**
 * The sized fixture the test clones: medium.git (10,000 commits), which the unit tests have built already,
 * so that `npm test` stays within CI's time on two cores; `FIRST_VIEW_SIZE=large` runs it on large.git
 * (50,000 commits, 20,000 files; about two minutes more to build, and minutes of history to fill).
 */
const SIZE = process.env.FIRST_VIEW_SIZE === 'large' ? 'large' : 'medium';

/**
 * The sized fixture with one more commit that adds a README.md at its root: the sized fixtures have none.
 * It borrows the fixture's objects through `objects/info/alternates`, so it costs one commit, and it is
 * made again whenever the fixture was rebuilt (its parent is the fixture's main).
 */
async function sizedWithReadme(): Promise<string> {
  const { dir } = await ensureFixtures({ sized: [SIZED_PRESETS[SIZE]] });
  const large = join(dir, `${SIZE}.git`);
  const repo = join(dir, `${SIZE}-readme.git`);
  const git = (cwd: string, args: string[], input?: string) =>
    execFileSync('git', args, { cwd, encoding: 'utf8', input }).trim();
  const tip = git(large, ['rev-parse', 'refs/heads/main']);
  if (
    existsSync(join(repo, 'objects/info/alternates')) &&
    git(repo, ['rev-parse', 'refs/heads/main^']) === tip
  )
    return repo;
  const scratch = `${repo}.tmp`;
  await rm(scratch, { recursive: true, force: true });
  execFileSync('git', ['init', '-q', '--bare', '-b', 'main', scratch]);
  execFileSync('sh', ['-c', `echo "${join(large, 'objects')}" > objects/info/alternates`], { cwd: scratch });
  // Served as the sized fixtures are: partial clone allowed.
  git(scratch, ['config', 'uploadpack.allowFilter', 'true']);
  git(scratch, ['config', 'uploadpack.allowAnySHA1InWant', 'true']);
  git(scratch, ['fetch', '-q', large, '+refs/*:refs/*']);
  const blob = git(scratch, ['hash-object', '-w', '--stdin'], `# large\n\n${README_TEXT}\n`);
  const entries = git(scratch, ['ls-tree', tip]);
  const tree = git(scratch, ['mktree'], `${entries}\n100644 blob ${blob}\tREADME.md\n`);
  const env = {
    ...process.env,
    GIT_AUTHOR_DATE: '2030-01-01T00:00:00Z',
    GIT_COMMITTER_DATE: '2030-01-01T00:00:00Z',
    GIT_AUTHOR_NAME: 'Fixture',
    GIT_AUTHOR_EMAIL: 'fixture@example.com',
    GIT_COMMITTER_NAME: 'Fixture',
    GIT_COMMITTER_EMAIL: 'fixture@example.com',
  };
  const commit = execFileSync('git', ['commit-tree', tree, '-p', tip, '-m', 'Add a README'], {
    cwd: scratch,
    encoding: 'utf8',
    env,
  }).trim();
  git(scratch, ['update-ref', 'refs/heads/main', commit]);
  await rm(repo, { recursive: true, force: true });
  await rename(scratch, repo);
  return repo;
}

function historyFill(page: Page) {
  return page.getByTestId('history-fill');
}

// Also the history list's test: a history of this length scrolls to its end with only the rows on screen
// in the DOM (it was a test of its own, which cloned medium.git once more).
test(`a clone of a ${SIZED_PRESETS[SIZE].commits.toLocaleString('en-US')}-commit history shows its README first, fills it in across a reload, and scrolls to its end with only the rows on screen in the DOM`, async ({
  page,
}) => {
  test.setTimeout(600_000);
  const bare = await sizedWithReadme();
  const root = execFileSync('git', ['rev-list', '--max-parents=0', 'main'], {
    cwd: bare,
    encoding: 'utf8',
  }).trim();
  const total = Number(
    execFileSync('git', ['rev-list', '--count', '--all'], { cwd: bare, encoding: 'utf8' }).trim(),
  );

  // The first view (depth 1) and the fill's first step go through; the next step waits until the page has
  // reloaded, so that the reload always falls in the middle of the fill, however fast the machine.
  let deepening = 0;
  let release!: () => void;
  const held = new Promise<void>((resolve) => {
    release = resolve;
  });
  await page.route(`**/${SIZE}-readme.git/git-upload-pack`, async (route) => {
    const body = route.request().postData() ?? '';
    if (body.includes('command=fetch') && body.includes('deepen') && ++deepening > 2) await held;
    // The request of the page that reloaded is gone by then.
    await route.continue().catch(() => undefined);
  });

  await page.goto('/');
  await page.getByTestId('clone-url').fill(`${gitServer}/${SIZE}-readme.git`);
  await page.getByTestId('clone-submit').click();

  // The README is shown while the status line still says the history is on its way.
  await expect(page.locator('section.readme')).toContainText(README_TEXT, { timeout: 60_000 });
  await expect(page.locator('.repo-meta')).toContainText('partial clone (blob:none)');
  await expect(historyFill(page)).toHaveAttribute('data-status', 'filling');
  await expect(historyFill(page)).toContainText('Fetching the history');
  // The fill goes on from the History tab (the status bar is on every view).
  await openTab(page, 'history');
  expect(Number(await page.getByTestId('commit-list').getAttribute('data-count'))).toBeLessThan(total);

  // A reload in the middle: after the first step is stored, before the last.
  await expect
    .poll(
      async () =>
        Number((await historyFill(page).textContent())?.match(/([\d,]+) commits?/)?.[1].replace(/,/g, '')),
      {
        timeout: 120_000,
      },
    )
    .toBeGreaterThan(1);
  await expect(historyFill(page)).toHaveAttribute('data-status', 'filling');
  await page.reload();
  release();

  // The repository opens again from what is stored, and its history is completed.
  await expect(page.getByTestId('commit-list')).toBeVisible({ timeout: 60_000 });
  await expect(historyFill(page)).toHaveAttribute('data-status', 'complete', { timeout: 300_000 });
  await expect(historyFill(page)).toContainText('History complete');
  await expect(historyFill(page)).toContainText(total.toLocaleString('en-US'));

  // Scrolled to the end of what it holds, again and again, the history list loads page after page until
  // it shows the first commit, and holds every commit.
  const list = page.getByTestId('commit-list');
  const box = page.locator('.commit-scroll');
  await expect
    .poll(
      async () => {
        await box.evaluate((el) => el.scrollTo(0, el.scrollHeight));
        return list.locator('li').last().getAttribute('data-oid');
      },
      { timeout: 240_000, intervals: [100] },
    )
    .toBe(root);
  expect(Number(await list.getAttribute('data-count'))).toBe(total);
  // Only the rows on screen are in the DOM, whatever the length. (Whether scrolling stays smooth is a
  // timing, the benchmark's to measure; what is asserted here is the virtual list that makes it possible.)
  expect(await list.locator('li').count()).toBeLessThan(60);
});
