import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import {
  checkSymlinkTargets,
  checkTree,
  isDotGit,
  isDotGitmodules,
  longerThanUtf8,
  SymlinkChecker,
  type TreeCheck,
} from './treeCheck.ts';

const OID = 'ab'.repeat(20);
const enc = new TextEncoder();

type Entry = [mode: string, name: string | Uint8Array, oid?: string];

/** Tree bytes exactly as listed: no sorting, no checks (what a hostile server can send). */
function treeBytes(entries: Entry[]): Uint8Array {
  const parts: number[] = [];
  for (const [mode, name, oid = OID] of entries) {
    parts.push(...enc.encode(`${mode} `), ...(typeof name === 'string' ? enc.encode(name) : name), 0);
    for (let i = 0; i < 40; i += 2) parts.push(Number.parseInt(oid.slice(i, i + 2), 16));
  }
  return new Uint8Array(parts);
}

const concatBytes = (parts: Uint8Array[]) => new Uint8Array(parts.flatMap((part) => [...part]));

const check = (entries: Entry[]) => checkTree(treeBytes(entries)).problem;

describe('checkTree accepts what git writes', () => {
  it('parses a tree git made, entries in order, tree modes as 040000', () => {
    const dir = mkdtempSync(join(tmpdir(), 'treecheck-'));
    afterAll(() => rmSync(dir, { recursive: true, force: true }));
    execFileSync('git', ['init', '-q', '--bare', dir]);
    const blob = execFileSync('git', ['hash-object', '-w', '--stdin'], { cwd: dir, input: 'x' })
      .toString()
      .trim();
    const listing = [
      `100644 blob ${blob}\ta.c`,
      `040000 tree 4b825dc642cb6eb9a060e54bf8d69288fbee4904\ta`,
      `100755 blob ${blob}\trun.sh`,
      `120000 blob ${blob}\tlink`,
      `160000 commit ${OID}\tsub`,
      `100644 blob ${blob}\t.gitmodules`,
      `100644 blob ${blob}\tünï`,
    ].join('\n');
    const tree = execFileSync('git', ['mktree', '--missing'], { cwd: dir, input: `${listing}\n` })
      .toString()
      .trim();
    const bytes = execFileSync('git', ['cat-file', 'tree', tree], { cwd: dir });
    const { entries, problem } = checkTree(new Uint8Array(bytes));
    expect(problem).toBeNull();
    expect(entries.map((e) => `${e.mode} ${e.name}`)).toEqual([
      '100644 .gitmodules',
      '100644 a.c',
      '040000 a',
      '120000 link',
      '100755 run.sh',
      '160000 sub',
      '100644 ünï',
    ]);
    expect(entries[0].oid).toBe(blob);
  });

  it('an empty tree is fine', () => {
    expect(checkTree(new Uint8Array(0))).toEqual({ entries: [], problem: null });
  });

  it('a zero-padded tree mode (040000) is accepted, as git fsck only warns', () => {
    expect(check([['040000', 'dir']])).toBeNull();
  });

  it('names git allows: ".gitignore", ".github", "git~0", "...x", ".g\\u00c5it"', () => {
    expect(
      check([
        ['100644', '...x'],
        ['100644', '.github'],
        ['100644', '.gitignore'],
        ['100644', '.g\u00c5it'],
        ['100644', 'git~0'],
      ]),
    ).toBeNull();
  });
});

