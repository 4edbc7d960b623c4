import { useEffect, useState } from 'preact/hooks';

/** The app's address is its state: `?repo=<id>&path=<dir>` survives reloads and is shareable. */
export interface Route {
  repo: string | null;
  path: string;
}

function read(): Route {
  const q = new URLSearchParams(location.search);
  return { repo: q.get('repo'), path: q.get('path') ?? '' };
}

export function navigate(route: Partial<Route>, replace = false): void {
  const next = { ...read(), ...route };
  const q = new URLSearchParams();
  if (next.repo) q.set('repo', next.repo);
  if (next.repo && next.path) q.set('path', next.path);
  const url = `${location.pathname}${q.size ? `?${q}` : ''}`;
  if (replace) history.replaceState(null, '', url);
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
