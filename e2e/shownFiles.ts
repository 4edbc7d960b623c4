// Records every state of the page's file view as the DOM passed through it: which file the view said it
// showed (its label) and whose bytes it showed (the blob id on it). A MutationObserver sees each render
// Preact commits, so a render that labels one file with another's content is caught however short it was.
import type { Page } from '@playwright/test';

export interface ShownFile {
  path: string;
  oid: string;
}

export async function watchShownFiles(page: Page): Promise<void> {
  await page.evaluate(() => {
    const seen: { path: string; oid: string }[] = [];
    (window as unknown as { shownFiles: typeof seen }).shownFiles = seen;
    const look = () => {
      for (const view of document.querySelectorAll('section.file-view')) {
        const path = (view.getAttribute('aria-label') ?? '').replace(/^File /, '');
        const oid = view.querySelector('[data-testid="file-oid"]')?.textContent ?? '';
        const last = seen.at(-1);
        if (oid && (last?.path !== path || last.oid !== oid)) seen.push({ path, oid });
      }
    };
    new MutationObserver(look).observe(document.body, {
      subtree: true,
      childList: true,
      characterData: true,
      attributes: true,
      attributeFilter: ['aria-label'],
    });
  });
}

/** The file views seen since watchShownFiles whose blob id is not the one `oidOf` gives for their path. */
export async function mislabelledFiles(
  page: Page,
  oidOf: (path: string) => string | undefined,
): Promise<ShownFile[]> {
  const seen = await page.evaluate(() => (window as unknown as { shownFiles: ShownFile[] }).shownFiles);
  return seen.filter((s) => !(oidOf(s.path) ?? '').startsWith(s.oid));
}
