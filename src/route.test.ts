import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { parseLineAnchor, type Route, routeHref } from './route.ts';

describe('parseLineAnchor', () => {
  it.each([
    ['#L10', { from: 10, to: 10 }],
    ['#L10-L20', { from: 10, to: 20 }],
    ['#L20-L10', { from: 10, to: 20 }],
    ['#L1', { from: 1, to: 1 }],
  ])('%s is lines %j', (hash, range) => {
    expect(parseLineAnchor(hash)).toEqual(range);
  });

  it.each(['', '#', '#L', '#l10', '#L10-', '#L10-20', '#L10-L', '#Lx', '#L10-L20x', 'L10', '#L10 '])(
    '%j is no range',
    (hash) => {
      expect(parseLineAnchor(hash)).toBeNull();
    },
  );
});

describe('routeHref', () => {
  const empty: Route = { repo: null, ref: null, path: '', commit: null };
  beforeEach(() => {
    vi.stubGlobal('location', { pathname: '/blobless/', search: '' });
  });
  afterEach(() => {
    vi.unstubAllGlobals();
  });

  /** What the app reads back from an address: the same URLSearchParams the route is read with. */
  const readBack = (href: string): Route => {
    const url = new URL(href, 'https://app.example');
    const q = url.searchParams;
    expect(url.pathname).toBe('/blobless/');
    return { repo: q.get('repo'), ref: q.get('ref'), path: q.get('path') ?? '', commit: q.get('commit') };
  };

  it('round-trips every field, whatever characters they hold', () => {
    const route: Route = {
      repo: 'https://git.example/a b/ré&po.git?x=1#frag',
      ref: 'feature/x+y',
      path: 'docs/with space/ünïcødé – файл.txt',
      commit: '0123456789abcdef0123456789abcdef01234567',
    };
    expect(readBack(routeHref(route, empty))).toEqual(route);
  });

  it('is the bare page without a repo: ref, path and commit mean nothing alone', () => {
    expect(routeHref({ ref: 'main', path: 'src', commit: 'abc' }, empty)).toBe('/blobless/');
  });

  it('changes only the fields given, keeping the rest of the current route', () => {
    const base: Route = { repo: 'https://git.example/r.git', ref: 'main', path: 'src/a.ts', commit: null };
    expect(readBack(routeHref({ path: 'README.md' }, base))).toEqual({ ...base, path: 'README.md' });
    expect(readBack(routeHref({ path: '', ref: 'dev' }, base))).toEqual({ ...base, path: '', ref: 'dev' });
    expect(readBack(routeHref({ repo: null }, base))).toEqual(empty);
  });

  it('reads the current route from the address when no base is given', () => {
    vi.stubGlobal('location', { pathname: '/blobless/', search: '?repo=r1&ref=v1.0&path=a%2Fb' });
    expect(readBack(routeHref({ commit: 'c0ffee' }))).toEqual({
      repo: 'r1',
      ref: 'v1.0',
      path: 'a/b',
      commit: 'c0ffee',
    });
  });
});
