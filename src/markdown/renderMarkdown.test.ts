import { describe, expect, it } from 'vitest';
import { slugger } from './markdownHtml.ts';
import { resolveRepoPath } from './renderMarkdown.ts';

describe('resolveRepoPath', () => {
  it.each([
    ['README.md', 'docs/guide.md', 'docs/guide.md', ''],
    ['docs/guide.md', '../img/logo.png', 'img/logo.png', ''],
    ['docs/guide.md', './install.md#step-2', 'docs/install.md', '#step-2'],
    ['docs/a/b.md', '/README.md', 'README.md', ''],
    ['docs/guide.md', 'my%20file.md?plain=1', 'docs/my file.md', ''],
  ])('from %s, %s is %s', (from, target, path, hash) => {
    expect(resolveRepoPath(from, target)).toEqual({ path, hash });
  });

  it('refuses a path that climbs out of the repository', () => {
    expect(resolveRepoPath('README.md', '../outside.md')).toBeNull();
    expect(resolveRepoPath('a/b.md', '../../../x')).toBeNull();
  });
});

describe('slugger', () => {
  it('makes GitHub heading ids, numbering repeats', () => {
    const slug = slugger();
    expect(slug('Second heading')).toBe('second-heading');
    expect(slug('What’s new? (v2.0)')).toBe('whats-new-v20');
    expect(slug('Second heading')).toBe('second-heading-1');
  });
});