describe('checkTree refuses, one code per check', () => {
  const cases: [TreeCheck, string, Entry[]][] = [
    ['EMPTY_NAME', 'an empty name', [['100644', '']]],
    ['FULL_PATHNAME', 'a name holding "/"', [['100644', 'a/b']]],
    ['HAS_BACKSLASH', 'a name holding "\\"', [['100644', 'a\\b']]],
    ['HAS_DOT', '"."', [['40000', '.']]],
    ['HAS_DOTDOT', '".."', [['40000', '..']]],
    ['NTFS_DOT_ALIAS', '"..." (Windows reads it as "..")', [['40000', '...']]],
    ['NTFS_DOT_ALIAS', '". " (Windows reads it as ".")', [['40000', '. ']]],
    ['HAS_DOTGIT', '".git"', [['40000', '.git']]],
    ['HAS_DOTGIT', '".GiT" (any case)', [['40000', '.GiT']]],
    ['HAS_DOTGIT', '".g\\u200cit" (HFS+ ignores U+200C)', [['40000', '.g\u200cit']]],
    ['HAS_DOTGIT', '"\\ufeff.git" (HFS+ ignores the BOM)', [['40000', '\ufeff.git']]],
    ['HAS_DOTGIT', '"git~1" (NTFS short name)', [['40000', 'git~1']]],
    ['HAS_DOTGIT', '"GIT~4" (isomorphic-git refuses ~1 to ~9)', [['40000', 'GIT~4']]],
    ['HAS_DOTGIT', '".git " (NTFS drops trailing spaces)', [['40000', '.git ']]],
    ['HAS_DOTGIT', '".git.." (NTFS drops trailing dots)', [['40000', '.git..']]],
    ['HAS_DOTGIT', '".git::$INDEX_ALLOCATION" (NTFS stream)', [['40000', '.git::$INDEX_ALLOCATION']]],
    [
      'DUPLICATE_ENTRIES',
      'the same name twice',
      [
        ['100644', 'a'],
        ['100644', 'a'],
      ],
    ],
    [
      'DUPLICATE_ENTRIES',
      'a file and a folder of one name, apart',
      [
        ['100644', 'x'],
        ['100644', 'x.1'],
        ['40000', 'x'],
      ],
    ],
    [
      'DUPLICATE_ENTRIES',
      'two invalid UTF-8 names that decode alike',
      [
        ['100644', new Uint8Array([0xfe])],
        ['100644', new Uint8Array([0xff])],
      ],
    ],
    [
      'TREE_NOT_SORTED',
      'names out of order',
      [
        ['100644', 'b'],
        ['100644', 'a'],
      ],
    ],
    [
      'TREE_NOT_SORTED',
      'a folder before a file it sorts after ("a/" > "a.c")',
      [
        ['40000', 'a'],
        ['100644', 'a.c'],
      ],
    ],
    ['BAD_FILEMODE', 'mode 100664', [['100664', 'a']]],
    ['BAD_FILEMODE', 'mode 777', [['777', 'a']]],
    ['GITMODULES_SYMLINK', 'a symlinked .gitmodules', [['120000', '.gitmodules']]],
    ['GITMODULES_SYMLINK', 'a symlinked ".GITMODULES "', [['120000', '.GITMODULES ']]],
    ['GITMODULES_SYMLINK', 'a symlinked "gitmod~1" (NTFS short name)', [['120000', 'gitmod~1']]],
    ['GITMODULES_SYMLINK', 'a symlinked "GI7EBA~9" (NTFS fallback short name)', [['120000', 'GI7EBA~9']]],
    ['GITMODULES_SYMLINK', 'a symlinked ".gitmodu\\u200dles" (HFS+)', [['120000', '.gitmodu\u200dles']]],
    ['GITMODULES_SYMLINK', 'a symlinked "~1234567" (git\'s 8.3 fallback pattern)', [['120000', '~1234567']]],
  ];
  it.each(cases)('%s: %s', (code, _what, entries) => {
    expect(check(entries)?.check).toBe(code);
  });

  it('names the offending entry, and reports the first problem in entry order', () => {
    const problem = check([
      ['100644', 'ok'],
      ['40000', 'x'],
      ['120000', ''],
    ]);
    expect(problem).toMatchObject({ check: 'EMPTY_NAME', name: '' });
    expect(
      check([
        ['100644', '.git '],
        ['100644', ''],
      ]),
    ).toMatchObject({ check: 'HAS_DOTGIT', name: '.git ' });
  });

  it('shows invisible characters escaped in the message', () => {
    expect(check([['40000', '.g\u200cit']])?.detail).toContain('".g\\u200cit"');
  });
});

