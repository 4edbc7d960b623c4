import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { expect, test } from '@playwright/test';
import { ensureFixtures, SIZED_PRESETS } from '../server/fixtures/index.ts';
import { openTab } from './ui.ts';

const gitServer = process.env.GIT_SERVER_URL ?? 'http://127.0.0.1:4174';

test('a 10,000-commit history scrolls to its end with only the rows on screen in the DOM', async ({
  page,
}) => {
  test.setTimeout(240_000);
  // Built into the directory the running git server serves (cached after the first run).
  const { dir } = await ensureFixtures({ sized: [SIZED_PRESETS.medium] });
  const total = Number(
    execFileSync('git', ['rev-list', '--count', 'HEAD'], { cwd: join(dir, 'medium.git'), encoding: 'utf8' }),
  );
  const oldest = execFileSync('git', ['rev-list', 'HEAD'], { cwd: join(dir, 'medium.git'), encoding: 'utf8' })
    .trim()
    .split('\n')
    .at(-1);

  await page.goto('/');
  await page.getByTestId('clone-url').fill(`${gitServer}/medium.git`);
  await page.getByTestId('clone-submit').click();
  await expect(page.getByTestId('file-tree')).toBeVisible({ timeout: 120_000 });
  await openTab(page, 'history');
  const list = page.getByTestId('commit-list');

  // Scroll as a person flinging the list would, until the whole history is loaded and shown.
  const box = page.locator('.commit-scroll');
  await expect
    .poll(
      async () => {
        await box.evaluate((el) => el.scrollBy(0, 4000));
        return Number(await list.getAttribute('data-count'));
      },
      { timeout: 180_000, intervals: [50] },
    )
    .toBe(total);
  await box.evaluate((el) => el.scrollTo(0, el.scrollHeight));
  await expect(list.locator('li').last()).toHaveAttribute('data-oid', oldest!);
  // Only the rows on screen are in the DOM, whatever the length.
  expect(await list.locator('li').count()).toBeLessThan(60);
  // Whether scrolling stays smooth is a timing, the benchmark's to measure; what is asserted here is the
  // virtual list that makes it possible.
});
