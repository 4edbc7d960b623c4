import { expect, type Locator, type Page } from '@playwright/test';

/**
 * How the tests drive the app's controls that are more than a click: the ref picker, the repository's
 * tabs, and the stored id of the repository shown (the address names its remote URL, not the id).
 */

/** The id of the stored repository the page shows (its IndexedDB database is named after it). */
export async function repoIdOf(page: Page): Promise<string> {
  const id = await page.locator('.repo-view[data-repo-id]').getAttribute('data-repo-id');
  if (!id) throw new Error('No repository is shown');
  return id;
}

/** Switches branch or tag through the ref picker: opens it, finds `ref` by typing, picks it. */
export async function switchRef(page: Page, ref: string): Promise<void> {
  await page.getByTestId('branch-select').click();
  await page.getByTestId('ref-search').fill(ref);
  await page.getByTestId('ref-picker').locator(`[role="option"][data-ref="${ref}"]`).click();
}

/** The name the header shows for the ref (a branch, a tag, or a short commit id). */
export function refShown(page: Page): Locator {
  return page.getByTestId('ref-name');
}

/** Opens one of the repository's tabs: the files, its history, a comparison, the working tree. */
export async function openTab(page: Page, tab: 'code' | 'history' | 'compare' | 'changes'): Promise<void> {
  await page.getByTestId(tab === 'changes' ? 'open-working-tree' : `tab-${tab}`).click();
  if (tab === 'history') await expect(page.getByTestId('commit-list')).toBeVisible();
  if (tab === 'changes') await expect(page.getByTestId('working-tree')).toBeVisible();
}

/**
 * Edits the file shown, as a person does: Edit, wait for `before` in the editor, click into it, `type`
 * (keyboard steps), Save. Resolves once the editor says it saved.
 */
export async function editFile(page: Page, before: string, type: () => Promise<void>): Promise<Locator> {
  await page.getByTestId('edit-file').click();
  const editor = page.getByTestId('file-editor').locator('.cm-content');
  await expect(editor).toContainText(before, { timeout: 60_000 });
  await editor.click();
  await type();
  await page.getByTestId('editor-save').click();
  await expect(page.getByTestId('file-editor')).toContainText('Saved');
  return editor;
}

/** Commits what is staged from the Changes tab's dialog, as Ada Lovelace. */
export async function commitStaged(page: Page, message: string): Promise<void> {
  const panel = page.getByTestId('working-tree');
  await panel.getByTestId('commit-open').click();
  const dialog = panel.getByTestId('commit-dialog');
  await dialog.getByTestId('commit-message').fill(message);
  await dialog.getByTestId('author-name').fill('Ada Lovelace');
  await dialog.getByTestId('author-email').fill('ada@example.com');
  await dialog.getByTestId('commit-submit').click();
  await expect(dialog).toBeHidden();
}