describe('checkTree: maxTreeEntries', () => {
  const names = (n: number): Entry[] =>
    Array.from({ length: n }, (_, i) => ['100644', `f${String(i).padStart(4, '0')}`]);

  it('a tree of exactly the limit passes; one more entry is TREE_TOO_WIDE, parsed no further', () => {
    expect(checkTree(treeBytes(names(5)), true, 5).problem).toBeNull();
    const over = checkTree(treeBytes(names(6)), true, 5);
    expect(over.problem).toMatchObject({ check: 'TREE_TOO_WIDE', name: '' });
    expect(over.problem?.detail).toContain('5 entries (maxTreeEntries)');
    expect(over.entries.length).toBe(5);
  });

  it('holds when only parsing (a tree checked before under other limits)', () => {
    expect(checkTree(treeBytes(names(6)), false, 5).problem?.check).toBe('TREE_TOO_WIDE');
  });

  it('an earlier problem is still the one reported', () => {
    const entries: Entry[] = [['100644', '.git'], ...names(5)];
    expect(checkTree(treeBytes(entries), true, 3).problem?.check).toBe('HAS_DOTGIT');
  });
});

describe('checkTree(bytes, false): parse only, for a tree id checked before', () => {
  it('lists the entries without judging names', () => {
    const { entries, problem } = checkTree(
      treeBytes([
        ['40000', '.git'],
        ['100644', ''],
      ]),
      false,
    );
    expect(problem).toBeNull();
    expect(entries.map((e) => [e.mode, e.name])).toEqual([
      ['040000', '.git'],
      ['100644', ''],
    ]);
  });

  it('still refuses bytes that do not parse', () => {
    expect(checkTree(enc.encode('100644 a'), false).problem?.check).toBe('BAD_TREE');
  });
});

describe('checkTree: bytes that are not a tree are BAD_TREE', () => {
  it.each([
    ['a mode that is not octal', enc.encode(`10x644 a\0${'\x01'.repeat(20)}`)],
    ['an empty mode', enc.encode(` a\0${'\x01'.repeat(20)}`)],
    ['no NUL after the name', enc.encode('100644 a')],
    ['no space after the mode', enc.encode('100644')],
    ['a truncated object id', enc.encode(`100644 a\0${'\x01'.repeat(19)}`)],
    // A name cannot hold NUL: the first NUL ends it, and the rest no longer lines up.
    ['a NUL inside a name', enc.encode(`100644 a\0b\0${'\x01'.repeat(20)}`)],
  ])('%s', (_what, bytes) => {
    expect(checkTree(bytes).problem?.check).toBe('BAD_TREE');
  });
});

describe('isDotGit and isDotGitmodules', () => {
  it('match git: ".git" with trailing dots and spaces, not with other suffixes', () => {
    for (const name of ['.git', '.GIT', '.git.', '.git . ', 'git~1', '.git:x', '.\u200bgit']) {
      // U+200B is not HFS-ignorable: only the first six.
      expect([name, isDotGit(name)]).toEqual([name, name !== '.\u200bgit']);
    }
    for (const name of ['.gitx', '.git-x', 'git~10', 'xgit', '.gi'])
      expect([name, isDotGit(name)]).toEqual([name, false]);
  });

  it('.gitmodules spellings git checks, and names it lets through', () => {
    const is = (n: string) => isDotGitmodules(n, enc.encode(n));
    for (const n of [
      '.gitmodules',
      '.GitModules',
      '.gitmodules...',
      '.gitmodules:$DATA',
      'gitmod~2',
      'gi7eba~1',
    ]) {
      expect([n, is(n)]).toEqual([n, true]);
    }
    for (const n of ['.gitmodulesx', 'gitmod~5', 'gitmodules', '.gitmodule'])
      expect([n, is(n)]).toEqual([n, false]);
  });
});

