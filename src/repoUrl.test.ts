import { describe, expect, it } from 'vitest';
import { expandRepoUrl, sameRemote } from './repoUrl.ts';

describe('expandRepoUrl', () => {
  it.each([
    ['https://github.com/expressjs/express', 'https://github.com/expressjs/express'],
    ['  http://127.0.0.1:8081/features.git ', 'http://127.0.0.1:8081/features.git'],
    ['github.com/expressjs/express', 'https://github.com/expressjs/express'],
    ['gitlab.com/group/sub/project.git', 'https://gitlab.com/group/sub/project.git'],
    ['codeberg.org/forgejo/forgejo', 'https://codeberg.org/forgejo/forgejo'],
    ['expressjs/express', 'https://github.com/expressjs/express'],
    ['lodash/lodash.js', 'https://github.com/lodash/lodash.js'],
    ['git@github.com:expressjs/express.git', 'https://github.com/expressjs/express.git'],
  ])('%j is %j', (input, url) => {
    expect(expandRepoUrl(input)).toBe(url);
  });

  it.each(['express', 'not a url', 'ssh://git@host/x.git', 'a/b/c'])(
    '%j is left for the worker to refuse',
    (input) => {
      expect(expandRepoUrl(input)).toBe(input.trim());
    },
  );
});

describe('sameRemote', () => {
  it('ignores .git, a trailing slash and the host’s case', () => {
    expect(sameRemote('https://GitHub.com/a/b.git', 'https://github.com/a/b/')).toBe(true);
    expect(sameRemote('https://github.com/a/b', 'https://github.com/a/c')).toBe(false);
    expect(sameRemote('http://h/a', 'https://h/a')).toBe(false);
  });
});
