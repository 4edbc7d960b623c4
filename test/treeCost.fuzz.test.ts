import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { TimeSlice } from '../workers/pack/timeSlice.ts';
import {
  checkSymlinkTargets,
  checkTree,
  isDotGit,
  type SymlinkProblem,
  show,
} from '../workers/pack/treeCheck.ts';
import { walkTree } from '../workers/pack/treeWalk.ts';
import { concatBytes } from '../workers/wire/pktLine.ts';
import { growthAtEightfold, LINEAR_GROWTH_BOUND } from './support/cost.ts';
import { fuzz, fuzzTimeout } from './support/fuzz.ts';

// Cost, not only correctness: a server chooses trees and link targets, and a check whose time grows faster
// than its input froze the tab's git worker (issue 24: a 240 KB link target took 80 s). Each property times
// a generated shape at a size and at eight times it (support/cost.ts), and fails when the time per element
// grows as quadratic work does.
const COST_RUNS = 20;
const UNLIMITED = { maxSymlinkTargetBytes: Number.POSITIVE_INFINITY };

/**
 * The walk of issue 9 as it was (a queue shifted and unshifted, the whole stack joined for every component),
 * kept as the oracle of what a link set resolves to: the linear walk must agree with it everywhere.
 */
function quadraticReference(links: ReadonlyMap<string, string>): SymlinkProblem | null {
  const absolute = (t: string) => /^[/\\]/.test(t) || /^[A-Za-z]:/.test(t);
  for (const [path, target] of links) {
    const fail = (check: SymlinkProblem['check'], detail: string) => ({ path, check, detail });
    if (absolute(target)) return fail('SYMLINK_ABSOLUTE', `points at the absolute path ${show(target)}.`);
    const stack = path.split('/').slice(0, -1);
    const queue = target.split(/[/\\]/);
    let hops = 0;
    let problem: SymlinkProblem | null = null;
    while (queue.length > 0 && !problem) {
      const part = queue.shift() as string;
      if (part === '' || part === '.') continue;
      if (part === '..') {
        if (stack.length === 0)
          problem = fail('SYMLINK_LEAVES_WORKTREE', `points at ${show(target)}, outside the working tree.`);
        stack.pop();
        continue;
      }
      if (isDotGit(part)) {
        problem = fail('SYMLINK_POINTS_TO_GIT_DIR', `points at ${show(target)}, into the git directory.`);
        continue;
      }
      stack.push(part);
      const next = links.get(stack.join('/'));
      if (next === undefined) continue;
      if (++hops > 40) problem = fail('SYMLINK_LOOP', 'does not resolve within 40 links.');
      else if (absolute(next))
        problem = fail('SYMLINK_ABSOLUTE', `leads through ${show(stack.join('/'))} to ${show(next)}.`);
      stack.pop();
      queue.unshift(...next.split(/[/\\]/));
    }
    if (problem) return problem;
  }
  return null;
}

const linkName = fc.constantFrom('l0', 'l1', 'l2', 'l3');
const part = fc.constantFrom('a', 'b', '..', '.', '', 'x', '.git', 'l0', 'l1', 'l2', 'l3');
/** Links in a few folders, each target a pattern of components (repeated to scale it). */
const linkShape = fc.array(
  fc.record({
    folder: fc.array(fc.constantFrom('a', 'b', 'l0'), { maxLength: 2 }),
    name: linkName,
    pattern: fc.array(part, { minLength: 1, maxLength: 6 }),
  }),
  { minLength: 1, maxLength: 4 },
);
type LinkShape = typeof linkShape extends fc.Arbitrary<infer T> ? T : never;

function linksAt(shape: LinkShape, repeat: number): Map<string, string> {
  return new Map(
    shape.map((l) => [
      [...l.folder, l.name].join('/'),
      Array.from({ length: repeat }, () => l.pattern.join('/')).join('/'),
    ]),
  );
}

