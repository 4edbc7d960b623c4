import { useEffect, useState } from 'preact/hooks';
import { noteNavigation } from './focus.ts';

/**
 * The app's address is its state, so every view is a link that survives reloads and can be shared:
 * `?repo=<remote url>&ref=<branch|tag|commit>&path=<file or folder>&commit=<oid>`, a file's
 * `&view=history|blame|edit`, the repository's history (`view=history` without a path), its working
 * tree (`view=changes`), `&compare=<a>...<b>`, and `#L10-L20`. `repo` is the remote's URL, never this
 * browser's id for it, so the address opens the same place in any browser (a stored id, from older
 * links, is still read).
 */
export type PathViewKind = 'history' | 'blame' | 'edit' | 'changes';

const VIEWS: readonly string[] = ['history', 'blame', 'edit', 'changes'];

export interface Route {
  repo: string | null;
  ref: string | null;
  path: string;
  commit: string | null;
  view: PathViewKind | null;
  compare: string | null;
}

function readView(value: string | null): PathViewKind | null {
  return value !== null && VIEWS.includes(value) ? (value as PathViewKind) : null;
}

export function parseRoute(search: string): Route {
  const q = new URLSearchParams(search);
  return {
    repo: q.get('repo'),
    ref: q.get('ref'),
    path: q.get('path') ?? '',
    commit: q.get('commit'),
    view: readView(q.get('view')),
    compare: q.get('compare'),
  };
}

function read(): Route {
  return parseRoute(location.search);
}

/**
 * The address of `route` over `base`. Going to another path or commit leaves a file's history or blame
 * view and a comparison unless they are asked for again.
 */
export function routeHref(route: Partial<Route>, base: Route = read(), pathname = location.pathname): string {
  const moves = 'path' in route || 'commit' in route || 'repo' in route;
  const next = { ...base, ...(moves ? { view: null, compare: null } : {}), ...route };
  const q = new URLSearchParams();
  if (next.repo) {
    q.set('repo', next.repo);
    if (next.ref) q.set('ref', next.ref);
    if (next.path) q.set('path', next.path);
    if (next.commit) q.set('commit', next.commit);
    if (next.view) q.set('view', next.view);
    if (next.compare) q.set('compare', next.compare);
  }
  const search = q.toString();
  return `${pathname}${search ? `?${search}` : ''}`;
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
    const onPop = () => {
      noteNavigation();
      setRoute(read());
    };
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

/** `a...b` (or `a..b`) of `?compare=` as its two refs. */
export function parseCompare(value: string): { base: string; head: string } | null {
  const m = /^(.+?)\.{2,3}(.+)$/.exec(value);
  return m ? { base: m[1], head: m[2] } : null;
}
