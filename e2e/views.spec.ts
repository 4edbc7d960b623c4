// Every view, light and dark: axe-core finds no serious or critical accessibility violation. With
// BLOBLESS_SCREENSHOTS=1 it also takes the README's screenshots of each view at 1280 and 390 px
// (docs/screenshots/views/), of Blobless's own repository.
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import AxeBuilder from '@axe-core/playwright';
import { type BrowserContext, expect, type Page, test } from '@playwright/test';
import { startGitServer } from '../server/gitServer.ts';

const gitServer = process.env.GIT_SERVER_URL ?? 'http://127.0.0.1:4174';
const screenshots = process.env.BLOBLESS_SCREENSHOTS ? join(process.cwd(), 'docs/screenshots/views') : null;
if (screenshots) mkdirSync(screenshots, { recursive: true });

/** The repository shown and its places: the reading fixture, or for the screenshots Blobless's own code. */
interface Site {
  repo: string;
  file: string;
  blamed: string;
  compare: string;
}

interface View {
  name: string;
  address: () => string;
  /** What shows the view is ready. */
  ready: (page: Page) => Promise<void>;
}

let site: Site = {
  repo: `${gitServer}/reading.git`,
  file: 'src/app/components/deeply/nested/widgets/DeepWidget.tsx',
  blamed: 'src/blame.txt',
  compare: 'main...feature',
};
let newest = '';
let shown = '';
const q = (params: Record<string, string>) => `/?${new URLSearchParams({ repo: site.repo, ...params })}`;
const VIEWS: View[] = [
  {
    name: 'home',
    address: () => '/',
    ready: (p) => expect(p.getByTestId('repo-list').locator('li')).toHaveCount(1),
  },
  {
    name: 'repo',
    address: () => q({}),
    ready: async (p) => {
      await expect(p.getByTestId('markdown')).toBeVisible();
      await expect(p.getByTestId('file-tree').locator('[data-last="unknown"]')).toHaveCount(0);
    },
  },
  {
    name: 'file',
    address: () => q({ path: site.file }),
    ready: (p) => expect(p.locator('[data-testid="file-content"] .hljs-keyword').first()).toBeVisible(),
  },
  {
    name: 'blame',
    address: () => q({ path: site.blamed, view: 'blame' }),
    ready: (p) => expect(p.getByTestId('blame')).toBeVisible({ timeout: 60_000 }),
  },
  {
    name: 'history',
    address: () => q({ view: 'history' }),
    ready: (p) => expect(p.getByTestId('commit-list').locator('li').first()).toBeVisible(),
  },
  {
    name: 'commit',
    address: () => q({ commit: shown }),
    ready: (p) => expect(p.getByTestId('diff').first()).toBeVisible({ timeout: 30_000 }),
  },
  {
    name: 'compare',
    address: () => q({ compare: site.compare }),
    ready: (p) => expect(p.getByTestId('compare-files').getByTestId('diff').first()).toBeVisible(),
  },
  {
    name: 'editor',
    address: () => q({ path: site.file, view: 'edit' }),
    ready: (p) => expect(p.getByTestId('file-editor').locator('.cm-content')).toContainText('export'),
  },
  {
    name: 'changes',
    address: () => q({ view: 'changes' }),
    ready: (p) => expect(p.getByTestId('working-tree')).toContainText('Changes on'),
  },
  {
    name: 'widget',
    address: () =>
      `/embed.html?${new URLSearchParams({ repo: site.repo, ref: newest, path: site.file, lines: '1-30' })}`,
    ready: (p) => expect(p.locator('[data-testid="embed-content"] .hljs-keyword').first()).toBeVisible(),
  },
];

test.describe.configure({ mode: 'serial' });

let context: BrowserContext;
let page: Page;
let scratch: string | null = null;
let server: { close(): Promise<void> } | null = null;

test.beforeAll(async ({ browser }) => {
  if (screenshots) {
    // Blobless's own code makes better pictures than the fixtures: a bare copy of this checkout, served.
    scratch = mkdtempSync(join(tmpdir(), 'blobless-views-'));
    const self = join(scratch, 'blobless.git');
    execFileSync('git', ['clone', '-q', '--bare', process.cwd(), self]);
    execFileSync('git', ['-C', self, 'config', 'uploadpack.allowFilter', 'true']);
    const served = await startGitServer({ root: scratch });
    server = served;
    const rev = (r: string) => execFileSync('git', ['-C', self, 'rev-parse', r], { encoding: 'utf8' }).trim();
    site = {
      repo: `${served.url}/blobless.git`,
      file: 'src/highlight.ts',
      blamed: 'src/views/CopyButton.tsx',
      compare: `${rev('HEAD~8')}...${rev('HEAD')}`,
    };
  }
  context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
  page = await context.newPage();
  // Stored first (a first-view clone, its history filled), so each view below opens from this browser.
  await page.goto(q({}));
  await expect(page.getByTestId('history-fill')).toHaveAttribute('data-status', 'complete', {
    timeout: 90_000,
  });
  await page.goto(q({ view: 'history' }));
  newest = (await page.getByTestId('commit-list').locator('li').first().getAttribute('data-oid'))!;
  // Of Blobless's history, a commit of a few short diffs shows best.
  if (scratch)
    shown =
      execFileSync(
        'git',
        ['-C', join(scratch, 'blobless.git'), 'log', '-1', '--format=%H', '--grep=^refs: '],
        { encoding: 'utf8' },
      ).trim() || newest;
  else shown = newest;
});

test.afterAll(async () => {
  await context.close();
  await server?.close();
  if (scratch) rmSync(scratch, { recursive: true, force: true });
});

// The views the accessibility test covers; the others are only photographed.
const CHECKED = new Set(['home', 'repo', 'file', 'blame', 'commit', 'compare', 'editor', 'widget']);

test('axe finds no serious or critical violation on any view, light and dark', async () => {
  test.setTimeout(240_000);
  const found: string[] = [];
  for (const view of VIEWS) {
    if (!CHECKED.has(view.name) && !screenshots) continue;
    await page.setViewportSize({ width: 1280, height: 800 });
    await page.goto(view.address());
    await view.ready(page);
    for (const colorScheme of ['light', 'dark'] as const) {
      await page.emulateMedia({ colorScheme });
      if (CHECKED.has(view.name)) {
        const { violations } = await new AxeBuilder({ page })
          .withTags(['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa', 'best-practice'])
          .analyze();
        for (const v of violations.filter((v) => v.impact === 'serious' || v.impact === 'critical')) {
          found.push(
            `${view.name}, ${colorScheme}: ${v.id} (${v.impact}) ${v.nodes.map((n) => n.target.join(' ')).join(', ')}`,
          );
        }
      }
      if (screenshots) {
        for (const width of [1280, 390]) {
          await page.setViewportSize({ width, height: width > 400 ? 800 : 844 });
          await view.ready(page);
          await page.waitForTimeout(300);
          const path = join(screenshots, `${view.name}-${width}-${colorScheme}.png`);
          // The widget is a box inside someone's page: its picture is the box.
          if (view.name === 'widget') await page.getByTestId('embed-root').screenshot({ path });
          else await page.screenshot({ path });
        }
        await page.setViewportSize({ width: 1280, height: 800 });
      }
    }
    await page.emulateMedia({ colorScheme: 'light' });
  }
  expect(found).toEqual([]);
});
