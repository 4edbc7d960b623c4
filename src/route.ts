import { useEffect, useState } from 'preact/hooks';

/**
 * The app's address is its state, so every view is a link that survives reloads and can be shared:
 * `?repo=<url or stored id>&ref=<branch|tag|commit>&path=<file or folder>&commit=<oid>` and `#L10-L20`.
 */
export interface Route {
  repo: string | null;
  ref: string | null;
  path: string;
  commit: string | null;
}

function read(): Route {
  const q = new URLSearchParams(location.search);
  return { repo: q.get('repo'), ref: q.get('ref'), path: q.get('path') ?? '', commit: q.get('commit') };
}

export function routeHref(route: Partial<Route>, base: Route = read()): string {
  const next = { ...base, ...route };
  const q = new URLSearchParams();
  if (next.repo) {
    q.set('repo', next.repo);
    if (next.ref) q.set('ref', next.ref);
    if (next.path) q.set('path', next.path);
    if (next.commit) q.set('commit', next.commit);
  }
  const search = q.toString();
  return `${location.pathname}${search ? `?${search}` : ''}`;
}

export function navigate(route: Partial<Route>, opts: { replace?: boolean; hash?: string } = {}): void {
  const url = routeHref(route) + (opts.hash ?? '');
  if (opts.replace) history.replaceState(null, '', url);
  else history.pushState(null, '', url);
  window.dispatchEvent(new PopStateEvent('popstate'));
}

export function useRoute(): Route {
  const [route, setRoute] = useState(read);
  useEffect(() => {
    const onPop = () => setRoute(read());
    window.addEventListener('popstate', onPop);
    return () => window.removeEventListener('popstate', onPop);
  }, []);
  return route;
}

/** `#L10` or `#L10-L20` as a 1-based inclusive range. */
export function parseLineAnchor(hash: string): { from: number; to: number } | null {
  const m = /^#L(\d+)(?:-L(\d+))?$/.exec(hash);
  if (!m) return null;
  const from = Number(m[1]);
  const to = m[2] ? Number(m[2]) : from;
  return { from: Math.min(from, to), to: Math.max(from, to) };
}
