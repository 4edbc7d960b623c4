import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import git from 'isomorphic-git';
import { afterAll, describe, expect, it } from 'vitest';
import { type ConfigEntry, parseGitConfig, serializeConfig, serializeRepoConfig } from './gitConfig.ts';

const dir = mkdtempSync(join(tmpdir(), 'blobless-config-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let files = 0;

/** Runs `git config -f <file> ...` with no other config in the way; returns stdout and the exit status. */
function gitConfig(file: string, args: string[]): { status: number | null; stdout: string } {
  const r = spawnSync('git', ['config', '-f', file, ...args], {
    encoding: 'utf8',
    env: { PATH: process.env.PATH, HOME: dir, GIT_CONFIG_NOSYSTEM: '1' },
  });
  return { status: r.status, stdout: r.stdout };
}

/** `git config --get` of every entry: what real git reads back from `text`. */
function gitReads(text: string, entries: ConfigEntry[]): string[] {
  const file = join(dir, `config-${files++}`);
  writeFileSync(file, text);
  return entries.map((e) => {
    const name =
      e.subsection === undefined ? `${e.section}.${e.key}` : `${e.section}.${e.subsection}.${e.key}`;
    const r = gitConfig(file, ['-z', '--get', name]);
    expect(r.status, `git config --get ${JSON.stringify(name)} in\n${text}`).toBe(0);
    return r.stdout.replace(/\0$/, '');
  });
}

const NASTY = [
  'plain',
  'x"]\n\t[core]\n\tfsmonitor = touch /tmp/pwned',
  'a\tb',
  'back\\slash',
  '"quoted"',
  ' leading space',
  'trailing space ',
  'semi;colon',
  'hash#mark',
  'two  spaces',
  'carriage\rreturn',
  'form\ffeed and\vtab',
  'line\nfeed',
  '',
  '\\n literally',
];

describe('serializeConfig escapes as git writes', () => {
  it('each value line is byte for byte what `git config` writes for it', () => {
    // git's writer leaves CR, VT and FF bare (and its reader then turns them into spaces); we quote them.
    for (const value of NASTY.filter((v) => !/[\r\v\f]/.test(v))) {
      const file = join(dir, `written-${files++}`);
      writeFileSync(file, '');
      expect(gitConfig(file, ['remote.origin.url', value]).status).toBe(0);
      expect(serializeConfig([{ section: 'remote', subsection: 'origin', key: 'url', value }])).toBe(
        readFileSync(file, 'utf8'),
      );
    }
  });

  it('a subsection name is escaped as git writes it', () => {
    for (const sub of ['a"]\t[core]', 'back\\slash', 'x"y', 'tab\there']) {
      const file = join(dir, `written-${files++}`);
      writeFileSync(file, '');
      expect(gitConfig(file, [`branch.${sub}.merge`, 'm']).status).toBe(0);
      expect(serializeConfig([{ section: 'branch', subsection: sub, key: 'merge', value: 'm' }])).toBe(
        readFileSync(file, 'utf8'),
      );
    }
  });

  it('quotes only what needs it', () => {
    expect(serializeConfig([{ section: 'core', key: 'k', value: 'Vast; fine' }])).toBe(
      '[core]\n\tk = "Vast; fine"\n',
    );
    expect(serializeConfig([{ section: 'core', key: 'k', value: 'Vast' }])).toBe('[core]\n\tk = Vast\n');
  });

  it('refuses what git cannot hold', () => {
    expect(() => serializeConfig([{ section: 'branch', subsection: 'a\nb', key: 'k', value: 'v' }])).toThrow(
      expect.objectContaining({
        code: 'CONFIG_INVALID',
        message:
          'Cannot write the config section "a\\nb": git\'s config cannot hold a line feed or NUL in a section name.',
      }),
    );
    expect(() => serializeConfig([{ section: 'core', key: 'k', value: 'a\0b' }])).toThrow(
      expect.objectContaining({
        code: 'CONFIG_INVALID',
        message: 'Cannot write a config value holding a NUL byte: git cannot read it.',
      }),
    );
  });
});

describe('our config reads back exactly as written', () => {
  it('the branch name of issue 9 injects no [core] section', () => {
    const branch = 'x"]\t[core]\tfsmonitor = evil';
    const text = serializeRepoConfig({
      remote: { url: 'https://h/r.git', fetchRefspec: '+refs/heads/*:refs/remotes/origin/*' },
      branch,
    });
    const file = join(dir, `config-${files++}`);
    writeFileSync(file, text);
    expect(gitConfig(file, ['--get-regexp', '^core\\.']).stdout).not.toMatch(/fsmonitor/);
    expect(gitConfig(file, ['--get', `branch.${branch}.merge`]).stdout).toBe(`refs/heads/${branch}\n`);
  });

  it('every nasty value and subsection, by our reader and by `git config --get`', () => {
    for (const value of NASTY) {
      const branch = value.includes('\n') || value === '' ? 'main' : value;
      const cfg = {
        remote: {
          url: value,
          fetchRefspec: '+refs/heads/*:refs/remotes/origin/*',
          partialCloneFilter: 'blob:none',
        },
        branch,
      };
      const text = serializeRepoConfig(cfg);
      const entries = parseGitConfig(text);
      const url = entries.find((e) => e.key === 'url');
      expect(url?.value).toBe(value);
      expect(entries.find((e) => e.section === 'branch')?.subsection).toBe(branch);
      expect(entries.filter((e) => e.section === 'core').map((e) => e.key)).toEqual([
        'repositoryformatversion',
        'filemode',
        'bare',
        'logallrefupdates',
      ]);
      expect(gitReads(text, entries)).toEqual(entries.map((e) => e.value));
    }
  });

  it('generated values and subsection names round-trip (ours every case, git a sample)', () => {
    const char = fc.constantFrom(...'ab "\\\t\n\r;#[]=\v\f.\b'.split(''), 'é', '\u2028');
    const text = fc.array(char, { maxLength: 12 }).map((cs) => cs.join(''));
    let sampled = 0;
    fc.assert(
      fc.property(text, text, (value, rawSub) => {
        const subsection = rawSub.replace(/\n/g, '');
        const entries: ConfigEntry[] = [
          { section: 'remote', subsection, key: 'url', value },
          { section: 'core', key: 'x', value },
        ];
        const written = serializeConfig(entries);
        expect(parseGitConfig(written)).toEqual(entries);
        if (sampled++ < 40) expect(gitReads(written, entries)).toEqual([value, value]);
      }),
      { numRuns: 2000 },
    );
  });

  it("isomorphic-git, which the app's git commands read config with, reads it back the same", async () => {
    for (const value of NASTY.filter((v) => !/[\r\v\f]/.test(v))) {
      const branch = value.includes('\n') || value === '' ? 'main' : value;
      const text = serializeRepoConfig({
        remote: { url: value, fetchRefspec: '+refs/heads/*:refs/remotes/origin/*' },
        branch,
      });
      const missing = async () => {
        throw Object.assign(new Error('ENOENT'), { code: 'ENOENT' });
      };
      const fs = {
        promises: {
          readFile: async (path: string, options?: unknown) =>
            path === '/.git/config' ? (options ? text : Buffer.from(text)) : missing(),
          readdir: missing,
          stat: missing,
          lstat: missing,
          readlink: missing,
          writeFile: missing,
          mkdir: missing,
          rmdir: missing,
          unlink: missing,
          symlink: missing,
        },
      };
      expect(await git.getConfig({ fs, gitdir: '/.git', path: 'remote.origin.url' })).toBe(value);
      expect(await git.getConfig({ fs, gitdir: '/.git', path: `branch.${branch}.merge` })).toBe(
        `refs/heads/${branch}`,
      );
      expect(await git.getConfig({ fs, gitdir: '/.git', path: 'core.fsmonitor' })).toBeUndefined();
    }
  });
});

/** What `git config --list -z` reads from `text`: `section[.subsection].key=value`, or null where git refuses it. */
function gitLists(text: string): string[] | null {
  const file = join(dir, `config-${files++}`);
  writeFileSync(file, text);
  const r = gitConfig(file, ['--list', '-z']);
  if (r.status !== 0) return null;
  // A key without "=" is listed without a value: a boolean true.
  return r.stdout
    .split('\0')
    .filter(Boolean)
    .map((item) => (item.includes('\n') ? item.replace('\n', '=') : `${item}=true`));
}

const listed = (entries: ConfigEntry[]) =>
  entries.map(
    (e) => `${e.section}${e.subsection === undefined ? '' : `.${e.subsection}`}.${e.key}=${e.value}`,
  );

describe('parseGitConfig reads as git reads', () => {
  it('comments, spaces, quotes, escapes, continued lines, booleans and case', () => {
    const text = [
      '# a comment',
      '; another',
      '[Core]',
      '\tBare = false ; said twice',
      '  fileMode=true#no space before the comment',
      'flag',
      'other-flag   ',
      '[remote "Ori\\"gin\\\\x"]',
      '\turl = https://h/r.git',
      '\tfetch = a   b  # folded inside, dropped at the end   ',
      '\tquoted = " kept  ; # " and\\ttab\\nline\\bback\\\\slash\\"quote',
      '\tcontinued = first \\',
      '  second',
      '\tempty =',
      '[sec.tion-2]',
      '\tkey-2 = v',
      '[branch "main"]\r',
      '\tmerge = refs/heads/main\r',
      // git folds a carriage return as a space, but keeps a vertical tab and a form feed as they are.
      '\tvt = a \v\f\r b\vc \f',
      '\tcrlf = 1 \\\r',
      '  2\r',
      '',
    ].join('\n');
    const expected = gitLists(text);
    expect(expected).not.toBeNull();
    expect(listed(parseGitConfig(text))).toEqual(expected);
    expect(expected).toContain('remote.Ori"gin\\x.quoted= kept  ; #  and\ttab\nline\bback\\slash"quote');
  });

  it.each([
    '[core]\n\tflag',
    '[core]\n\tx = 1 ;c',
    '[core]\n\tx = 1\n# the end',
    '[core]\n\tx = 1\n[sec.tion-2',
    '[sec.tion-2]',
  ])('reads a file ending without a line feed, as git does: %j', (text) => {
    const expected = gitLists(text);
    if (expected === null) expect(() => parseGitConfig(text)).toThrow(/malformed/);
    else expect(listed(parseGitConfig(text))).toEqual(expected);
  });

  it.each([
    // git lists it as the key "key" of no section; no file we write has one.
    ['a key before any section', 'key = v\n', 'a key comes before any section', ['key=v']],
    ['a subsection not quoted', '[remote origin]\n', 'a section header has no quoted subsection'],
    ['a subsection name not closed', '[remote "origin]\n\turl = x\n', 'a subsection name is not closed'],
    ['a subsection name at the end', '[remote "origin', 'a subsection name is not closed'],
    ['a header not closed', '[core\n', 'a section header is not closed'],
    ['a quoted value not closed', '[core]\n\tx = "open\n', 'a quoted value is not closed'],
    ['a quoted value at the end', '[core]\n\tx = "open', 'a quoted value is not closed'],
    ['an escape git does not know', '[core]\n\tx = a\\qb\n', 'the escape \\q is not one git knows'],
    ['a line of neither', '[core]\n\t=x\n', 'unexpected "="'],
    [
      'a key followed by a word',
      '[core]\n\tflag junk\n',
      'the key "flag" is followed by neither "=" nor the end of its line',
    ],
    [
      'a key followed by a comment',
      '[core]\n\tflag ; c\n',
      'the key "flag" is followed by neither "=" nor the end of its line',
    ],
    ['a subsection name over two lines', '[remote "a\nb"]\n', 'a subsection name is not closed'],
    ['a vertical tab before a key', '[core]\n\vx = 1\n', 'unexpected "\\u000b"'],
  ])(
    'refuses %s (git too, but for a key of no section)',
    (_, text, why, gitReads: string[] | null = null) => {
      expect(gitLists(text)).toEqual(gitReads);
      expect(() => parseGitConfig(text)).toThrow(`The config file is malformed: ${why}.`);
      try {
        parseGitConfig(text);
      } catch (err) {
        expect(err).toMatchObject({ name: 'StoreError', code: 'CONFIG_INVALID' });
      }
    },
  );
});

describe('serializeRepoConfig', () => {
  const remote = { url: 'https://h/r.git', fetchRefspec: '+refs/heads/*:refs/remotes/origin/*' };
  it('writes what git clone writes for a partial clone on a branch', () => {
    const text = serializeRepoConfig({
      remote: { ...remote, partialCloneFilter: 'blob:none' },
      branch: 'main',
    });
    expect(gitLists(text)).toEqual([
      'core.repositoryformatversion=1',
      'core.filemode=true',
      'core.bare=false',
      'core.logallrefupdates=true',
      'remote.origin.url=https://h/r.git',
      'remote.origin.fetch=+refs/heads/*:refs/remotes/origin/*',
      'remote.origin.promisor=true',
      'remote.origin.partialclonefilter=blob:none',
      'extensions.partialclone=origin',
      'branch.main.remote=origin',
      'branch.main.merge=refs/heads/main',
    ]);
    expect(text.match(/^\[/gm)).toHaveLength(4);
  });
  it('and for a full clone with a detached HEAD', () => {
    expect(gitLists(serializeRepoConfig({ remote }))).toEqual([
      'core.repositoryformatversion=0',
      'core.filemode=true',
      'core.bare=false',
      'core.logallrefupdates=true',
      'remote.origin.url=https://h/r.git',
      'remote.origin.fetch=+refs/heads/*:refs/remotes/origin/*',
    ]);
  });
});
