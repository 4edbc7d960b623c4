// A tab closed in the middle of a write, for real: the worker stops at a named point (crashPoints.ts,
// armed through DevTools, which no page script can reach) and its tab is closed, which terminates it with
// its transactions wherever they are. The next tab's startup repair must leave a consistent store and say
// what it removed; test/crashRepair.test.ts covers every point in vitest, this the real termination.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type BrowserContext, expect, type Page, test } from '@playwright/test';
import { ensureFixtures } from '../server/fixtures/index.ts';
import { treeOids, unheldFiles } from './fixtureTrees.ts';
import { spaNavigate } from './navigate.ts';
import { checkExportedStore, settledFiles, storedFiles } from './storedFiles.ts';
import { refShown, repoIdOf, switchRef } from './ui.ts';

const gitServer = process.env.GIT_SERVER_URL ?? 'http://127.0.0.1:4174';

/** Opens the app in a new tab of `context` and waits for its worker to have checked the storage. */
async function openTab(context: BrowserContext): Promise<Page> {
  const page = await context.newPage();
  await page.goto('/');
  await expect(page.locator('body[data-storage-checked="true"]')).toHaveCount(1, { timeout: 30_000 });
  return page;
}

/** Arms `point` in the page's git worker: the next operation to reach it stops there for good. */
async function armCrash(page: Page, point: string): Promise<() => Promise<void>> {
  const worker = page.workers().find((w) => w.url().includes('git.worker'));
  if (!worker) throw new Error('the page has no git worker');
  await worker.evaluate((p) => {
    (globalThis as { __bloblessCrashAt?: string }).__bloblessCrashAt = p;
  }, point);
  return async () => {
    await expect
      .poll(
        () => worker.evaluate(() => (globalThis as { __bloblessCrashedAt?: string }).__bloblessCrashedAt),
        {
          timeout: 60_000,
        },
      )
      .toBe(point);
    // Standing there past lightning-fs's 500 ms save delay: a write not held for its operation's commit
    // would be stored by now, and show after the crash.
    await page.waitForTimeout(1500);
    // Closing the tab terminates its worker, mid-operation.
    await page.close();
  };
}

async function blobrepoDatabases(page: Page): Promise<string[]> {
  return page.evaluate(async () =>
    (await indexedDB.databases())
      .map((d) => d.name ?? '')
      .filter((n) => n.startsWith('blobless-repo-'))
      .sort(),
  );
}

test('a clone whose tab closed between its files and its record: the next tab deletes it and says so', async ({
  browser,
}) => {
  const context = await browser.newContext();
  try {
    const first = await openTab(context);
    const crashed = await armCrash(first, 'clone:files-committed');
    await first.getByTestId('clone-url').fill(`${gitServer}/basic.git`);
    await first.getByTestId('clone-submit').click();
    await crashed();

    const next = await openTab(context);
    const report = next.getByTestId('repair-report');
    await expect(report).toContainText(/Deleted blobless-repo-basic-[0-9a-f]{8}: an interrupted clone/);
    expect(await blobrepoDatabases(next)).toEqual([]);
    await expect(next.getByTestId('repo-list')).toHaveCount(0);
    // Nothing of it stands in the way of cloning it again.
    await next.getByTestId('clone-url').fill(`${gitServer}/basic.git`);
    await next.getByTestId('clone-submit').click();
    await expect(next.getByTestId('file-tree')).toBeVisible({ timeout: 60_000 });
  } finally {
    await context.close();
  }
});

