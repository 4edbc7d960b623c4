import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { parseLineAnchor, parseRoute, type Route, routeHref } from './route.ts';

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
  const empty: Route = { repo: null, ref: null, path: '', commit: null, view: null, compare: null };
  beforeEach(() => {
    vi.stubGlobal('location', { pathname: '/blobless/', search: '' });
  });
  afterEach(() => {
    vi.unstubAllGlobals();
  });

  /** What the app reads back from an address: parseRoute, as the app reads location.search. */
  const readBack = (href: string): Route => {
    const url = new URL(href, 'https://app.example');
    expect(url.pathname).toBe('/blobless/');
    return parseRoute(url.search);
  };

  it('round-trips every field, whatever characters they hold', () => {
    const route: Route = {
      repo: 'https://git.example/a b/ré&po.git?x=1#frag',
      ref: 'feature/x+y',
      path: 'docs/with space/ünïcødé – файл.txt',
      commit: '0123456789abcdef0123456789abcdef01234567',
      view: 'blame',
      compare: 'v1.0...main',
    };
    expect(readBack(routeHref(route, empty))).toEqual(route);
  });

  it('is the bare page without a repo: ref, path and commit mean nothing alone', () => {
    expect(routeHref({ ref: 'main', path: 'src', commit: 'abc' }, empty)).toBe('/blobless/');
  });

  it('changes only the fields given; another path, commit or repo leaves a history view and a comparison', () => {
    const base: Route = {
      repo: 'https://git.example/r.git',
      ref: 'main',
      path: 'src/a.ts',
      commit: null,
      view: 'history',
      compare: 'a...b',
    };
    expect(readBack(routeHref({ ref: 'dev' }, base))).toEqual({ ...base, ref: 'dev' });
    expect(readBack(routeHref({ path: 'README.md' }, base))).toEqual({
      ...base,
      path: 'README.md',
      view: null,
      compare: null,
    });
    expect(readBack(routeHref({ commit: 'c0ffee' }, base))).toEqual({
      ...base,
      commit: 'c0ffee',
      view: null,
      compare: null,
    });
    expect(readBack(routeHref({ path: 'README.md', view: 'blame' }, base))).toEqual({
      ...base,
      path: 'README.md',
      view: 'blame',
      compare: null,
    });
    expect(readBack(routeHref({ repo: null }, base))).toEqual(empty);
  });

  it('reads the current route from the address when no base is given', () => {
    vi.stubGlobal('location', { pathname: '/blobless/', search: '?repo=r1&ref=v1.0&path=a%2Fb&view=bogus' });
    expect(readBack(routeHref({ ref: 'c0ffee' }))).toEqual({
      ...empty,
      repo: 'r1',
      ref: 'c0ffee',
      path: 'a/b',
    });
  });
});
