import { createHash } from 'node:crypto';
import { deflateSync } from 'node:zlib';
import fc from 'fast-check';
import git from 'isomorphic-git';
import { describe, expect, it } from 'vitest';
import { checkSymlinkTargets, checkTree, type TreeCheck } from '../workers/pack/treeCheck.ts';
import { expectTypedError, fuzz, fuzzTimeout, mutated } from './support/fuzz.ts';
import { fsckTrees } from './support/treeOracle.ts';

/** Trees of each verdict (accepted, refused) that git judges after the run. */
const GIT_SAMPLE = 1500;

/**
 * The checks git's fsck makes too; the ones that are ours alone (a backslash, a name of dots, where a
 * symlink points) refuse some trees git accepts.
 */
const GIT_CHECKS = new Set<TreeCheck>([
  'BAD_TREE',
  'EMPTY_NAME',
  'FULL_PATHNAME',
  'HAS_DOT',
  'HAS_DOTDOT',
  'HAS_DOTGIT',
  'DUPLICATE_ENTRIES',
  'TREE_NOT_SORTED',
  'BAD_FILEMODE',
  'GITMODULES_SYMLINK',
]);

/**
 * git's fsck (2.39, fsck.c: fsck_tree) reads an entry's mode into an unsigned short: "320000" is 0120000
 * to it, a symlink, and passes. We refuse any mode that is not one of git's own, and so refuse more.
 */
function gitTruncatesAMode(tree: Uint8Array): boolean {
  const valid = new Set([0o40000, 0o100644, 0o100755, 0o100664, 0o120000, 0o160000]);
  for (let at = 0; at < tree.length; ) {
    const space = tree.indexOf(0x20, at);
    const nul = tree.indexOf(0, space);
    if (space < 0 || nul < 0) return false;
    const mode = Number.parseInt(Buffer.from(tree.subarray(at, space)).toString('latin1'), 8);
    if (mode > 0xffff && valid.has(mode & 0xffff)) return true;
    at = nul + 21;
  }
  return false;
}

// The checkout, readTree and diff walk trees through workers/ops/common/checkedTrees.ts: our checkTree
// (workers/pack/treeCheck.ts) parses and checks the bytes, then isomorphic-git's readTree (its GitTree)
// reads what passed. Both are fuzzed: ours must never throw, isomorphic-git only with its typed errors.
const TYPED = Object.keys(git.Errors);

/** `git.readTree` of `bytes` stored as a loose tree object, through a file system holding only that. */
async function readTreeOf(bytes: Uint8Array) {
  const wrapped = Buffer.concat([Buffer.from(`tree ${bytes.length}\0`), bytes]);
  const oid = createHash('sha1').update(wrapped).digest('hex');
  const loose = `/.git/objects/${oid.slice(0, 2)}/${oid.slice(2)}`;
  const deflated = deflateSync(wrapped);
  const missing = () => Object.assign(new Error('ENOENT'), { code: 'ENOENT' });
  const fs = {
    promises: {
      readFile: async (path: string) => {
        if (path === loose) return deflated;
        throw missing();
      },
      readdir: async () => {
        throw missing();
      },
      stat: async () => {
        throw missing();
      },
      lstat: async () => {
        throw missing();
      },
      readlink: async () => {
        throw missing();
      },
      writeFile: async () => {},
      mkdir: async () => {},
      rmdir: async () => {},
      unlink: async () => {},
      symlink: async () => {},
    },
  };
  return git.readTree({ fs, gitdir: '/.git', oid });
}

const name = fc.oneof(
  fc.constantFrom('a', '.git', '.GIT', '..', '.', '', 'x/y', 'x\\y', 'git~1', '.gitmodules', 'é', ' '),
  fc.string({ maxLength: 12 }),
);
const entry = fc
  .tuple(
    fc.constantFrom('100644', '100755', '40000', '040000', '120000', '160000', '100664', '0', '', '1e3'),
    name,
    fc.uint8Array({ minLength: 20, maxLength: 20 }),
  )
  .map(([mode, n, oid]) => {
    const head = new TextEncoder().encode(`${mode} ${n}\0`);
    const out = new Uint8Array(head.length + 20);
    out.set(head);
    out.set(oid, head.length);
    return out;
  });
