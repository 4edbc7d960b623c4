import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { deflateSync } from 'node:zlib';
import { git } from './git.ts';

const run = promisify(execFile);

/**
 * git's verdict on tree objects: each is stored as a loose object (as `hash-object --literally` would) in
 * one scratch repository, and one `git fsck --strict` judges them all. Returns, for each tree, the fsck
 * message ids git reported about it (`hasDotgit`, `badTree`, … from git-fsck's msg-ids), sorted; an empty
 * list is a tree git accepts. Entries point at objects that are absent: what that makes git say ("broken
 * links", "missing blob") is about the repository, not the tree, and is left out.
 */
export async function fsckTrees(trees: Uint8Array[]): Promise<string[][]> {
  const dir = await mkdtemp(join(tmpdir(), 'blobless-fsck-trees-'));
  try {
    await git(['init', '-q', '--bare', dir]);
    const oids = trees.map((tree) => {
      const object = Buffer.concat([Buffer.from(`tree ${tree.length}\0`), tree]);
      return { oid: createHash('sha1').update(object).digest('hex'), object };
    });
    for (const { oid, object } of new Map(oids.map((o) => [o.oid, o])).values()) {
      await mkdir(join(dir, 'objects', oid.slice(0, 2)), { recursive: true });
      await writeFile(join(dir, 'objects', oid.slice(0, 2), oid.slice(2)), deflateSync(object));
    }
    // fsck exits non-zero when it finds anything: its report is the output either way.
    const output = await run('git', ['-C', dir, 'fsck', '--strict', '--no-dangling', '--no-progress'], {
      maxBuffer: 1 << 28,
      env: { ...process.env, GIT_CONFIG_NOSYSTEM: '1', GIT_CONFIG_GLOBAL: '/dev/null' },
    }).then(
      ({ stdout, stderr }) => stdout + stderr,
      (err: { stdout: string; stderr: string }) => err.stdout + err.stderr,
    );
    const found = new Map<string, Set<string>>();
    for (const m of output.matchAll(/^(?:error|warning) in tree ([0-9a-f]{40}): (\w+): /gm)) {
      if (!found.has(m[1])) found.set(m[1], new Set());
      found.get(m[1])!.add(m[2]);
    }
    return oids.map(({ oid }) => [...(found.get(oid) ?? [])].sort());
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