describe('checkSymlinkTargets', () => {
  const problem = (links: Record<string, string>) => checkSymlinkTargets(new Map(Object.entries(links)));

  it('accepts links that stay inside and out of .git', () => {
    expect(
      problem({ a: 'b', 'docs/src': '../src', 'x/y/z': '../../x/./w', up: '.', 'd/dotgit': 'x.git' }),
    ).toBeNull();
  });

  it.each<[TreeCheck, Record<string, string>]>([
    ['SYMLINK_ABSOLUTE', { x: '/.git' }],
    ['SYMLINK_ABSOLUTE', { x: '/etc/passwd' }],
    ['SYMLINK_ABSOLUTE', { x: '\\\\server\\share' }],
    ['SYMLINK_ABSOLUTE', { x: 'C:x' }],
    ['SYMLINK_LEAVES_WORKTREE', { x: '..' }],
    ['SYMLINK_LEAVES_WORKTREE', { 'a/b': '../../x' }],
    ['SYMLINK_LEAVES_WORKTREE', { 'a/b': '..\\..\\x' }],
    ['SYMLINK_POINTS_TO_GIT_DIR', { x: '.git' }],
    ['SYMLINK_POINTS_TO_GIT_DIR', { 'a/x': '../.git/config' }],
    ['SYMLINK_POINTS_TO_GIT_DIR', { x: 'sub/../.GIT' }],
    ['SYMLINK_POINTS_TO_GIT_DIR', { x: 'git~1/hooks' }],
    // Each link alone stays inside; through the first, the second climbs out (or into .git).
    ['SYMLINK_LEAVES_WORKTREE', { here: '.', out: 'here/..' }],
    ['SYMLINK_LEAVES_WORKTREE', { 'd/l': '..', up: 'd/l/..' }],
    ['SYMLINK_LOOP', { a: 'b', b: 'a' }],
    ['SYMLINK_LOOP', { a: 'a/x' }],
  ])('%s: %j', (code, links) => {
    expect(problem(links)?.check).toBe(code);
  });

  it('names the link', () => {
    expect(problem({ ok: 'a', 'x/y': '../../.git' })).toMatchObject({
      path: 'x/y',
      check: 'SYMLINK_LEAVES_WORKTREE',
    });
  });

  it('names the link passed through on the way to an absolute path', () => {
    expect(problem({ 'a/b': 'c/d', 'a/c': '/etc' })).toMatchObject({
      path: 'a/b',
      check: 'SYMLINK_ABSOLUTE',
      detail: 'leads through "a/c" to "/etc".',
    });
  });

  it('SYMLINK_TOO_LONG past maxSymlinkTargetBytes (4,095 by default), counted in UTF-8 bytes', () => {
    expect(problem({ x: 'a'.repeat(4095) })).toBeNull();
    expect(problem({ x: 'a'.repeat(4096) })).toMatchObject({ path: 'x', check: 'SYMLINK_TOO_LONG' });
    // 1,365 three-byte characters fit in 4,095 bytes; one more does not, nor 2,048 two-byte ones.
    expect(problem({ x: '\u20ac'.repeat(1365) })).toBeNull();
    expect(problem({ x: '\u20ac'.repeat(1366) })?.check).toBe('SYMLINK_TOO_LONG');
    expect(problem({ x: '\u00e9'.repeat(2048) })?.check).toBe('SYMLINK_TOO_LONG');
    expect(problem({ x: '\u{1f600}'.repeat(1023) })).toBeNull();
    expect(problem({ x: '\u{1f600}'.repeat(1024) })?.check).toBe('SYMLINK_TOO_LONG');
    const links = new Map([['x', 'a'.repeat(100)]]);
    expect(checkSymlinkTargets(links, { maxSymlinkTargetBytes: 99 })?.check).toBe('SYMLINK_TOO_LONG');
  });

  it('a length problem comes before any walk: it is what bounds the walk', () => {
    expect(problem({ a: '..', z: 'b/'.repeat(3000) })).toMatchObject({
      path: 'z',
      check: 'SYMLINK_TOO_LONG',
    });
  });
});

