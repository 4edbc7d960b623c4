import { execFileSync, spawnSync } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect, test } from '@playwright/test';
import { ensureFixtures } from '../server/fixtures/index.ts';
import type { RepoStats, ServerStats } from '../server/repoStats.ts';
import { commitStaged, editFile, openTab } from './ui.ts';

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

/**
 * Another person's clone of the push server's basic.git: `steps` changes its files and says which git
 * commands to run (as "Other"), then it pushes.
 */
function otherPushes(steps: (work: string) => string[][]): void {
  const work = mkdtempSync(join(tmpdir(), 'blobless-e2e-other-'));
  try {
    gitIn(tmpdir(), ['clone', '-q', `${pushServer}/basic.git`, work]);
    for (const args of steps(work))
      gitIn(work, ['-c', 'user.name=Other', '-c', 'user.email=o@example.com', ...args]);
    gitIn(work, ['push', '-q', 'origin', 'main']);
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

test('edit a file, stage, commit and push it; the push fetches no blob', async ({ page }) => {
  const base = gitIn(bare, ['rev-parse', 'main']);
  await page.goto('/');
  await page.getByTestId('clone-url').fill(`${pushServer}/basic.git`);
  await page.getByTestId('clone-submit').click();
  const tree = page.getByTestId('file-tree');
  await expect(tree).toBeVisible({ timeout: 60_000 });
  await tree.getByRole('treeitem', { name: 'Folder docs' }).click();
  await tree.getByRole('treeitem', { name: 'File guide.txt' }).click();
  await expect(page.getByTestId('file-content')).toContainText('Getting started');

  // Edit from the file view: the editor takes the window's width.
  const editor = await editFile(page, 'Getting started', async () => {
    await page.keyboard.press('Control+End');
    await page.keyboard.type('Edited in the browser.');
    await page.keyboard.press('Enter');
  });
  await expect(page.getByTestId('editor-stage')).toBeVisible();

  await openTab(page, 'changes');
  const panel = page.getByTestId('working-tree');
  // Nothing staged: Commit waits for something to commit.
  await expect(panel.getByTestId('commit-open')).toBeDisabled();
  const row = panel.locator('.status-row[data-path="docs/guide.txt"]');
  await expect(row).toHaveAttribute('data-unstaged', 'modified');
  await expect(row).toHaveAttribute('data-staged', '');
  await panel.getByTestId('stage-all').click();
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
  await expect(panel.getByTestId('ahead')).toHaveText('1 commit to push');
  // The history shows the new commit first.
  await openTab(page, 'history');
  await expect(page.getByTestId('commit-list').locator('li').first()).toContainText(
    'Edit the guide in the browser',
  );

  await openTab(page, 'changes');
  const before = await stats();
  await panel.getByTestId('push').click();
  await expect(panel.getByTestId('push-result')).toContainText(
    'Pushed main: 1 commit, 2 trees, 1 file sent.',
  );
  await expect(panel.getByTestId('ahead')).toHaveText('Nothing to push');
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

  // Someone else pushes; our next push is refused as non-fast-forward, offers pull, and keeps our commit.
  otherPushes(() => [['commit', '-q', '--allow-empty', '-m', 'Theirs']]);
  const theirs = gitIn(bare, ['rev-parse', 'main']);

  // A new page (a new worker): the author must come from this browser's storage.
  await page.goto(`/?${new URLSearchParams({ repo: `${pushServer}/basic.git`, path: 'docs/guide.txt' })}`);
  await page.getByTestId('edit-file').click();
  await expect(editor).toContainText('Edited in the browser.', { timeout: 60_000 });
  await editor.click();
  await page.keyboard.press('Control+End');
  await page.keyboard.type('A second edit.');
  await page.getByTestId('editor-save').click();
  await page.getByTestId('editor-stage').click();
  await expect(page.getByTestId('file-editor')).toContainText('Saved and staged');
  await openTab(page, 'changes');
  await expect(row).toHaveAttribute('data-staged', 'modified');
  await panel.getByTestId('commit-open').click();
  // The author is remembered for the next commit, across a reload.
  await expect(dialog.getByTestId('author-email')).toHaveValue('ada@example.com');
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
  const ours = (await page.getByTestId('ahead').getAttribute('data-head'))!;

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

test('a conflicting pull resolved in the editor makes the merge commit git makes for that resolution', async ({
  page,
}) => {
  // A fresh remote: the test above moved it on.
  rmSync(bare, { recursive: true, force: true });
  cpSync(join((await ensureFixtures()).dir, 'basic.git'), bare, { recursive: true });
  await page.goto(`/?repo=${encodeURIComponent(`${pushServer}/basic.git`)}&path=docs/guide.txt`);
  await expect(page.getByTestId('file-content')).toContainText('Getting started', { timeout: 60_000 });

  // Ours: the guide's first line.
  const editor = await editFile(page, 'Getting started', async () => {
    await page.keyboard.press('Control+Home');
    await page.keyboard.press('End');
    await page.keyboard.type(' in the browser');
  });
  await openTab(page, 'changes');
  const panel = page.getByTestId('working-tree');
  await panel.getByTestId('stage-all').click();
  await commitStaged(page, 'Ours: the guide, from the browser');
  await expect(panel.getByTestId('ahead')).toHaveText('1 commit to push');
  const dialog = panel.getByTestId('commit-dialog');

  // Theirs: the same line, another file changed, a file added.
  otherPushes((work) => {
    const edit = (file: string, change: (text: string) => string) =>
      writeFileSync(join(work, file), change(readFileSync(join(work, file), 'utf8')));
    edit('docs/guide.txt', (t) => t.replace(/^.*\n/, 'Getting started from the command line\n'));
    edit('src/main.js', (t) => t.replace('world', 'everyone'));
    writeFileSync(join(work, 'NEWS.md'), '# News\n');
    return [
      ['add', '-A'],
      ['commit', '-q', '-m', 'Theirs: the guide, main.js and NEWS.md'],
    ];
  });
  const theirs = gitIn(bare, ['rev-parse', 'main']);

  // The pull stops on the conflict and leaves the merge to finish.
  await page.getByTestId('pull-button').click();
  await expect(page.getByTestId('sync-summary')).toContainText('docs/guide.txt', { timeout: 60_000 });
  await openTab(page, 'changes');
  await expect(panel.getByTestId('merge-banner')).toContainText('1 file to resolve');
  await expect(panel.getByTestId('commit-open')).toBeDisabled();
  const conflicted = panel.locator('.status-row[data-path="docs/guide.txt"]');
  await expect(conflicted).toHaveAttribute('data-conflict', 'true');
  // What merged cleanly is staged already, as git stages it.
  await expect(panel.locator('.status-row[data-path="src/main.js"]')).toHaveAttribute(
    'data-staged',
    'modified',
  );
  await expect(panel.locator('.status-row[data-path="NEWS.md"]')).toHaveAttribute('data-staged', 'added');

  // Resolved in the editor: the markers are there, the file is rewritten, saved, marked as resolved.
  await conflicted.getByTestId('resolve').click();
  await expect(page.getByTestId('conflict-note')).toBeVisible();
  await expect(editor).toContainText('<<<<<<<', { timeout: 60_000 });
  await expect(editor).toContainText('>>>>>>>');
  const resolution = 'Getting started, in the browser and from the command line\n';
  const rest = gitIn(bare, ['show', `${theirs}:docs/guide.txt`])
    .split('\n')
    .slice(1)
    .join('\n');
  await editor.click();
  await page.keyboard.press('Control+A');
  await page.keyboard.press('Delete');
  await page.keyboard.insertText(`${resolution}${rest}\n`);
  await page.getByTestId('editor-save').click();
  await page.getByTestId('editor-stage').click();
  await expect(page.getByTestId('file-editor')).toContainText('Saved and staged');

  await openTab(page, 'changes');
  await expect(panel.getByTestId('merge-banner')).toContainText('every conflict is resolved');
  await panel.getByTestId('commit-open').click();
  await expect(dialog.getByTestId('commit-message')).toHaveValue(/^Merge branch 'main' of /);
  await dialog.getByTestId('commit-submit').click();
  await expect(dialog).toBeHidden();
  await expect(panel.getByTestId('merge-banner')).toHaveCount(0);
  await panel.getByTestId('push').click();
  await expect(panel.getByTestId('push-result')).toContainText('Pushed main');

  // git, given the same two commits and the same resolution, makes the same tree with the same parents.
  const merge = gitIn(bare, ['rev-parse', 'main']);
  const [ours, theirsParent] = gitIn(bare, ['log', '-1', '--format=%P', merge]).split(' ');
  expect(theirsParent).toBe(theirs);
  const work = mkdtempSync(join(tmpdir(), 'blobless-e2e-merge-'));
  try {
    gitIn(tmpdir(), ['clone', '-q', bare, work]);
    gitIn(work, ['checkout', '-q', ours]);
    const merged = spawnSync('git', ['merge', '--no-edit', theirs], { cwd: work, encoding: 'utf8' });
    expect(merged.status, 'git stops on the same conflict').not.toBe(0);
    expect(gitIn(work, ['diff', '--name-only', '--diff-filter=U'])).toBe('docs/guide.txt');
    writeFileSync(join(work, 'docs/guide.txt'), `${resolution}${rest}\n`);
    gitIn(work, ['add', 'docs/guide.txt']);
    gitIn(work, ['-c', 'user.name=Git', '-c', 'user.email=git@example.com', 'commit', '-q', '--no-edit']);
    expect(gitIn(bare, ['rev-parse', `${merge}^{tree}`])).toBe(gitIn(work, ['rev-parse', 'HEAD^{tree}']));
    expect(gitIn(work, ['log', '-1', '--format=%P', 'HEAD'])).toBe(`${ours} ${theirs}`);
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
  gitIn(bare, ['fsck', '--no-progress']);
});
