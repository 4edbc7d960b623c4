// Two tabs (two pages of one context) on one repository: one checks out while the other reads files,
// fetching blobs and setting off a pack merge. The repo's Web Lock lets one write at a time; the reader
// shows "busy in another tab" and then the new state, without a reload. Afterwards the stored repo is
// checked against the git CLI: every pack whole, every file as `git checkout` writes it.
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect, test } from '@playwright/test';
import { ensureFixtures } from '../server/fixtures/index.ts';
import { treeOids, unheldFiles } from './fixtureTrees.ts';
import { spaNavigate } from './navigate.ts';
import { mislabelledFiles, watchShownFiles } from './shownFiles.ts';
import { checkExportedStore, storedFiles } from './storedFiles.ts';
import { refShown, repoIdOf, switchRef } from './ui.ts';

const gitServer = process.env.GIT_SERVER_URL ?? 'http://127.0.0.1:4174';

function sha1(bytes: Buffer): string {
  return createHash('sha1').update(bytes).digest('hex');
}

function diskFiles(root: string, skip = '.git'): Record<string, string> {
  const out: Record<string, string> = {};
  const walk = (dir: string, rel: string) => {
    for (const name of readdirSync(dir)) {
      if (rel === '' && name === skip) continue;
      const path = join(dir, name);
      if (statSync(path).isDirectory()) walk(path, `${rel}/${name}`);
      else out[`${rel}/${name}`] = sha1(readFileSync(path));
    }
  };
  walk(root, '');
  return out;
}

test('two tabs: one checks out while the other reads, fetches and merges packs', async ({ browser }) => {
  test.setTimeout(180_000);
  const bare = join((await ensureFixtures()).dir, 'small-sized.git');
  const context = await browser.newContext();
  const a = await context.newPage();
  const b = await context.newPage();

  await a.goto('/');
  await a.getByTestId('clone-url').fill(`${gitServer}/small-sized.git`);
  await a.getByTestId('clone-submit').click();
  await expect(a.getByTestId('file-tree')).toBeVisible({ timeout: 90_000 });
  const repoId = await repoIdOf(a);

  await b.goto(`/?repo=${repoId}`);
  await expect(b.getByTestId('file-tree')).toBeVisible();
  await expect(refShown(b)).toHaveText('main');
  // Everything tab B's "busy" notice ever said.
  await b.evaluate(() => {
    const seen: string[] = [];
    (window as unknown as { busySeen: string[] }).busySeen = seen;
    new MutationObserver(() => {
      const el = document.querySelector('[data-testid="busy-elsewhere"]');
      if (el?.textContent && seen.at(-1) !== el.textContent) seen.push(el.textContent);
    }).observe(document.body, { subtree: true, childList: true, characterData: true });
  });

  // Files of v0.5 whose blobs neither main (cloned and checked out) nor v0.1 (the checkout) holds: each
  // read in tab B is one lazy fetch, one promisor pack; the 17th sets off a merge.
  const reads = unheldFiles(bare, 'v0.5', ['main', 'v0.1'], 18);
  expect(reads).toHaveLength(18);

  const v05 = treeOids(bare, 'v0.5');
  await watchShownFiles(b);
  await switchRef(a, 'v0.1');
  for (const path of reads) {
    await spaNavigate(b, { repo: repoId, ref: 'v0.5', path }, { replace: true });
    const file = b.getByRole('region', { name: `File ${path}` });
    // Its own blob, read: the next navigation would cancel a read still running, and its blob would
    // rightly never be stored.
    await expect(file.getByTestId('file-oid')).toHaveText(v05.get(path)!.slice(0, 10), { timeout: 60_000 });
    await expect(file.getByTestId('file-content')).toBeVisible();
  }
  // No file was ever shown with another's content (what let this test once go on before a read finished).
  expect(await mislabelledFiles(b, (path) => v05.get(path))).toEqual([]);
  await expect(a).toHaveURL(/ref=v0\.1/, { timeout: 60_000 });
  const busySeen = await b.evaluate(() => (window as unknown as { busySeen: string[] }).busySeen);
  expect(busySeen.some((t) => t.includes('checkout of v0.1'))).toBe(true);

  // Tab B shows the new state without a reload: the repo's home is now at v0.1's commit, and when tab A
  // switches back to main, tab B follows.
  await spaNavigate(b, { repo: repoId }, { replace: true });
  // Detached at v0.1's commit: the header names the tag.
  await expect(refShown(b)).toHaveText('v0.1');
  await expect(b.getByTestId('branch-select')).toContainText('tag');
  await spaNavigate(a, { repo: repoId }, { replace: true });
  await switchRef(a, 'main');
  await expect(refShown(b)).toHaveText('main', { timeout: 60_000 });
  await expect(b.getByTestId('busy-elsewhere')).toBeHidden();

  // The merge tab B's fetches set off has run: without it there would be at least 21 promisor packs (the
  // clone's, main's checkout, v0.1's, and tab B's 18).
  let files: Record<string, string> = {};
  await expect
    .poll(
      async () => {
        files = await storedFiles(b, repoId);
        return Object.keys(files).filter((p) => p.endsWith('.promisor')).length;
      },
      { timeout: 60_000 },
    )
    .toBeLessThan(18);

  // Every pack whole (git verify-pack), the store a git directory git accepts, the working tree as
  // `git checkout main` writes it.
  const scratch = mkdtempSync(join(tmpdir(), 'blobless-two-tabs-'));
  try {
    const stored = checkExportedStore(files, join(scratch, 'export'));
    expect(reads.filter((path) => !stored.has(v05.get(path)!))).toEqual([]);
    const oracle = join(scratch, 'oracle');
    execFileSync('git', ['clone', '-q', bare, oracle]);
    const ours = Object.fromEntries(
      Object.entries(files)
        .filter(([p]) => !p.startsWith('/.git/'))
        .map(([p, b64]) => [p, sha1(Buffer.from(b64, 'base64'))]),
    );
    expect(ours).toEqual(diskFiles(oracle));
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
  await context.close();
});