describe('checkTree: what each problem says, for people', () => {
  it.each<[string, Entry[], TreeCheck, string, string]>([
    ['an empty name', [['100644', '']], 'EMPTY_NAME', '', 'An entry has an empty name.'],
    ['"/"', [['100644', 'a/b']], 'FULL_PATHNAME', 'a/b', '"a/b" holds "/".'],
    [
      '"\\"',
      [['100644', 'a\\b']],
      'HAS_BACKSLASH',
      'a\\b',
      '"a\\b" holds "\\", a folder separator on Windows.',
    ],
    ['"."', [['40000', '.']], 'HAS_DOT', '.', 'An entry is named ".".'],
    ['".."', [['40000', '..']], 'HAS_DOTDOT', '..', 'An entry is named "..".'],
    ['dots', [['40000', '. .']], 'NTFS_DOT_ALIAS', '. .', '". ." is read as "." or ".." by Windows.'],
    [
      '.git',
      [['40000', '.Git.']],
      'HAS_DOTGIT',
      '.Git.',
      '".Git." names the git directory on some file system.',
    ],
    ['a mode', [['100664', 'a']], 'BAD_FILEMODE', 'a', '"a" has mode 100664, which git does not write.'],
    [
      'a linked .gitmodules',
      [['120000', '.gitmodules']],
      'GITMODULES_SYMLINK',
      '.gitmodules',
      '".gitmodules" is a symbolic link; git refuses a linked .gitmodules.',
    ],
    [
      'twice',
      [
        ['100644', 'a'],
        ['100644', 'a'],
      ],
      'DUPLICATE_ENTRIES',
      'a',
      '"a" appears twice in the tree.',
    ],
    [
      'order',
      [
        ['100644', 'b'],
        ['100644', 'a'],
      ],
      'TREE_NOT_SORTED',
      'a',
      '"a" is out of git\'s tree order.',
    ],
  ])('%s', (_what, entries, code, name, detail) => {
    expect(check(entries)).toEqual({ check: code, name, detail });
  });

  it('BAD_TREE says where the tree broke off, and shows a bad mode printable, cut at 32 characters', () => {
    expect(checkTree(enc.encode('100644 a\0abc')).problem).toEqual({
      check: 'BAD_TREE',
      name: '',
      detail: 'The tree ends inside an entry (at byte 0 of 12).',
    });
    const second = concatBytes([treeBytes([['100644', 'a']]), enc.encode('100644 b')]);
    expect(checkTree(second).problem?.detail).toBe('The tree ends inside an entry (at byte 29 of 37).');
    // The NUL that ends an entry is the first after its space, not one inside the mode.
    expect(checkTree(enc.encode(`1\0 a\0${'\x01'.repeat(19)}`)).problem?.detail).toBe(
      'The tree ends inside an entry (at byte 0 of 24).',
    );
    expect(checkTree(enc.encode(`100644a\0${'\x01'.repeat(20)}`)).problem?.detail).toBe(
      'The tree ends inside an entry (at byte 0 of 28).',
    );
    expect(checkTree(enc.encode(`1\x0144 a\0${'\x01'.repeat(20)}`)).problem).toEqual({
      check: 'BAD_TREE',
      name: '',
      detail: 'An entry\'s mode "1?44" is not octal digits.',
    });
    expect(checkTree(treeBytes([['7'.repeat(33), 'a']])).problem?.detail).toBe(
      `An entry's mode "${'7'.repeat(32)}" is not octal digits.`,
    );
  });
});