const treeBytes = mutated(
  fc.array(entry, { maxLength: 8 }).map((parts) => {
    const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
    let at = 0;
    for (const p of parts) {
      out.set(p, at);
      at += p.length;
    }
    return out;
  }),
);

describe('fuzz: tree parser (isomorphic-git readTree, as the checkout uses it)', () => {
  it(
    'fails only with isomorphic-git typed errors, and yields no more entries than the bytes can hold',
    async () => {
      await fuzz(
        'tree',
        fc.asyncProperty(treeBytes, async (bytes) => {
          try {
            const entries = (await readTreeOf(bytes)).tree;
            // Each entry takes at least "m n\0" and its id: bounded by the input.
            expect(entries.length * 4).toBeLessThanOrEqual(bytes.length);
            for (const e of entries) expect(e.path.includes('/')).toBe(false);
          } catch (error) {
            expectTypedError(error, TYPED);
          }
        }),
      );
    },
    fuzzTimeout(),
  );

  it(
    'checkTree never throws; git fsck --strict accepts what it passes, and refuses what it refuses for a check git has',
    async () => {
      const hex40 = /^[0-9a-f]{40}$/;
      // A sample of each verdict, judged by git in one batch after the run.
      const sample: { bytes: Uint8Array; check: TreeCheck | null }[] = [];
      const taken = { accepted: 0, refused: 0 };
      await fuzz(
        'tree-check',
        fc.property(treeBytes, (bytes) => {
          const { entries, problem } = checkTree(bytes);
          expect(entries.length * 22).toBeLessThanOrEqual(bytes.length + 22);
          const kind = problem === null ? 'accepted' : 'refused';
          if (taken[kind] < GIT_SAMPLE) {
            taken[kind]++;
            sample.push({ bytes: Uint8Array.from(bytes), check: problem?.check ?? null });
          }
          if (problem !== null) return;
          for (const e of entries) expect(e.oid).toMatch(hex40);
        }),
      );
      expect(taken.accepted).toBeGreaterThan(GIT_SAMPLE / 10);
      const verdicts = await fsckTrees(sample.map((s) => s.bytes));
      const disagreements: string[] = [];
      sample.forEach(({ bytes, check }, i) => {
        // git fetch and clone accept a zero-padded tree mode (fsck only warns, unless --strict): so do we.
        const found = verdicts[i].filter((id) => id !== 'zeroPaddedFilemode');
        // What git refuses, it may name otherwise (it stops at the first entry it cannot parse, where we
        // name the first problem in entry order): refusing is what must agree.
        const agrees =
          check === null
            ? found.length === 0
            : !GIT_CHECKS.has(check) ||
              found.length > 0 ||
              (check === 'BAD_FILEMODE' && gitTruncatesAMode(bytes));
        if (!agrees)
          disagreements.push(
            `${Buffer.from(bytes).toString('hex')}: checkTree ${check ?? 'accepted'}, git fsck ${found.join(', ') || 'accepted'}`,
          );
      });
      expect(disagreements).toEqual([]);
    },
    fuzzTimeout(),
  );

  it(
    'checkSymlinkTargets ends on any set of links, loops and climbs included',
    async () => {
      const part = fc.constantFrom('a', 'b', '..', '.', '', '.git', 'C:', '\\', '/');
      const path = fc.array(part, { minLength: 1, maxLength: 4 }).map((p) => p.join('/'));
      await fuzz(
        'symlink-targets',
        fc.property(fc.array(fc.tuple(path, path), { maxLength: 6 }), (pairs) => {
          const problem = checkSymlinkTargets(new Map(pairs));
          if (problem !== null) expect(typeof problem.check).toBe('string');
        }),
      );
    },
    fuzzTimeout(),
  );
});
