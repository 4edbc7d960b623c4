import { execFileSync } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect, test } from '@playwright/test';
import { ensureFixtures } from '../server/fixtures/index.ts';
import type { RepoStats, ServerStats } from '../server/repoStats.ts';

// The push server (server/start.ts --push-port/--push-root) serves the repositories in PUSH_ROOT.
const pushServer = process.env.PUSH_SERVER_URL ?? 'http://127.0.0.1:4176';
const pushRoot = process.env.PUSH_ROOT!;
const bare = join(pushRoot, 'basic.git');

function gitIn(dir: string, args: string[]): string {
  return execFileSync('git', args, { cwd: dir, encoding: 'utf8' }).trim();
}

async function stats(): Promise<RepoStats> {
  const body = (await (await fetch(`${pushServer}/_blobless/stats`)).json()) as ServerStats;
  return body.repos['basic.git'];
}

// A fresh copy for this run: the server reads the repository from disk on every request, and a push
// changes it, so an earlier run (or a reused server) must not leave its commits behind.
test.beforeAll(async () => {
  const { dir } = await ensureFixtures();
  mkdirSync(pushRoot, { recursive: true });
  rmSync(bare, { recursive: true, force: true });
  cpSync(join(dir, 'basic.git'), bare, { recursive: true });
});

test('edit a file, stage, commit and push it; the push fetches no blob', async ({ page }) => {
  const base = gitIn(bare, ['rev-parse', 'main']);
  await page.goto('/');
  await page.getByTestId('clone-url').fill(`${pushServer}/basic.git`);
  await page.getByTestId('clone-submit').click();
  const tree = page.getByTestId('file-tree');
  await expect(tree).toBeVisible({ timeout: 60_000 });
  await tree.getByRole('button', { name: 'Open folder docs' }).click();
  await tree.getByRole('button', { name: 'Open file guide.txt' }).click();
  await expect(page.getByTestId('file-content')).toContainText('Getting started');

  await page.getByTestId('open-working-tree').click();
  const panel = page.getByTestId('working-tree');
  await expect(panel).toContainText('No changes in the working tree.');
  await panel.getByTestId('edit-file').click();
  const editor = panel.locator('.cm-content');
  await expect(editor).toContainText('Getting started');
  await editor.click();
  await page.keyboard.press('Control+End');
  await page.keyboard.type('Edited in the browser.');
  await page.keyboard.press('Enter');
  await panel.getByTestId('editor-save').click();

  const row = panel.locator('.status-row[data-path="docs/guide.txt"]');
  await expect(row).toHaveAttribute('data-unstaged', 'modified');
  await expect(row).toHaveAttribute('data-staged', '');
  await row.getByRole('button', { name: 'Stage' }).click();
  await expect(row).toHaveAttribute('data-staged', 'modified');
  await expect(row).toHaveAttribute('data-unstaged', '');
  await row.getByRole('button', { name: 'Staged diff' }).click();
  await expect(row.getByTestId('diff')).toContainText('+Edited in the browser.');

  await panel.getByTestId('commit-open').click();
  const dialog = panel.getByTestId('commit-dialog');
  await dialog.getByTestId('commit-message').fill('Edit the guide in the browser');
  await dialog.getByTestId('author-name').fill('Ada Lovelace');
  await dialog.getByTestId('author-email').fill('ada@example.com');
  await dialog.getByTestId('commit-submit').click();
  await expect(dialog).toBeHidden();
  await expect(panel).toContainText('No changes in the working tree.');
  // The history shows the new commit first.
  await expect(page.getByTestId('commit-list').locator('li').first()).toContainText(
    'Edit the guide in the browser',
  );

  const before = await stats();
  await panel.getByTestId('push').click();
  await expect(panel.getByTestId('push-result')).toContainText(
    'Pushed main: 1 commit, 2 trees, 1 file sent.',
  );
  const after = await stats();
  expect(after.pushes).toBe(before.pushes + 1);
  // The push itself fetched nothing (the checkout after the clone did fetch, before `before`).
  expect(after.fetches).toBe(before.fetches);

  const tip = gitIn(bare, ['rev-parse', 'main']);
  expect(gitIn(bare, ['rev-parse', `${tip}~1`])).toBe(base);
  expect(gitIn(bare, ['log', '-1', '--format=%an <%ae>|%cn <%ce>|%s', 'main'])).toBe(
    'Ada Lovelace <ada@example.com>|Ada Lovelace <ada@example.com>|Edit the guide in the browser',
  );
  expect(gitIn(bare, ['show', 'main:docs/guide.txt']).endsWith('Edited in the browser.')).toBe(true);
  gitIn(bare, ['fsck', '--no-progress']);

  // The author is remembered for the next commit.
  await page.reload();
  await page.getByTestId('open-working-tree').click();
  await expect(panel).toContainText('No changes in the working tree.');
  await panel.getByTestId('commit-open').click();
  await expect(panel.getByTestId('author-email')).toHaveValue('ada@example.com');
  await panel.getByRole('button', { name: 'Cancel' }).click();

  // Someone else pushes; our next push is refused as non-fast-forward, offers pull, and keeps our commit.
  const work = mkdtempSync(join(tmpdir(), 'blobless-e2e-other-'));
  try {
    gitIn(tmpdir(), ['clone', '-q', `${pushServer}/basic.git`, work]);
    gitIn(work, [
      '-c',
      'user.name=Other',
      '-c',
      'user.email=o@example.com',
      'commit',
      '-q',
      '--allow-empty',
      '-m',
      'Theirs',
    ]);
    gitIn(work, ['push', '-q', 'origin', 'main']);
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
  const theirs = gitIn(bare, ['rev-parse', 'main']);

  await panel.getByTestId('edit-file').click();
  await expect(editor).toContainText('Edited in the browser.');
  await editor.click();
  await page.keyboard.press('Control+End');
  await page.keyboard.type('A second edit.');
  await panel.getByTestId('editor-save').click();
  await row.getByRole('button', { name: 'Stage' }).click();
  await expect(row).toHaveAttribute('data-staged', 'modified');
  await panel.getByTestId('commit-open').click();
  await dialog.getByTestId('commit-message').fill('A second edit');
  await dialog.getByTestId('commit-submit').click();
  await expect(dialog).toBeHidden();

  const pushes = (await stats()).pushes;
  await panel.getByTestId('push').click();
  const error = panel.getByTestId('write-error');
  await expect(error).toHaveAttribute('data-code', 'PUSH_NON_FAST_FORWARD');
  await expect(error).toContainText('fetch first');
  // Nothing was sent, the remote is as the other person left it, and our commit is still ours.
  expect((await stats()).pushes).toBe(pushes);
  expect(gitIn(bare, ['rev-parse', 'main'])).toBe(theirs);
  await expect(page.getByTestId('commit-list').locator('li').first()).toContainText('A second edit');
  const ours = (await page.getByTestId('commit-list').locator('li').first().getAttribute('data-oid'))!;

  // The offered pull merges their commit with ours; the push then goes through with both.
  await error.getByTestId('pull-offer').click();
  await expect(panel.getByTestId('pull-note')).toContainText('push again', { timeout: 30_000 });
  await panel.getByTestId('push').click();
  await expect(panel.getByTestId('write-error')).toHaveCount(0);
  await expect.poll(() => gitIn(bare, ['rev-parse', 'main'])).not.toBe(theirs);
  const parents = gitIn(bare, ['log', '-1', '--format=%P', 'main']).split(' ').sort();
  expect(parents).toEqual([ours, theirs].sort());
  gitIn(bare, ['fsck', '--no-progress']);
});
