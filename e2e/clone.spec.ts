import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { gzipSync } from 'node:zlib';
import { expect, test } from '@playwright/test';
import { ensureFixtures } from '../server/fixtures/index.ts';
import { openTab } from './ui.ts';

const gitServer = process.env.GIT_SERVER_URL ?? 'http://127.0.0.1:4174';

function gitIn(dir: string, args: string[]): string {
  return execFileSync('git', args, { cwd: dir, encoding: 'utf8' }).trim();
}

/** The source files a built chunk was made from, by its source map, as paths from the repository root. */
function sourcesOf(chunk: string): string[] {
  const mapFile = join(process.cwd(), 'dist/assets', `${chunk}.map`);
  const map = JSON.parse(readFileSync(mapFile, 'utf8')) as { sources: string[]; sourceRoot?: string };
  return map.sources.map((s) => relative(process.cwd(), resolve(dirname(mapFile), map.sourceRoot ?? '', s)));
}

test("the main bundle holds no git code, by its source maps: of workers/ only the engine's page side; the worker holds it", () => {
  const assets = join(process.cwd(), 'dist/assets');
  const js = readdirSync(assets).filter((f) => f.endsWith('.js'));
  const worker = js.filter((f) => f.startsWith('git.worker-'));
  // Every chunk the main thread loads, up front or lazily (the highlighter, Markdown); workers' chunks
  // (git, path search) run elsewhere, and only the git worker's may hold git code.
  const page = js.filter((f) => !/\.worker-/.test(f));
  expect(worker).toHaveLength(1);
  const html = readFileSync(join(process.cwd(), 'dist/index.html'), 'utf8');
  expect([...html.matchAll(/src="\/assets\/(index-[^"]+\.js)"/g)]).toHaveLength(1);
  const pageSources = page.flatMap(sourcesOf);
  // The maps resolve to files that exist here, so the paths below mean what they say.
  expect(pageSources).toContain('workers/engine/client.ts');
  expect(pageSources).toContain('src/App.tsx');
  // wrapEngine and its method lists; the error classes (a lazy chunk, loaded with the first error).
  expect([...new Set(pageSources.filter((s) => /(^|\/)workers\//.test(s)))].sort()).toEqual([
    'workers/commitgraph/errors.ts',
    'workers/engine/client.ts',
    'workers/engine/errors.ts',
    'workers/engine/remote.ts',
    'workers/ops/common/errors.ts',
    'workers/pack/errors.ts',
    'workers/pack/showName.ts',
    'workers/store/errors.ts',
    'workers/transport/errors.ts',
    'workers/wire/errors.ts',
  ]);
  expect(
    pageSources.filter((s) => /node_modules\/(isomorphic-git|@isomorphic-git|pako|hash-wasm)\//.test(s)),
  ).toEqual([]);
  const workerSources = readFileSync(join(assets, `${worker[0]}.map`), 'utf8');
  for (const file of [
    'workers/ops/sync/clone.ts',
    'workers/pack/packIngester.ts',
    'node_modules/isomorphic-git/',
  ]) {
    expect(workerSources).toContain(file);
  }
});

test('the main bundle (JS and CSS loaded up front) is at most 150 KB gzipped', () => {
  const assets = join(process.cwd(), 'dist/assets');
  // What index.html loads; lazy chunks (the highlighter) and the worker are fetched later.
  const html = readFileSync(join(process.cwd(), 'dist/index.html'), 'utf8');
  const upFront = [...html.matchAll(/(?:src|href)="\/assets\/([^"]+\.(?:js|css))"/g)].map((m) => m[1]);
  expect(upFront.length).toBeGreaterThanOrEqual(2);
  const gz = upFront.reduce((sum, f) => sum + gzipSync(readFileSync(join(assets, f))).length, 0);
  expect(gz).toBeLessThanOrEqual(150 * 1024);
});

test('a blob:none clone in a worker, browsed, survives a reload from IndexedDB', async ({ page }) => {
  const { dir } = await ensureFixtures();
  const bare = join(dir, 'features.git');
  const rootNames = gitIn(bare, ['ls-tree', '--name-only', 'HEAD']).split('\n').sort();
  const head = gitIn(bare, ['rev-parse', 'HEAD']);
  const history = gitIn(bare, ['rev-list', 'HEAD']).split('\n');

  const gitRequests: string[] = [];
  page.on('request', (req) => {
    if (req.url().startsWith(gitServer)) gitRequests.push(req.url());
  });

  await page.goto('/');
  await page.getByTestId('clone-url').fill(`${gitServer}/features.git`);
  await page.getByTestId('clone-submit').click();

  const tree = page.getByTestId('file-tree');
  await expect(tree).toBeVisible({ timeout: 60_000 });
  // The address names the remote, so it opens the same repository in any browser.
  expect(new URL(page.url()).searchParams.get('repo')).toBe(`${gitServer}/features.git`);
  const names = async () =>
    (await tree.locator('li .entry').allInnerTexts())
      .map((t) => t.replace(/^[▸·⎘↰]\s*/, '').replace(/\/$/, ''))
      .filter((n) => n !== '..')
      .sort();
  await expect.poll(names).toEqual(rootNames);
  await openTab(page, 'history');
  const list = page.getByTestId('commit-list');
  const commits = list.locator('li');
  // The list is virtual: every commit is loaded, the rows on screen are in the DOM, in rev-list order.
  const shownOids = async () => commits.evaluateAll((els) => els.map((e) => e.getAttribute('data-oid')));
  await expect(list).toHaveAttribute('data-count', String(history.length));
  await expect.poll(async () => (await shownOids()).length).toBeGreaterThan(5);
  expect(await shownOids()).toEqual(history.slice(0, (await shownOids()).length));
  expect(gitRequests.length).toBeGreaterThanOrEqual(3);

  // The history, branches and tags arrive behind the first view.
  await expect(page.getByTestId('history-fill')).toHaveAttribute('data-status', 'complete', {
    timeout: 60_000,
  });
  // A reload starts a new worker that must find everything in IndexedDB, without the network.
  gitRequests.length = 0;
  await page.reload();
  await expect(commits.first()).toHaveAttribute('data-oid', head);
  await expect(list).toHaveAttribute('data-count', String(history.length));
  await openTab(page, 'code');
  await expect.poll(names).toEqual(rootNames);

  // Folders open from the keyboard-reachable buttons and read deeper trees.
  const firstDir = rootNames.find((n) => gitIn(bare, ['cat-file', '-t', `HEAD:${n}`]) === 'tree')!;
  await tree.getByRole('treeitem', { name: `Folder ${firstDir}` }).click();
  const inner = gitIn(bare, ['ls-tree', '--name-only', `HEAD:${firstDir}`])
    .split('\n')
    .sort();
  await expect.poll(names).toEqual(inner);
  expect(gitRequests).toEqual([]);

  // The first view read README's blob: reading it after the reload is local too.
  const repoOnly = new URL(page.url());
  repoOnly.searchParams.delete('path');
  await page.goto(repoOnly.toString());
  await tree.getByRole('treeitem', { name: 'File README.md' }).click();
  await page.getByRole('button', { name: 'Code', exact: true }).click();
  await expect
    .poll(() => page.getByTestId('file-content').evaluate((el) => el.textContent))
    .toBe(execFileSync('git', ['show', 'HEAD:README.md'], { cwd: bare, encoding: 'utf8' }));
  expect(gitRequests).toEqual([]);

  // The home screen lists the stored repo.
  await page.goto('/');
  await expect(page.getByTestId('repo-list')).toContainText('features');
});

test('a clone error is shown with its typed message', async ({ page }) => {
  await page.goto('/');
  await page.getByTestId('clone-url').fill(`${gitServer}/does-not-exist.git`);
  await page.getByTestId('clone-submit').click();
  const error = page.getByTestId('clone-error');
  await expect(error).toContainText('No git repository');
  await expect(error).toContainText('HTTP_NOT_FOUND');
});
