import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { type IndexEntry, parseIndexModes, serializeIndex } from './indexFile.ts';

const dir = mkdtempSync(join(tmpdir(), 'indexfile-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const git = (args: string[], input?: string) =>
  execFileSync('git', ['-C', dir, ...args], {
    input,
    env: { ...process.env, GIT_CONFIG_GLOBAL: '/dev/null' },
  }).toString();

describe('parseIndexModes', () => {
  it('reads what git ls-files --stage reads from an index git wrote (versions 2 and 3)', () => {
    git(['init', '-q']);
    const blob = git(['hash-object', '-w', '--stdin'], 'x').trim();
    const long = `${'deep/'.repeat(900)}leaf.txt`; // a path of 0xfff bytes or more: NUL-terminated
    for (const [mode, path] of [
      ['100644', 'a.txt'],
      ['100755', 'run.sh'],
      ['120000', 'link'],
      ['160000', 'sub'],
      ['100644', 'dir/ünï.txt'],
      ['100644', long],
    ]) {
      const oid = mode === '160000' ? 'ab'.repeat(20) : blob;
      git(['update-index', '--add', '--cacheinfo', `${mode},${oid},${path}`]);
    }
    const expected = new Map(
      git(['ls-files', '--stage', '-z'])
        .split('\0')
        .filter(Boolean)
        .map((l) => [l.slice(l.indexOf('\t') + 1), l.split(' ')[0]] as [string, string]),
    );
    expect(expected.size).toBe(6);
    for (const version of ['2', '3']) {
      git(['update-index', '--index-version', version]);
      // An intent-to-add entry makes version 3 write extended flags.
      if (version === '3') {
        git(['update-index', '--add', '--cacheinfo', `100644,${blob},later.txt`]);
        execFileSync('sh', ['-c', `echo y > "${dir}/later.txt" && git -C "${dir}" add -N later.txt`]);
        expected.set('later.txt', '100644');
      }
      const modes = parseIndexModes(new Uint8Array(readFileSync(join(dir, '.git', 'index'))));
      expect(modes).toEqual(expected);
    }
  });

  it('null for version 4 and for bytes that are not an index', () => {
    git(['update-index', '--index-version', '4']);
    expect(parseIndexModes(new Uint8Array(readFileSync(join(dir, '.git', 'index'))))).toBeNull();
    expect(parseIndexModes(new TextEncoder().encode('not an index at all'))).toBeNull();
  });
});

describe('serializeIndex', () => {
  it("writes an index git reads back: every path, mode and id, in git's order, its checksum good", () => {
    const repo = mkdtempSync(join(tmpdir(), 'indexfile-write-'));
    try {
      const run = (args: string[]) =>
        execFileSync('git', ['-C', repo, ...args], {
          env: { ...process.env, GIT_CONFIG_GLOBAL: '/dev/null' },
        });
      run(['init', '-q']);
      const stat = {
        ctimeMs: 1_700_000_000_123.5,
        mtimeMs: 1_700_000_001_999,
        dev: 1,
        ino: 7,
        uid: 1,
        gid: 1,
        size: 3,
      };
      const entries: IndexEntry[] = [
        // Not in byte order: "a-b" sorts before "a/b", "é" after "z", as git compares bytes.
        { path: 'z.txt', oid: '1'.repeat(40), mode: 0o100644, stat },
        { path: 'a/b', oid: '2'.repeat(40), mode: 0o100755, stat },
        { path: 'a-b', oid: '3'.repeat(40), mode: 0o120000, stat },
        { path: 'é.md', oid: '4'.repeat(40), mode: 0o100644, stat },
        { path: 'sub', oid: '5'.repeat(40), mode: 0o160000, stat },
        { path: `${'deep/'.repeat(900)}leaf`, oid: '6'.repeat(40), mode: 0o100644, stat },
      ];
      const bytes = serializeIndex(entries);
      writeFileSync(join(repo, '.git', 'index'), bytes);
      const listed = run(['ls-files', '--stage', '-z']).toString().split('\0').filter(Boolean);
      const order = [...entries].sort((x, y) => Buffer.compare(Buffer.from(x.path), Buffer.from(y.path)));
      expect(listed).toEqual(order.map((e) => `${e.mode.toString(8)} ${e.oid} 0\t${e.path}`));
      expect(parseIndexModes(bytes)?.get('a/b')).toBe('100755');
      // The times as git reads them: seconds and nanoseconds.
      const debug = run(['ls-files', '--debug', 'z.txt']).toString();
      expect(debug).toContain('ctime: 1700000000:123500000');
      expect(debug).toContain('mtime: 1700000001:999000000');
      expect(debug).toContain('size: 3');
    } finally {
      rmSync(repo, { recursive: true, force: true });
    }
  });
});
