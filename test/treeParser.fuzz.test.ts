import { createHash } from 'node:crypto';
import { deflateSync } from 'node:zlib';
import fc from 'fast-check';
import git from 'isomorphic-git';
import { describe, expect, it } from 'vitest';
import { checkSymlinkTargets, checkTree, isDotGit } from '../workers/pack/treeCheck.ts';
import { expectTypedError, fuzz, fuzzTimeout, mutated } from './support/fuzz.ts';

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
    'checkTree never throws, and what it passes is a tree git would accept',
    async () => {
      const hex40 = /^[0-9a-f]{40}$/;
      await fuzz(
        'tree-check',
        fc.property(treeBytes, (bytes) => {
          const { entries, problem } = checkTree(bytes);
          expect(entries.length * 22).toBeLessThanOrEqual(bytes.length + 22);
          if (problem !== null) return;
          for (const e of entries) {
            expect(e.name === '' || e.name === '.' || e.name === '..' || e.name.includes('/')).toBe(false);
            expect(isDotGit(e.name)).toBe(false);
            expect(e.oid).toMatch(hex40);
          }
        }),
      );
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