describe('fuzz: what the tree checks cost grows with their input, no faster', () => {
  it(
    'the linear link walk finds what the quadratic one found, on any link set',
    async () => {
      const path = fc.array(part, { minLength: 1, maxLength: 4 }).map((p) => p.join('/'));
      const sep = fc.constantFrom('/', '\\');
      const target = fc
        .array(fc.tuple(part, sep), { minLength: 1, maxLength: 5 })
        .map((ps) => ps.map(([p, s]) => p + s).join(''));
      await fuzz(
        'symlink-walk',
        fc.property(fc.array(fc.tuple(path, fc.oneof(target, path)), { maxLength: 6 }), (pairs) => {
          const links = new Map(pairs);
          expect(checkSymlinkTargets(links, UNLIMITED)).toEqual(quadraticReference(links));
        }),
      );
    },
    fuzzTimeout(),
  );

  it(
    'link sets: the time per component stays flat from a target to eight times it',
    async () => {
      await fuzz(
        'symlink-cost',
        fc.asyncProperty(linkShape, async (shape) => {
          const growth = await growthAtEightfold(
            (k) => checkSymlinkTargets(linksAt(shape, k), UNLIMITED),
            150,
          );
          expect(growth).toBeLessThan(LINEAR_GROWTH_BOUND);
        }),
        { runs: COST_RUNS },
      );
    },
    fuzzTimeout(),
  );

  it(
    'trees: checkTree takes the same time per entry at n and 8n entries',
    async () => {
      const stem = fc.string({
        minLength: 1,
        maxLength: 10,
        unit: fc.constantFrom('a', 'Z', '.', '-', 'é', '~', ' '),
      });
      const mode = fc.constantFrom('100644', '100755', '40000', '120000', '160000');
      const pattern = fc.array(fc.tuple(mode, stem), { minLength: 1, maxLength: 8 });
      await fuzz(
        'tree-check-cost',
        fc.asyncProperty(pattern, async (entries) => {
          const growth = await growthAtEightfold((n) => checkTree(treeOf(entries, n), true, Infinity), 400);
          expect(growth).toBeLessThan(LINEAR_GROWTH_BOUND);
        }),
        { runs: COST_RUNS },
      );
    },
    fuzzTimeout(),
  );

  it(
    'repositories: a walk over nested trees costs the same per entry at depth d and 8d',
    async () => {
      // Each level holds a few files and one folder, the next level.
      const level = fc.record({
        files: fc.integer({ min: 0, max: 3 }),
        name: fc.constantFrom('d', 'sub', 'é'),
      });
      await fuzz(
        'tree-walk-cost',
        fc.asyncProperty(fc.array(level, { minLength: 1, maxLength: 4 }), async (pattern) => {
          const growth = await growthAtEightfold(async (depth) => {
            const { root, read } = nestedRepo(pattern, depth);
            let seen = 0;
            await walkTree(root, read, () => void seen++, new TimeSlice(Number.POSITIVE_INFINITY));
          }, 40);
          expect(growth).toBeLessThan(LINEAR_GROWTH_BOUND);
        }),
        { runs: COST_RUNS },
      );
    },
    fuzzTimeout(),
  );
});

const enc = new TextEncoder();

/** `n` entries following `pattern` (names made distinct by a counter), as tree bytes. */
function treeOf(pattern: [string, string][], n: number): Uint8Array {
  const parts: Uint8Array[] = [];
  for (let i = 0; i < n; i++) {
    const [mode, stem] = pattern[i % pattern.length];
    parts.push(enc.encode(`${mode} ${stem}${i}\0`), new Uint8Array(20).fill(i & 255));
  }
  return concatBytes(parts);
}

/** Trees `depth` levels deep, each level as `pattern` says, read back through checkTree as a repo would. */
function nestedRepo(pattern: { files: number; name: string }[], depth: number) {
  const store = new Map<string, Uint8Array>();
  const idOf = (n: number) => n.toString(16).padStart(40, '0');
  const bytesOf = (hex: string) =>
    Uint8Array.from(hex.match(/../g) as string[], (h) => Number.parseInt(h, 16));
  let below: string | null = null;
  for (let d = depth; d >= 0; d--) {
    const { files, name } = pattern[d % pattern.length];
    const entries: Uint8Array[] = [];
    for (let f = 0; f < files; f++) entries.push(enc.encode(`100644 f${f}\0`), new Uint8Array(20));
    if (below) entries.push(enc.encode(`40000 ${name}\0`), bytesOf(below));
    const id = idOf(d + 1);
    store.set(id, concatBytes(entries));
    below = id;
  }
  const read = async (oid: string) => checkTree(store.get(oid) as Uint8Array, true, Infinity).entries;
  return { root: below as string, read };
}
