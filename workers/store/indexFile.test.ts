import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { parseIndexModes } from './indexFile.ts';

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