describe('checkTree: the edges of each rule', () => {
  it('a mode is octal digits 0 to 7, at most 32 of them', () => {
    expect(check([[`${'0'.repeat(26)}100644`, 'a']])?.check).toBe('BAD_FILEMODE');
    expect(check([['7'.repeat(32), 'a']])?.check).toBe('BAD_FILEMODE');
    expect(check([['7'.repeat(33), 'a']])?.check).toBe('BAD_TREE');
    // The bytes just outside "0"-"7".
    for (const mode of ['100648', '10064/'])
      expect([mode, check([[mode, 'a']])?.check]).toEqual([mode, 'BAD_TREE']);
  });

  it('a tree whose last id ends the bytes exactly is whole; one byte more is not', () => {
    const whole = treeBytes([['100644', 'a']]);
    expect(checkTree(whole).problem).toBeNull();
    expect(checkTree(concatBytes([whole, Uint8Array.of(0x31)])).problem?.check).toBe('BAD_TREE');
  });

  it('decodes a name with a byte past ASCII as UTF-8, an invalid one as U+FFFD', () => {
    const { entries } = checkTree(
      treeBytes([
        ['100644', Uint8Array.of(0x61, 0x7f)],
        ['100644', Uint8Array.of(0x61, 0x80)],
        ['100644', enc.encode('a\u00e9')],
      ]),
    );
    expect(entries.map((e) => e.name)).toEqual(['a\u007f', 'a\ufffd', 'a\u00e9']);
  });

  it('gives each entry its own id, in entry order', () => {
    const ids = ['00'.repeat(20), '0123456789abcdef0123456789abcdef01234567', 'ff'.repeat(20)];
    const { entries } = checkTree(
      treeBytes([
        ['100644', 'a', ids[0]],
        ['100644', 'b', ids[1]],
        ['100644', 'c', ids[2]],
      ]),
    );
    expect(entries.map((e) => e.oid)).toEqual(ids);
  });

  it('names starting with a space or a dot may be Windows aliases of "." and ".."', () => {
    expect(check([['40000', ' ']])?.check).toBe('NTFS_DOT_ALIAS');
    expect(check([['40000', ' .']])?.check).toBe('NTFS_DOT_ALIAS');
    expect(check([['40000', ' x']])).toBeNull();
    expect(check([['40000', '.x .']])).toBeNull();
  });

  it('orders a folder as if its name ended in "/", a file as if it ended there', () => {
    // git mktree writes these orders; each swapped is TREE_NOT_SORTED.
    const ordered: Entry[][] = [
      [
        ['100644', 'a'],
        ['100644', 'a.c'],
      ],
      [
        ['100644', 'a.c'],
        ['40000', 'a'],
      ],
      [
        ['40000', 'a'],
        ['100644', 'a0'],
      ],
      [
        ['100644', 'a'],
        ['40000', 'a-'],
      ],
      [
        ['100644', 'ab'],
        ['100644', 'b'],
      ],
    ];
    for (const entries of ordered) {
      expect(check(entries)).toBeNull();
      expect(check([...entries].reverse())?.check).toBe('TREE_NOT_SORTED');
    }
  });
});

describe('checkSymlinkTargets: what each problem says', () => {
  const problem = (links: Record<string, string>) => checkSymlinkTargets(new Map(Object.entries(links)));

  it.each<[Record<string, string>, string, TreeCheck, string]>([
    [{ x: '/etc' }, 'x', 'SYMLINK_ABSOLUTE', 'points at the absolute path "/etc".'],
    [{ 'a/x': '../..' }, 'a/x', 'SYMLINK_LEAVES_WORKTREE', 'points at "../..", outside the working tree.'],
    [
      { x: 'a/.git/HEAD' },
      'x',
      'SYMLINK_POINTS_TO_GIT_DIR',
      'points at "a/.git/HEAD", into the git directory.',
    ],
    [{ a: 'b', b: 'a' }, 'a', 'SYMLINK_LOOP', 'does not resolve within 40 links.'],
    [
      { x: 'a'.repeat(5000) },
      'x',
      'SYMLINK_TOO_LONG',
      'points at a path of more than 4,095 bytes (maxSymlinkTargetBytes); no file system holds one.',
    ],
  ])('%j', (links, path, check, detail) => {
    expect(problem(links)).toEqual({ path, check, detail });
  });

  it('follows exactly 40 links, and refuses a 41st', () => {
    const chain = (n: number) =>
      Object.fromEntries(Array.from({ length: n }, (_, i) => [`l${i}`, i + 1 < n ? `l${i + 1}` : 'file']));
    // From l0, 39 more links are passed on the way: within the limit. From a link before l0, 40.
    expect(problem(chain(40))).toBeNull();
    expect(problem({ ...chain(40), start: 'l0' })).toBeNull();
    expect(problem({ ...chain(41), start: 'l0' })).toMatchObject({ path: 'start', check: 'SYMLINK_LOOP' });
  });

  it('walks ".." back up out of a folder no link names, and through a folder a link names', () => {
    expect(problem({ 'a/b/x': 'c/d/../../../y' })).toBeNull();
    expect(problem({ 'a/b/x': 'c/d/../../../../y' })).toBeNull();
    expect(problem({ 'a/b/x': 'c/../../../../y' })?.check).toBe('SYMLINK_LEAVES_WORKTREE');
    expect(problem({ 'a/x': 'b/./../../y', 'a/b/l': '.' })).toBeNull();
    expect(problem({ 'a/x': 'b/l/../../..', 'a/b/l': '.' })?.check).toBe('SYMLINK_LEAVES_WORKTREE');
  });

  it('a link that is not in the set has no problem', () => {
    const checker = new SymlinkChecker(new Map([['a', '/etc']]));
    expect(checker.check('b')).toBeNull();
    expect(checker.check('a')?.check).toBe('SYMLINK_ABSOLUTE');
  });

  it('counts UTF-8 bytes of a target only as far as it must', () => {
    expect(longerThanUtf8('', 0)).toBe(false);
    expect(longerThanUtf8('a', 0)).toBe(true);
    expect(longerThanUtf8('\u07ff'.repeat(3), 6)).toBe(false);
    expect(longerThanUtf8('\u0800'.repeat(2), 5)).toBe(true);
    expect(longerThanUtf8(`${'\u007f'.repeat(4)}\u0080`, 6)).toBe(false);
  });
});

