import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parsePackedRefs, serializePackedRefs } from './packedRefs.ts';

const a = 'a'.repeat(40);
const b = 'b'.repeat(40);
const c = 'c'.repeat(40);

describe('packed-refs', () => {
  it('reads back what it writes, peeled tags included', () => {
    const refs = [
      { name: 'refs/remotes/origin/main', oid: a },
      { name: 'refs/tags/v1', oid: b, peeled: c },
    ];
    expect(parsePackedRefs(serializePackedRefs(refs))).toEqual(refs);
  });

  it('gives each peeled line to the ref just before it', () => {
    const text = `${a} refs/heads/main\n${b} refs/tags/v1\n${a} refs/tags/v2\n^${c}\n`;
    expect(parsePackedRefs(text)).toEqual([
      { name: 'refs/heads/main', oid: a },
      { name: 'refs/tags/v1', oid: b },
      { name: 'refs/tags/v2', oid: a, peeled: c },
    ]);
    // A peeled line before any ref peels nothing.
    expect(parsePackedRefs(`^${c}\n${a} refs/tags/v2\n`)).toEqual([{ name: 'refs/tags/v2', oid: a }]);
  });

  it('reads the file git writes and skips lines that are not refs', () => {
    const text = `# pack-refs with: peeled fully-peeled sorted \n${a} refs/heads/main\n${b} refs/tags/v1\n^${c}\nnot a ref\n${a} HEAD\n^zz\n`;
    expect(parsePackedRefs(text)).toEqual([
      { name: 'refs/heads/main', oid: a },
      { name: 'refs/tags/v1', oid: b, peeled: c },
    ]);
  });
});

describe('packed-refs against git', () => {
  it('writes byte for byte what `git pack-refs --all` writes for the same refs, peeled tags included', () => {
    const dir = mkdtempSync(join(tmpdir(), 'packed-refs-'));
    try {
      const git = (...args: string[]) =>
        execFileSync('git', ['-C', dir, ...args], {
          encoding: 'utf8',
          env: { ...process.env, GIT_AUTHOR_DATE: '@0 +0000', GIT_COMMITTER_DATE: '@0 +0000' },
        });
      git('init', '-q', '-b', 'main');
      git('-c', 'user.name=T', '-c', 'user.email=t@x', 'commit', '-q', '--allow-empty', '-m', 'one');
      git('-c', 'user.name=T', '-c', 'user.email=t@x', 'tag', '-a', '-m', 'z', 'z-annotated');
      git('tag', 'lightweight');
      git('-c', 'user.name=T', '-c', 'user.email=t@x', 'tag', '-a', '-m', 'a', 'a-annotated');
      git('branch', 'feature');
      // A tag of a tag: peeled to the commit, not to the tag it names.
      git('-c', 'user.name=T', '-c', 'user.email=t@x', 'tag', '-a', '-m', 'n', 'nested', 'a-annotated');
      git('pack-refs', '--all');
      const text = readFileSync(join(dir, '.git', 'packed-refs'), 'utf8');
      const refs = parsePackedRefs(text);
      expect(refs.map((r) => r.name)).toEqual([
        'refs/heads/feature',
        'refs/heads/main',
        'refs/tags/a-annotated',
        'refs/tags/lightweight',
        'refs/tags/nested',
        'refs/tags/z-annotated',
      ]);
      expect(refs.filter((r) => r.peeled).length).toBe(3);
      // Given in another order, with a peeled value equal to the ref's own (what no tag has): the same bytes.
      const shuffled = [...refs].reverse().map((r) => (r.peeled ? r : { ...r, peeled: r.oid }));
      expect(serializePackedRefs(shuffled)).toBe(text);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
