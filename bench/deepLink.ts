import { launchFreshProfile } from './browser.ts';

/** What the page shows once a linked repository is open: its root folder's entries (views/FileTree.tsx). */
const SHOWN = '[data-testid="file-tree"] li';

declare global {
  interface Window {
    /** Set by the init script below: when the tree was first shown, in the page's clock (ms since navigation). */
    __blobless_shown?: number;
  }
}

/**
 * The deep link, cold: in a fresh profile, the built app (not the bench page) opened at `?repo=<url>`, a
 * link to a repository this browser does not have. The app loads, starts its worker, makes its start-up
 * calls and clones the first view (views/OpenFromLink.tsx), then shows the repository. Timed by the page's
 * own clock, from navigation to the first entry of the tree in the DOM (a MutationObserver, so no polling
 * delay). `onShown` runs as soon as the driver sees it, to close the relay's phase: the history fill that
 * the app starts behind the view is not part of the cell.
 */
export async function measureDeepLink(
  appUrl: string,
  repoUrl: string,
  opts: { timeoutMs: number; onShown(): void },
): Promise<{ ms: number }> {
  const fresh = await launchFreshProfile();
  try {
    const { page } = fresh;
    const errors: string[] = [];
    page.on('pageerror', (err) => errors.push(err.message));
    // A string, not a function: the bundler that runs this file would name functions with a helper the page
    // lacks.
    await page.addInitScript(`
      new MutationObserver(() => {
        if (window.__blobless_shown === undefined && document.querySelector(${JSON.stringify(SHOWN)})) {
          window.__blobless_shown = performance.now();
        }
      }).observe(document, { childList: true, subtree: true });
    `);
    const url = new URL(appUrl);
    url.searchParams.set('repo', repoUrl);
    await page.goto(url.href);
    await page
      .waitForFunction(() => window.__blobless_shown !== undefined, null, {
        timeout: opts.timeoutMs,
        polling: 'raf',
      })
      .catch((err: Error) => {
        throw new Error(
          `the app did not show the linked repository: ${errors.join('; ') || err.message.split('\n')[0]}`,
        );
      });
    opts.onShown();
    return { ms: (await page.evaluate(() => window.__blobless_shown)) as number };
  } finally {
    await fresh.close();
  }
}
