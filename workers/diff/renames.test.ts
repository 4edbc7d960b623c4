// Rename and copy detection against git on generated changes: a scratch repository holds one pair of
// commits per scenario (files kept, edited, deleted, moved with a share of their lines rewritten, copied,
// duplicated, made anew; shared base names across folders; empty, binary, CRLF and symlink files), and
// `git diff-tree -M/-C/--find-copies-harder/-l` on all of them in one process is the oracle.
import { spawn } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { fakeLine } from '../../server/fixtures/fakeText.ts';
import { SeededRandom } from '../../server/fixtures/seededRandom.ts';
import { gitBytes, nameStatuses } from '../../test/support/gitHistory.ts';
import { useTmpDir } from '../../test/support/tmpDir.ts';
import { sha1, toHex } from '../pack/objectHash.ts';
import { detectRenames, type FilePair, type RenameOptions, renameBlobsNeeded } from './renames.ts';
import { countChanges, spanCounts } from './similarity.ts';

const tmp = useTmpDir('renames');
const UTF8 = new TextEncoder();

interface TreeFile {
  mode: string;
  content: Uint8Array;
}
type Tree = Map<string, TreeFile>;

const DIRS = ['', 'src/', 'lib/', 'src/util/', 'docs/'];
const NAMES = ['index.js', 'util.js', 'a.txt', 'b.txt', 'README', 'notes.md', 'main.c', 'x'];

function lines(rand: SeededRandom, n: number, crlf = false): Uint8Array {
  const out: string[] = [];
  for (let i = 0; i < n; i++) out.push(fakeLine(rand));
  return UTF8.encode(out.map((l) => l + (crlf ? '\r\n' : '\n')).join(''));
}

/** Rewrites about `fraction` of the lines, sometimes inserts or drops some. */
function edit(rand: SeededRandom, content: Uint8Array, fraction: number): Uint8Array {
  const text = new TextDecoder().decode(content).split('\n');
  const out: string[] = [];
  for (const line of text) {
    if (rand.chance(fraction)) {
      if (rand.chance(0.3)) continue;
      out.push(fakeLine(rand));
      if (rand.chance(0.2)) out.push(fakeLine(rand));
    } else out.push(line);
  }
  return UTF8.encode(out.join('\n'));
}

function scenario(seed: number): { before: Tree; after: Tree } {
  const rand = new SeededRandom(seed);
  const path = () => rand.pick(DIRS) + rand.pick(NAMES) + (rand.chance(0.5) ? '' : String(rand.int(4)));
  const before: Tree = new Map();
  for (let i = rand.between(2, 12); i > 0; i--) {
    const kind = rand.int(20);
    const content =
      kind === 0
        ? new Uint8Array(0)
        : kind === 1
          ? rand.fill(new Uint8Array(rand.between(1, 3000)))
          : lines(rand, rand.chance(0.2) ? rand.between(1, 3) : rand.between(4, 60), kind === 2);
    const mode = kind === 3 ? '120000' : rand.chance(0.1) ? '100755' : '100644';
    const earlier = [...before.values()];
    // Look-alike sources (a duplicate, or a variant, of a file already there) make destinations compete
    // for the same source, and tie on scores.
    if (earlier.length && rand.chance(0.3)) {
      const like = rand.pick(earlier);
      before.set(path(), {
        mode: like.mode,
        content: rand.chance(0.5) ? like.content : edit(rand, like.content, 0.1),
      });
    } else before.set(path(), { mode, content });
  }
  const after: Tree = new Map();
  const fraction = () => rand.pick([0, 0.05, 0.2, 0.35, 0.5, 0.7, 0.9]);
  for (const [p, f] of before) {
    switch (rand.int(7)) {
      case 0: // kept
        after.set(p, f);
        break;
      case 1: // edited in place
        after.set(p, { ...f, content: edit(rand, f.content, fraction()) });
        break;
      case 2: // deleted
        break;
      case 3: // moved, maybe edited
      case 4:
        after.set(path(), { ...f, content: edit(rand, f.content, fraction()) });
        break;
      case 5: // copied, the original kept or edited
        after.set(p, rand.chance(0.5) ? f : { ...f, content: edit(rand, f.content, 0.1) });
        after.set(path(), { ...f, content: edit(rand, f.content, fraction()) });
        break;
      default: // moved to two places (identical or not)
        after.set(path(), f);
        after.set(path(), rand.chance(0.5) ? f : { ...f, content: edit(rand, f.content, fraction()) });
    }
  }
  for (let i = rand.int(3); i > 0; i--)
    after.set(path(), { mode: '100644', content: lines(rand, rand.between(1, 40)) });
  return { before, after };
}

function blobId(content: Uint8Array): string {
  const header = UTF8.encode(`blob ${content.length}\0`);
  const all = new Uint8Array(header.length + content.length);
  all.set(header);
  all.set(content, header.length);
  return toHex(sha1(all));
}

/** git's tree diff of two file maps, in path (byte) order; unchanged files too when asked. */
function treeDiff(before: Tree, after: Tree, unchanged: boolean): FilePair[] {
  const paths = [...new Set([...before.keys(), ...after.keys()])].sort((a, b) =>
    Buffer.compare(Buffer.from(a), Buffer.from(b)),
  );
  const pairs: FilePair[] = [];
  for (const path of paths) {
    const a = before.get(path);
    const b = after.get(path);
    const old = a ? { path, mode: a.mode, oid: blobId(a.content) } : null;
    const now = b ? { path, mode: b.mode, oid: blobId(b.content) } : null;
    if (!unchanged && old && now && old.oid === now.oid && old.mode === now.mode) continue;
    pairs.push({ old, new: now });
  }
  return pairs;
}

