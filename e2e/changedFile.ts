import { expect, type Locator, type Page } from '@playwright/test';

/**
 * Opens a file in a commit's list of changed files (the first, or the one whose name has `hasText`) and
 * returns its diff. Opening fetches the file's two versions when they are not stored: the wait is for that
 * work to end, in a diff or an error, however long a busy machine takes; then it must be the diff.
 */
export async function openChangedFile(page: Page, hasText?: string | RegExp): Promise<Locator> {
  const row = page.locator('.changed-file', hasText === undefined ? {} : { hasText }).first();
  await row.getByRole('button').first().click();
  const diff = row.getByTestId('diff');
  await expect(diff.or(row.locator('.error'))).toBeVisible({ timeout: 60_000 });
  await expect(diff).toBeVisible();
  return diff;
}
