import type { Page } from '@playwright/test';

/**
 * In-app navigation, as a link in the app does it: the address changes without a reload (the page and its
 * worker live on) and the app's router hears a popstate. `params` are set on the current query, or make
 * the whole query with `replace`.
 */
export async function spaNavigate(
  page: Page,
  params: Record<string, string>,
  opts: { replace?: boolean } = {},
): Promise<void> {
  await page.evaluate(
    ([p, replace]) => {
      const u = new URL(location.href);
      if (replace) u.search = '';
      for (const [k, v] of Object.entries(p)) u.searchParams.set(k, v);
      history.pushState(null, '', u);
      window.dispatchEvent(new PopStateEvent('popstate'));
    },
    [params, opts.replace ?? false] as const,
  );
}