/** A fast-import stream of each scenario as two commits, `before-<k>` and `after-<k>`. */
function importStream(scenarios: { before: Tree; after: Tree }[]): Buffer {
  const parts: Buffer[] = [];
  const text = (s: string) => parts.push(Buffer.from(s));
  let mark = 0;
  const commit = (ref: string, tree: Tree, from?: string) => {
    const marks: [string, TreeFile, number][] = [];
    for (const [path, f] of tree) {
      text(`blob\nmark :${++mark}\ndata ${f.content.length}\n`);
      parts.push(Buffer.from(f.content));
      text('\n');
      marks.push([path, f, mark]);
    }
    text(
      `commit ${ref}\ncommitter A <a@b> 1700000000 +0000\ndata 0\n${from ? `from ${from}\n` : ''}deleteall\n`,
    );
    for (const [path, f, m] of marks) text(`M ${f.mode} :${m} ${path}\n`);
    text('\n');
  };
  scenarios.forEach((s, k) => {
    commit(`refs/heads/before-${k}`, s.before);
    commit(`refs/heads/after-${k}`, s.after, `refs/heads/before-${k}`);
  });
  text('done\n');
  return Buffer.concat(parts);
}

async function makeRepo(dir: string, scenarios: { before: Tree; after: Tree }[]): Promise<void> {
  await gitBytes(dir, ['init', '-q', '--bare', dir]);
  await new Promise<void>((resolve, reject) => {
    const child = spawn('git', ['--git-dir', dir, 'fast-import', '--quiet', '--done'], {
      stdio: ['pipe', 'ignore', 'inherit'],
    });
    child.on('error', reject);
    child.on('close', (code) => (code === 0 ? resolve() : reject(new Error(`fast-import: ${code}`))));
    child.stdin.end(importStream(scenarios));
  });
}

/** `git diff-tree -r --name-status <args>` of every scenario. */
async function gitStatuses(dir: string, count: number, args: string[]): Promise<string[][]> {
  const names = Array.from({ length: count }, (_, k) => [`after-${k}`, `before-${k}`]).flat();
  const hex = (await gitBytes(dir, ['rev-parse', ...names])).toString().trim().split('\n');
  const pairs = Array.from({ length: count }, (_, k): [string, string] => [hex[2 * k], hex[2 * k + 1]]);
  return nameStatuses(dir, pairs, args);
}

function ours(s: { before: Tree; after: Tree }, opts: RenameOptions): string[] {
  const pairs = treeDiff(s.before, s.after, opts.findCopiesHarder === true);
  const blobs = new Map<string, Uint8Array>();
  for (const f of [...s.before.values(), ...s.after.values()]) blobs.set(blobId(f.content), f.content);
  const needed = new Set(renameBlobsNeeded(pairs, opts));
  const result = detectRenames(pairs, (oid) => (needed.has(oid) ? blobs.get(oid) : undefined), opts);
  return result.pairs.map((p) =>
    p.status === 'R' || p.status === 'C'
      ? `${p.status}${String(p.similarity).padStart(3, '0')} ${p.old!.path} ${p.new!.path}`
      : `${p.status} ${(p.new ?? p.old)!.path}`,
  );
}

describe('rename detection', () => {
  const scenarios = Array.from({ length: 300 }, (_, k) => scenario(1000 + k));
  const cases: [string, string[], RenameOptions][] = [
    ['-M', ['-M'], {}],
    ['-M30%', ['-M30%'], { minimumScore: 18_000 }],
    ['-M90%', ['-M90%'], { minimumScore: 54_000 }],
    ['-C', ['-C'], { detect: 'copies' }],
    ['-C --find-copies-harder', ['-C', '--find-copies-harder'], { detect: 'copies', findCopiesHarder: true }],
    ['-M -l3 (inexact detection skipped past the limit)', ['-M', '-l3'], { renameLimit: 3 }],
    [
      '-C --find-copies-harder -l4 (degraded to -C past the limit)',
      ['-C', '--find-copies-harder', '-l4'],
      { detect: 'copies', findCopiesHarder: true, renameLimit: 4 },
    ],
  ];

  it('matches git diff-tree on 300 generated changes, with each option', { timeout: 120_000 }, async () => {
    const dir = `${tmp()}/scenarios.git`;
    await makeRepo(dir, scenarios);
    for (const [name, args, opts] of cases) {
      const expected = await gitStatuses(dir, scenarios.length, args);
      const wrong = scenarios.findIndex((s, k) => ours(s, opts).join('\n') !== expected[k].join('\n'));
      expect(
        wrong < 0
          ? null
          : { option: name, scenario: wrong, ours: ours(scenarios[wrong], opts), git: expected[wrong] },
      ).toBeNull();
    }
    // The scenarios reach every rule: exact, same-base-name and matrix renames, copies, and scores.
    const all = scenarios.flatMap((s) => ours(s, { detect: 'copies', findCopiesHarder: true }));
    expect(all.some((l) => l.startsWith('R100'))).toBe(true);
    expect(all.some((l) => /^R0[5-9]\d/.test(l))).toBe(true);
    expect(all.some((l) => /^C\d{3}/.test(l))).toBe(true);
  });

  it("counts bytes as git's chunk hashes do: copied and added", () => {
    const a = UTF8.encode('one\ntwo\nthree\n');
    const b = UTF8.encode('one\r\ntwo\nfour\n');
    expect(countChanges(spanCounts(a), spanCounts(b))).toEqual({ copied: 8, added: 5 });
    // Bytes after the last line feed that do not fill 64 are not counted.
    expect(spanCounts(UTF8.encode('no newline')).hashes).toHaveLength(0);
  });
});
