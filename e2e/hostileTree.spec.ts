import { expect, type Page, test } from '@playwright/test';
import { switchRef } from './ui.ts';

const gitServer = process.env.GIT_SERVER_URL ?? 'http://127.0.0.1:4174';

interface StoredRepo {
  /** What lies at the root of the repo's file system: `.git` alone when no working tree was written. */
  rootNames: string[];
  /** Every record of the repo's IndexedDB store, by key: a digest of bytes, or the superblock as JSON. */
  records: Record<string, string>;
}

/** Everything stored for the one cloned repo, read straight from IndexedDB in the page. */
function storedRepo(page: Page): Promise<StoredRepo> {
  return page.evaluate(async () => {
    const names = (await indexedDB.databases())
      .map((d) => d.name ?? '')
      .filter((n) => n.startsWith('blobless-repo-'));
    if (names.length !== 1) throw new Error(`expected one stored repo, found ${names.length}`);
    const name = names[0];
    const db = await new Promise<IDBDatabase>((resolve, reject) => {
      const req = indexedDB.open(name);
      req.onsuccess = () => resolve(req.result);
      req.onerror = () => reject(req.error);
    });
    const all = <T>(make: (s: IDBObjectStore) => IDBRequest<T>) =>
      new Promise<T>((resolve, reject) => {
        const req = make(db.transaction(`${name}_files`).objectStore(`${name}_files`));
        req.onsuccess = () => resolve(req.result);
        req.onerror = () => reject(req.error);
      });
    const keys = await all((s) => s.getAllKeys());
    const values = await all((s) => s.getAll());
    db.close();
    const plain = (v: unknown): unknown =>
      v instanceof Map ? [...v].map(([k, x]) => [plain(k), plain(x)]) : v;
    const records: Record<string, string> = {};
    let rootNames: string[] = [];
    for (let i = 0; i < keys.length; i++) {
      const value = values[i];
      if (value instanceof Map) {
        records[String(keys[i])] = JSON.stringify(plain(value));
        const root = value.get('/') as Map<unknown, unknown>;
        rootNames = [...root.keys()].filter((k): k is string => typeof k === 'string').sort();
      } else if (!(value instanceof ArrayBuffer) && !ArrayBuffer.isView(value)) {
      } else {
        const bytes = value instanceof ArrayBuffer ? value : (value as Uint8Array).slice().buffer;
        const digest = new Uint8Array(await crypto.subtle.digest('SHA-256', bytes));
        records[String(keys[i])] = [...digest].map((b) => b.toString(16).padStart(2, '0')).join('');
      }
    }
    return { rootNames, records };
  });
}

/** The stored repo once its pending writes are committed (BatchedIdb commits 500 ms after the last). */
async function settledRepo(page: Page): Promise<StoredRepo> {
  let last = JSON.stringify(await storedRepo(page));
  for (;;) {
    await page.waitForTimeout(1000);
    const now = await storedRepo(page);
    if (JSON.stringify(now) === last) return now;
    last = JSON.stringify(now);
  }
}

test('a deep link to a tree git refuses: HOSTILE_TREE shown, nothing of it stored', async ({ page }) => {
  // case/empty-name-link: x/ holds "" -> /.git and config (server/fixtures/hostile.sh).
  const link = `/?repo=${encodeURIComponent(`${gitServer}/hostile.git`)}&ref=case/empty-name-link&path=x`;

  // Not stored yet: the link clones its first view (no checkout), with the case as HEAD, and reading x/
  // is refused.
  await page.goto(link);
  const firstError = page.getByTestId('tree-error');
  await expect(firstError).toBeVisible({ timeout: 60_000 });
  await expect(firstError).toContainText('Error code: HOSTILE_TREE');
  await expect(firstError).toContainText('"x/"');
  await expect(firstError).toContainText('EMPTY_NAME');
  await expect(page.getByTestId('history-fill')).toHaveAttribute('data-status', 'complete', {
    timeout: 60_000,
  });
  const stored = await settledRepo(page);
  // The clone is kept (its refs and pack), but not one file of the refused tree: no x, no link to /.git.
  expect(stored.rootNames).toEqual(['.git']);

  // Stored now: the same link lists x/ and is refused again, reading only.
  await page.goto(link);
  const treeError = page.getByTestId('tree-error');
  await expect(treeError).toBeVisible({ timeout: 30_000 });
  await expect(treeError).toContainText('Error code: HOSTILE_TREE');
  await expect(treeError).toContainText('"x/"');
  await expect(page.getByTestId('file-tree')).toHaveCount(0);

  // A switch to another refused case through the branch switcher writes nothing either.
  await switchRef(page, 'case/dotgit');
  const switchError = page.locator('.ref-switcher [role=alert]');
  await expect(switchError).toContainText('".git"');
  await expect(switchError).toContainText('HAS_DOTGIT');
  expect(await settledRepo(page)).toEqual(stored);
});
