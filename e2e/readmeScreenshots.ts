// The README's screenshots of Blobless in a tab and as an installed app, into docs/screenshots/.
//
// Needs the app running (`npm start`, or `npx tsx server/start.ts --app-port …`), and for the installed
// app's window an X server: Xvfb (Debian: `apt-get install xvfb x11-apps imagemagick openbox`), because a headless
// browser draws no window frame. Run:
//   APP_URL=http://localhost:8080 GIT_URL=http://127.0.0.1:8081 npx tsx e2e/readmeScreenshots.ts

import { execFileSync, spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type Page } from '@playwright/test';
import { CHROMIUM_ARGS, chromiumPath } from './chromium.ts';

const app = process.env.APP_URL ?? 'http://localhost:8080';
const gitUrl = process.env.GIT_URL ?? 'http://127.0.0.1:8081';
const out = join(process.cwd(), 'docs/screenshots');
const repoUrl = `${gitUrl}/features.git`;
const size = { width: 1100, height: 720 };
mkdirSync(out, { recursive: true });

/** Clones the demo repo through the form: what a person sees after a first clone (files and README). */
async function cloneDemo(page: Page): Promise<void> {
  await page.goto(`${app}/?clone=${encodeURIComponent(repoUrl)}`);
  await page.getByTestId('clone-submit').click();
  await page.getByTestId('file-tree').waitFor({ timeout: 90_000 });
  await page.getByTestId('markdown').waitFor();
}

/** Opens a highlighted file of the demo repo. */
async function openFile(page: Page, path: string): Promise<void> {
  const url = new URL(page.url());
  url.searchParams.set('path', path);
  await page.goto(url.toString());
  await page.locator('[data-testid="file-content"] [class^="hljs-"]').first().waitFor();
}

async function inTab(): Promise<void> {
  const browser = await chromium.launch({ executablePath: chromiumPath(), args: CHROMIUM_ARGS });
  const page = await browser.newPage({ viewport: size, colorScheme: 'light' });
  await cloneDemo(page);
  await page.screenshot({ path: join(out, 'tab-light.png') });
  await browser.close();
  console.log('docs/screenshots/tab-light.png');
}

/**
 * The installed app: Chromium's `--app=` window, the one an installed PWA opens in (standalone display,
 * title bar in the page's theme colour), on a virtual screen the size of the window, grabbed whole.
 */
async function installed(): Promise<void> {
  const display = ':97';
  const screen = { width: size.width + 100, height: size.height + 100 };
  const xvfb = spawn('Xvfb', [
    display,
    '-screen',
    '0',
    `${screen.width}x${screen.height}x24`,
    '-nolisten',
    'tcp',
  ]);
  await new Promise((r) => setTimeout(r, 1000));
  // A window manager, so the window is framed as on a desktop; Chromium draws the frame itself.
  const wm = spawn('openbox', [], { env: { ...process.env, DISPLAY: display } });
  const profile = mkdtempSync(join(tmpdir(), 'blobless-app-'));
  // Chromium's own window frame, the one that takes the theme colour, rather than none (there is no
  // window manager on the virtual screen to draw one).
  mkdirSync(join(profile, 'Default'));
  writeFileSync(
    join(profile, 'Default/Preferences'),
    JSON.stringify({ browser: { custom_chrome_frame: true } }),
  );
  try {
    await new Promise((r) => setTimeout(r, 1000));
    const context = await chromium.launchPersistentContext(profile, {
      executablePath: chromiumPath(),
      headless: false,
      viewport: null,
      colorScheme: 'dark',
      env: { ...process.env, DISPLAY: display },
      args: [
        ...CHROMIUM_ARGS,
        `--app=${app}/`,
        '--window-position=0,0',
        `--window-size=${size.width},${size.height}`,
        '--force-dark-mode',
        // No "unsupported command-line flag" bar for the --no-sandbox that running as root needs.
        '--test-type',
      ],
    });
    const page = context.pages()[0] ?? (await context.waitForEvent('page'));
    await page.waitForLoadState();
    await cloneDemo(page);
    await openFile(page, 'scripts/build.sh');
    await page.waitForTimeout(500);
    const xwd = execFileSync('xwd', ['-root', '-silent', '-display', display], { maxBuffer: 64 << 20 });
    // The window with its frame, without the empty (black) screen around it.
    execFileSync('convert', ['xwd:-', '-trim', '+repage', join(out, 'installed-dark.png')], { input: xwd });
    await context.close();
    console.log('docs/screenshots/installed-dark.png');
  } finally {
    wm.kill();
    xvfb.kill();
    rmSync(profile, { recursive: true, force: true });
  }
}

await inTab();
await installed();