describe('tree checks: the rules at their edges (killed mutants of issue 26)', () => {
  const problem = (links: Record<string, string>) => checkSymlinkTargets(new Map(Object.entries(links)));
  const gitmodules = (n: string) => isDotGitmodules(n, enc.encode(n));

  it('a one-digit mode is a mode, judged as one', () => {
    expect(check([['7', 'a']])?.check).toBe('BAD_FILEMODE');
  });

  it('a zero-padded tree mode sorts as a tree', () => {
    expect(
      check([
        ['040000', 'a'],
        ['100644', 'a.c'],
      ])?.check,
    ).toBe('TREE_NOT_SORTED');
    expect(
      check([
        ['100644', 'a.c'],
        ['040000', 'a'],
      ]),
    ).toBeNull();
  });

  it('"git~N" only as the whole name', () => {
    expect(isDotGit('xgit~1')).toBe(false);
  });

  it('NTFS short names of .gitmodules: "gitmod~1" to "~4", then the hashed "gi7eb" ones, as git (path.c)', () => {
    for (const n of ['gitmod~1', 'gitmod~4', 'gi7eb~19', 'gi7eb~10', 'gi7eb~91', 'gi~12345', 'GI7EBA~1.. ']) {
      expect([n, gitmodules(n)]).toEqual([n, true]);
    }
    for (const n of [
      'gitmod~0',
      'gitmod-1',
      'xitmod~1',
      'xgitmodules',
      'gi7eb~1',
      'gi~1',
      'gi7eb~1a',
      'gi7eb~1/',
      'gi7eb~1:',
      'gi7eb~01',
      'gi7eb~:1',
      'gi7ebaX~',
    ]) {
      expect([n, gitmodules(n)]).toEqual([n, false]);
    }
  });

  it('"." and "" parts of a target stay where they are', () => {
    expect(problem({ 'a/x': './../..' })?.check).toBe('SYMLINK_LEAVES_WORKTREE');
    expect(problem({ 'a/x': '..//..' })?.check).toBe('SYMLINK_LEAVES_WORKTREE');
  });

  it('below a folder no link names, a name is not the link of the folder above', () => {
    // "q/l" is not "d/l": climbing back from q ends in d, then the root, inside.
    expect(problem({ 'd/l': '..', 'd/y': 'q/l/../../..' })).toBeNull();
  });

  it('only a drive letter first is absolute', () => {
    expect(problem({ x: 'ab:c' })).toBeNull();
  });

  it('counts UTF-8 bytes at each width boundary, a surrogate pair as four', () => {
    expect(longerThanUtf8(`${'\u007f'.repeat(4)}\u0080`, 5)).toBe(true);
    expect(longerThanUtf8('\ud800\udc00', 4)).toBe(false);
    expect(longerThanUtf8('\ud800\udc00', 3)).toBe(true);
    expect(longerThanUtf8('\udbff\udfff', 4)).toBe(false);
    expect(longerThanUtf8('\ue000'.repeat(2), 5)).toBe(true);
  });
});
