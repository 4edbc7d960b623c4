import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeGit } from './testing/gitPacks.ts';
import { TimeSlice } from './timeSlice.ts';
import { checkTree } from './treeCheck.ts';
import { type ReadTree, walkTree } from './treeWalk.ts';

// A repository with folders nested three deep, a sibling folder and a file named like a folder's
// prefix ("a.txt" sorts before "a/"), so git's order and the walk's own are told apart.
let dir: string;
let git: ReturnType<typeof makeGit>;
let root: string;

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'treewalk-'));
  git = makeGit(dir);
  git(['init', '-q']);
  const files: Record<string, string> = {
    'a.txt': 'a\n',
    'a/b/c/deep.txt': 'deep\n',
    'a/b/mid.txt': 'mid\n',
    'a/top.txt': 'top\n',
    'a-/x': 'x\n',
    'z/one': '1\n',
    'z/two/three': '3\n',
    README: 'readme\n',
  };
  for (const [path, content] of Object.entries(files)) {
    mkdirSync(join(dir, path, '..'), { recursive: true });
    writeFileSync(join(dir, path), content);
  }
  git(['add', '.']);
  git(['commit', '-q', '-m', 'tree']);
  root = git(['rev-parse', 'HEAD^{tree}']).toString().trim();
});

afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Reads trees with `git cat-file`, noting each read as git's path of the tree, its prefix and its depth. */
function gitReader(reads: { oid: string; path: string; depth: number }[]): ReadTree {
  return async (oid, path, depth) => {
    reads.push({ oid, path, depth });
    return checkTree(new Uint8Array(git(['cat-file', 'tree', oid]))).entries;
  };
}

/** `git ls-tree -r -t`: every entry, a folder before what it holds, as [mode, oid, path]. */
function lsTree(): [string, string, string][] {
  return git(['ls-tree', '-r', '-t', '-z', root])
    .toString()
    .split('\0')
    .filter(Boolean)
    .map((line) => {
      const [meta, path] = line.split('\t');
      const [mode, , oid] = meta.split(' ');
      return [mode === '040000' ? '040000' : mode, oid, path];
    });
}

describe('walkTree', () => {
  it("visits every entry in git's order (ls-tree -r -t) with its path, reading each tree once at its depth", async () => {
    const reads: { oid: string; path: string; depth: number }[] = [];
    const seen: [string, string, string][] = [];
    await walkTree(root, gitReader(reads), (entry, path) => {
      seen.push([entry.mode, entry.oid, path]);
    });
    const expected = lsTree();
    expect(seen).toEqual(expected);
    const trees = expected.filter(([mode]) => mode === '040000');
    expect(reads).toEqual([
      { oid: root, path: '', depth: 0 },
      ...trees.map(([, oid, path]) => ({ oid, path: `${path}/`, depth: path.split('/').length })),
    ]);
  });

  it('leaves a folder unread when the visitor returns false, and only then', async () => {
    const reads: { oid: string; path: string; depth: number }[] = [];
    const seen: string[] = [];
    await walkTree(root, gitReader(reads), (_entry, path) => {
      seen.push(path);
      // Any other answer, falsy or not, descends.
      if (path === 'a/b') return false;
      if (path === 'z') return 0;
      return undefined;
    });
    const expected = lsTree()
      .map(([, , path]) => path)
      .filter((path) => !path.startsWith('a/b/'));
    expect(seen).toEqual(expected);
    expect(reads.map((r) => r.path)).toEqual(['', 'a-/', 'a/', 'z/', 'z/two/']);
  });

  it('lets other calls in between tree reads, and never in the middle of one', async () => {
    const events: string[] = [];
    class Recorded extends TimeSlice {
      override async pause(): Promise<void> {
        events.push('pause');
      }
    }
    const read = gitReader([]);
    await walkTree(
      root,
      async (oid, path, depth) => {
        events.push(`read ${path}`);
        return read(oid, path, depth);
      },
      () => undefined,
      new Recorded(),
    );
    const trees = lsTree().filter(([mode]) => mode === '040000');
    expect(events).toEqual(['read ', ...trees.flatMap(([, , path]) => ['pause', `read ${path}/`])]);
  });

  it('walks a chain of folders far deeper than the call stack allows recursion', async () => {
    // A made-up chain: the reader answers each depth with one folder, down to 5,000.
    const depthMax = 5000;
    let deepest = -1;
    let visited = 0;
    await walkTree(
      'root',
      async (_oid, _path, depth) => {
        deepest = Math.max(deepest, depth);
        return depth < depthMax ? [{ mode: '040000', name: 'd', oid: String(depth + 1) }] : [];
      },
      () => void visited++,
      new TimeSlice(Number.POSITIVE_INFINITY),
    );
    expect(deepest).toBe(depthMax);
    expect(visited).toBe(depthMax);
  });
});
