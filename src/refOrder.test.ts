import { describe, expect, it } from 'vitest';
import { compareVersions, filterRefs, sortBranches, sortTags } from './refOrder.ts';

describe('sortTags', () => {
  it('orders versions by their numbers, newest first, a pre-release before its release', () => {
    const tags = [
      '4.2.0',
      '4.10.0',
      'v5.1.1',
      '4.9.1',
      '5.0.0',
      '5.0.0-beta.1',
      '4.19.2',
      '5.0.0-beta.2',
      '4.10.0.1',
    ];
    expect(sortTags(tags)).toEqual([
      'v5.1.1',
      '5.0.0',
      '5.0.0-beta.2',
      '5.0.0-beta.1',
      '4.19.2',
      '4.10.0.1',
      '4.10.0',
      '4.9.1',
      '4.2.0',
    ]);
  });

  it('orders names that are not versions by name, after every version', () => {
    expect(compareVersions('release', 'release')).toBe(0);
    expect(Math.sign(compareVersions('alpha', 'beta'))).toBe(-1);
    expect(sortTags(['latest', '1.0', 'alpha'])).toEqual(['1.0', 'latest', 'alpha']);
  });
});

describe('sortBranches', () => {
  it('puts the default branch first', () => {
    expect(sortBranches(['4.x', 'master', 'feature/a', '3.x'], 'master')).toEqual([
      'master',
      '3.x',
      '4.x',
      'feature/a',
    ]);
    expect(sortBranches(['b', 'a'], null)).toEqual(['a', 'b']);
  });
});

describe('filterRefs', () => {
  it('finds a version by what is typed, prefixes first', () => {
    expect(filterRefs(['5.1.0', '4.19.2', '4.19.1', '4.1.9', 'v4.19.0-rc'], '4.19')).toEqual([
      '4.19.2',
      '4.19.1',
      'v4.19.0-rc',
    ]);
    expect(filterRefs(['a', 'b'], '  ')).toEqual(['a', 'b']);
  });
});
