import { describe, expect, it } from 'vitest';
import { DEFAULT_FETCH_REFSPEC, formatRefspec, mapRef, parseRefspec, type Refspec } from './refspec.ts';

describe('refspecs', () => {
  it('parses the clone default, and formats it back as git writes it', () => {
    const r = parseRefspec(DEFAULT_FETCH_REFSPEC);
    expect(r).toEqual({
      force: true,
      srcPrefix: 'refs/heads/',
      dstPrefix: 'refs/remotes/origin/',
      pattern: true,
    });
    expect(formatRefspec(r!)).toBe(DEFAULT_FETCH_REFSPEC);
  });

  it('round-trips exact and unforced refspecs', () => {
    for (const spec of ['+refs/heads/main:refs/remotes/origin/main', 'refs/tags/*:refs/tags/*'])
      expect(formatRefspec(parseRefspec(spec)!)).toBe(spec);
  });

  it('refuses what it does not handle: a one-sided, a star on one side, a star inside a name', () => {
    for (const spec of [
      'refs/heads/main',
      'refs/heads/*:refs/remotes/origin/main',
      'refs/heads/a*:refs/x/a*',
      'refs/heads/main:refs/remotes/origin/*',
      // A line break would end the config line it is written to (the value must be all of the line).
      '+refs/heads/*:refs/remotes/origin/*\n[core]',
      // An empty source (git's delete refspec) is not taken for whatever follows it.
      ':refs/heads/*:refs/remotes/origin/*',
      '',
    ])
      expect(parseRefspec(spec), spec).toBeNull();
  });

  it('reads a refspec as a config value is read, without the blanks around it', () => {
    expect(parseRefspec(` \t${DEFAULT_FETCH_REFSPEC} `)).toEqual(parseRefspec(DEFAULT_FETCH_REFSPEC));
  });

  it('maps a remote ref through every refspec that matches it, each local name once', () => {
    // git 2.39, remote.origin.fetch the default and `+refs/heads/main:refs/remotes/mirror/main`: `git fetch`
    // says "0735707..b7f2d6b main -> origin/main" and "* [new branch] main -> mirror/main".
    const specs = [
      '+refs/heads/main:refs/remotes/up/main',
      DEFAULT_FETCH_REFSPEC,
      'refs/heads/*:refs/remotes/origin/*',
    ].map((s) => parseRefspec(s) as Refspec);
    expect(mapRef(specs, 'refs/heads/main')).toEqual(['refs/remotes/up/main', 'refs/remotes/origin/main']);
    expect(mapRef(specs, 'refs/heads/topic/x')).toEqual(['refs/remotes/origin/topic/x']);
    expect(mapRef(specs, 'refs/heads/mainline')).toEqual(['refs/remotes/origin/mainline']);
    expect(mapRef(specs, 'refs/tags/v1')).toEqual([]);
  });
});
