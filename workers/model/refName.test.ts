import { spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { explainRefNameProblem, isValidRefName, type RefNameProblem, refNameProblem } from './refName.ts';

// One case per rule of git-check-ref-format(1), in its order, and the code we give it.
const RULES: [rule: string, name: string, problem: RefNameProblem][] = [
  ['1: no component begins with a dot', 'refs/heads/.hidden', 'COMPONENT_STARTS_WITH_DOT'],
  ['1: the component "." itself', 'refs/./heads', 'COMPONENT_STARTS_WITH_DOT'],
  ['1: no component ends with .lock', 'refs/heads/main.lock', 'COMPONENT_ENDS_WITH_LOCK'],
  ['1: .lock in the middle', 'refs/heads/x.lock/y', 'COMPONENT_ENDS_WITH_LOCK'],
  ['2: at least one slash', 'main', 'ONE_LEVEL'],
  ['3: no ".."', 'refs/heads/a..b', 'DOUBLE_DOT'],
  ['3: ".." as a component (path traversal)', 'refs/heads/../../config', 'DOUBLE_DOT'],
  ['4: no control character', 'refs/heads/a\tb', 'CONTROL_CHARACTER'],
  ['4: no line feed', 'refs/heads/a\nb', 'CONTROL_CHARACTER'],
  ['4: no DEL', 'refs/heads/a\x7fb', 'CONTROL_CHARACTER'],
  ['4: no NUL', 'refs/heads/a\0b', 'CONTROL_CHARACTER'],
  ['4: no space', 'refs/heads/a b', 'FORBIDDEN_CHARACTER'],
  ['4: no tilde', 'refs/heads/a~1', 'FORBIDDEN_CHARACTER'],
  ['4: no caret', 'refs/heads/a^', 'FORBIDDEN_CHARACTER'],
  ['4: no colon', 'refs/heads/a:b', 'FORBIDDEN_CHARACTER'],
  ['5: no question mark', 'refs/heads/a?', 'GLOB_CHARACTER'],
  ['5: no asterisk', 'refs/heads/*', 'GLOB_CHARACTER'],
  ['5: no open bracket', 'refs/heads/a[b', 'GLOB_CHARACTER'],
  ['6: does not begin with a slash', '/refs/heads/a', 'EMPTY_COMPONENT'],
  ['6: does not end with a slash', 'refs/heads/a/', 'EMPTY_COMPONENT'],
  ['6: no consecutive slashes', 'refs/heads//a', 'EMPTY_COMPONENT'],
  ['7: does not end with a dot', 'refs/heads/a.', 'ENDS_WITH_DOT'],
  ['8: no "@{"', 'refs/heads/a@{1}', 'AT_BRACE'],
  ['9: not "@" alone', '@', 'AT_ONLY'],
  ['10: no backslash', 'refs/heads/a\\b', 'BACKSLASH'],
];

const VALID = [
  'refs/heads/main',
  'refs/heads/feature/x-1',
  'refs/tags/v1.0',
  'refs/heads/a.b',
  'refs/heads/@',
  'refs/heads/a@b',
  'refs/heads/a{b}',
  'refs/heads/lock',
  'refs/heads/x.locks',
  'refs/heads/ünïcødé',
  'refs/heads/a"b',
  'refs/heads/a]b',
  'refs/heads/-dash',
  'refs/heads/a#b;c',
  // Two components are enough (rule 2 asks for one slash): `refs/stash`, `heads/main`.
  'refs/stash',
  'heads/main',
];

describe('refNameProblem: one rule of git-check-ref-format at a time', () => {
  for (const [rule, name, problem] of RULES) {
    it(`rule ${rule}: ${JSON.stringify(name)} is ${problem}`, () => {
      expect(refNameProblem(name)).toBe(problem);
    });
  }

  it('an empty name', () => {
    expect(refNameProblem('')).toBe('EMPTY');
  });

  it('one-level names only where allowed, as --allow-onelevel', () => {
    expect(refNameProblem('HEAD')).toBe('ONE_LEVEL');
    expect(refNameProblem('HEAD', { allowOneLevel: true })).toBeNull();
  });

  it('accepts well-formed names, quotes and brackets that config files care about included', () => {
    for (const name of VALID) expect(refNameProblem(name), name).toBeNull();
  });

  it('isValidRefName says the same, and every refusal is explained in words naming what is wrong', () => {
    for (const name of VALID) expect(isValidRefName(name), name).toBe(true);
    for (const [, name] of RULES) expect(isValidRefName(name), name).toBe(false);
    expect(isValidRefName('HEAD', { allowOneLevel: true })).toBe(true);
    expect(explainRefNameProblem('DOUBLE_DOT')).toBe('it contains ".."');
    for (const [, , problem] of RULES) expect(explainRefNameProblem(problem)).toMatch(/\bit\b/);
  });

  it('refuses the injected-config branch name of issue 9', () => {
    expect(refNameProblem('refs/heads/x"]\n\t[core]\n\tfsmonitor = evil')).not.toBeNull();
    expect(refNameProblem('refs/heads/x"]\t[core]')).toBe('CONTROL_CHARACTER');
  });
});

describe('refNameProblem agrees with `git check-ref-format` on every case', () => {
  // NUL cannot be passed as an argument; every other case goes to git as it is.
  const cases = [
    ...RULES.map(([, name]) => name),
    ...VALID,
    '',
    'HEAD',
    'refs/heads/a/.',
    'refs/heads/.',
  ].filter((name) => !name.includes('\0'));
  it.each(cases.map((name) => [JSON.stringify(name), name]))('%s', (_, name) => {
    const git = spawnSync('git', ['check-ref-format', name], { encoding: 'utf8' });
    expect(git.error).toBeUndefined();
    expect(refNameProblem(name) === null).toBe(git.status === 0);
  });
});