for (const { point, what } of [
  { point: 'checkout:files-written', what: 'before its commit: the old branch, every stored file as before' },
  { point: 'checkout:files-committed', what: 'after its commit, before its record: the record follows HEAD' },
]) {
  test(`a branch switch whose tab closed ${what}`, async ({ browser }) => {
    const bare = join((await ensureFixtures()).dir, 'features.git');
    const v01 = execFileSync('git', ['rev-parse', 'v0.1^{commit}'], { cwd: bare, encoding: 'utf8' }).trim();
    const context = await browser.newContext();
    try {
      const first = await openTab(context);
      await first.getByTestId('clone-url').fill(`${gitServer}/features.git`);
      await first.getByTestId('clone-submit').click();
      await expect(first.getByTestId('file-tree')).toBeVisible({ timeout: 60_000 });
      // The tags arrive with the history, behind the first view; main's working tree when asked for.
      await expect(first.getByTestId('history-fill')).toHaveAttribute('data-status', 'complete', {
        timeout: 60_000,
      });
      await first.getByTestId('open-working-tree').click();
      await expect(first.getByTestId('working-tree')).toContainText('No changes in the working tree.', {
        timeout: 60_000,
      });
      await first.getByTestId('tab-code').click();
      await expect(refShown(first)).toHaveText('main');
      const repoId = await repoIdOf(first);
      // What is stored once the writes still pending commit, however long a busy machine takes over it.
      const before = await settledFiles(first, repoId);

      const crashed = await armCrash(first, point);
      await switchRef(first, 'v0.1');
      await crashed();

      const next = await openTab(context);
      const after = await storedFiles(next, repoId);
      const head = Buffer.from(after['/.git/HEAD'], 'base64').toString();
      if (point === 'checkout:files-written') {
        // Nothing of v0.1's files was committed: every file stored before is as it was. Only the blobs
        // fetched for it are new, each pack whole (kept by design: the next checkout needs them).
        const added = Object.keys(after).filter((path) => !(path in before));
        for (const path of added) expect(path).toMatch(/^\/\.git\/objects\/pack\/pack-[0-9a-f]{40}\./);
        expect(Object.fromEntries(Object.keys(before).map((path) => [path, after[path]]))).toEqual(before);
        expect(head).toBe('ref: refs/heads/main\n');
        await expect(next.getByTestId('repair-report')).toHaveCount(0);
      } else {
        expect(head).toBe(`${v01}\n`);
        await expect(next.getByTestId('repair-report')).toContainText('features: the list now shows');
      }
      // Every pack has its index, and the repo opens.
      const packs = Object.keys(after).filter((p) => p.startsWith('/.git/objects/pack/'));
      for (const pack of packs.filter((p) => p.endsWith('.pack'))) {
        expect(packs).toContain(pack.replace(/\.pack$/, '.idx'));
      }
      await next
        .getByTestId('repo-list')
        .getByRole('link', { name: /features/ })
        .first()
        .click();
      await expect(next.getByTestId('file-tree')).toBeVisible({ timeout: 30_000 });
    } finally {
      await context.close();
    }
  });
}

for (const point of ['repack:merged-pack-committed', 'repack:old-packs-removing']) {
  test(`a pack merge whose tab closed at ${point}: every pack whole, every blob still stored`, async ({
    browser,
  }) => {
    test.setTimeout(180_000);
    const bare = join((await ensureFixtures()).dir, 'small-sized.git');
    const context = await browser.newContext();
    const scratch = mkdtempSync(join(tmpdir(), 'blobless-crash-repack-'));
    try {
      const first = await openTab(context);
      await first.getByTestId('clone-url').fill(`${gitServer}/small-sized.git`);
      await first.getByTestId('clone-submit').click();
      await expect(first.getByTestId('file-tree')).toBeVisible({ timeout: 90_000 });
      // v0.5 arrives with the history, behind the first view.
      await expect(first.getByTestId('history-fill')).toHaveAttribute('data-status', 'complete', {
        timeout: 60_000,
      });
      const repoId = await repoIdOf(first);

      // Files of v0.5 whose blobs main does not share: each read is one lazy fetch, one promisor pack,
      // until there are more than REPACK_THRESHOLD (16) and a merge starts.
      const v05 = treeOids(bare, 'v0.5');
      const reads = unheldFiles(bare, 'v0.5', ['main'], 20);
      expect(reads).toHaveLength(20);

      const crashed = await armCrash(first, point);
      const worker = first.workers().find((w) => w.url().includes('git.worker'))!;
      const read: string[] = [];
      for (const path of reads) {
        const stopped = await worker.evaluate(
          () => (globalThis as { __bloblessCrashedAt?: string }).__bloblessCrashedAt,
        );
        if (stopped) break;
        await spaNavigate(first, { repo: repoId, ref: 'v0.5', path }, { replace: true });
        const file = first.getByRole('region', { name: `File ${path}` });
        await expect(file.getByTestId('file-oid')).toHaveText(v05.get(path)!.slice(0, 10), {
          timeout: 60_000,
        });
        read.push(path);
      }
      await crashed();

      // The next tab's repair, then what it stores, checked with git.
      const next = await openTab(context);
      const files = await storedFiles(next, repoId);
      const stored = checkExportedStore(files, join(scratch, 'export'));
      expect(read.filter((path) => !stored.has(v05.get(path)!))).toEqual([]);
      // And the repo opens and reads one of them without fetching it again.
      await spaNavigate(next, { repo: repoId, ref: 'v0.5', path: read[0] }, { replace: true });
      await expect(next.getByRole('region', { name: `File ${read[0]}` }).getByTestId('file-oid')).toHaveText(
        v05.get(read[0])!.slice(0, 10),
        { timeout: 30_000 },
      );
    } finally {
      rmSync(scratch, { recursive: true, force: true });
      await context.close();
    }
  });
}
