import { spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { checkBranchName } from './branches.ts';

// Every rule of git-check-ref-format(1), as a branch name, and what `--branch` adds (HEAD, a leading dash).
const NAMES = [
  'main',
  'feature/x-1',
  'a.b',
  'ünïcødé',
  'a@b',
  'x.locks',
  '.hidden',
  'a/.x',
  'main.lock',
  'x.lock/y',
  'a..b',
  '../../config',
  'a\tb',
  'a\x7fb',
  'a b',
  'a~1',
  'a^',
  'a:b',
  'a?',
  '*',
  'a[b',
  '/a',
  'a/',
  'a//b',
  'a.',
  'a@{1}',
  'a\\b',
  '',
  'HEAD',
  '-x',
  '@{-1}',
];

describe('checkBranchName agrees with `git check-ref-format --branch`', () => {
  it.each(NAMES.map((name) => [JSON.stringify(name), name]))('%s', (_, name) => {
    const git = spawnSync('git', ['check-ref-format', '--branch', name], { encoding: 'utf8', cwd: '/' });
    expect(git.error).toBeUndefined();
    const ours = (() => {
      try {
        checkBranchName(name);
        return true;
      } catch {
        return false;
      }
    })();
    expect(ours).toBe(git.status === 0);
  });

  it('refuses "@", which git reads as HEAD', () => {
    expect(() => checkBranchName('@')).toThrow(/not a valid branch name/);
  });
});
