/**
 * Test support, Node only: repositories made with git commands and the packs git makes of them, with git
 * itself (index-pack, verify-pack, cat-file) as the oracle. Never imported by runtime code.
 */

import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** Runs git in `cwd` with a clean, fixed environment; returns stdout. Throws with stderr on failure. */
export type GitRunner = (args: string[], options?: { cwd?: string; input?: string | Uint8Array }) => Buffer;

// Deaf to the user's configuration and deterministic: same commands, same object ids everywhere.
const ENV: Record<string, string> = {
  PATH: process.env.PATH ?? '/usr/bin:/bin',
  HOME: '/nonexistent',
  LC_ALL: 'C',
  TZ: 'UTC',
  GIT_CONFIG_NOSYSTEM: '1',
  GIT_CONFIG_GLOBAL: '/dev/null',
  GIT_AUTHOR_NAME: 'Pack Fixture',
  GIT_AUTHOR_EMAIL: 'pack@fixtures.blobless.test',
  GIT_COMMITTER_NAME: 'Pack Fixture',
  GIT_COMMITTER_EMAIL: 'pack@fixtures.blobless.test',
  GIT_CONFIG_COUNT: '3',
  GIT_CONFIG_KEY_0: 'init.defaultBranch',
  GIT_CONFIG_VALUE_0: 'main',
  GIT_CONFIG_KEY_1: 'core.autocrlf',
  GIT_CONFIG_VALUE_1: 'false',
  GIT_CONFIG_KEY_2: 'gc.auto',
  GIT_CONFIG_VALUE_2: '0',
};

export function makeGit(defaultCwd: string): GitRunner & { clock: { tick(): void } } {
  let clock = 1_700_000_000;
  const env = { ...ENV };
  const tick = () => {
    clock += 60;
    env.GIT_AUTHOR_DATE = `${clock} +0000`;
    env.GIT_COMMITTER_DATE = `${clock} +0000`;
  };
  tick();
  const git = (args: string[], options: { cwd?: string; input?: string | Uint8Array } = {}) => {
    const r = spawnSync('git', args, {
      cwd: options.cwd ?? defaultCwd,
      env,
      input: options.input,
      maxBuffer: 1 << 30,
    });
    if (r.status !== 0) throw new Error(`git ${args.join(' ')} failed (${r.status}): ${r.stderr.toString()}`);
    return r.stdout;
  };
  return Object.assign(git, { clock: { tick } });
}

/** Deterministic bytes (xorshift32), incompressible enough that zlib stores them. */
export function noise(length: number, seed: number): Uint8Array {
  const out = new Uint8Array(length);
  let s = seed >>> 0 || 1;
  for (let i = 0; i < length; i++) {
    s ^= s << 13;
    s >>>= 0;
    s ^= s >>> 17;
    s ^= s << 5;
    s >>>= 0;
    out[i] = s & 0xff;
  }
  return out;
}

const lines = (from: number, to: number) => {
  let s = '';
  for (let i = from; i <= to; i++) s += `line ${i}\n`;
  return s;
};

export interface SampleRepo {
  root: string;
  repo: string;
  git: GitRunner;
  /** `git pack-objects --stdout` of every ref, with the given extra options. */
  pack(options?: string[], revs?: string): Uint8Array;
  cleanup(): void;
}

/**
 * A repository with what packs hold in practice: text files edited over 30 commits (long delta chains),
 * nested trees, an empty blob, a 1.3 MB text blob and a 1.1 MB incompressible one (zlib stored blocks),
 * each edited once (deltas against big bases), an annotated and a lightweight tag.
 */
export function makeSampleRepo(): SampleRepo {
  const root = mkdtempSync(join(tmpdir(), 'blobless-pack-'));
  const repo = join(root, 'sample');
  mkdirSync(repo);
  const git = makeGit(repo);
  git(['init', '-q']);
  const write = (path: string, data: string | Uint8Array) => {
    mkdirSync(join(repo, path, '..'), { recursive: true });
    writeFileSync(join(repo, path), data);
  };
  const commit = (message: string) => {
    git(['add', '-A']);
    git(['commit', '-q', '-m', message]);
    git.clock.tick();
  };
  write('README', 'A sample repository for pack tests.\n');
  write('src/a.txt', lines(1, 2000));
  write('src/b.txt', 'b\n');
  write('empty', '');
  write('big.txt', lines(1, 130_000));
  const bin = noise(1_100_000, 7);
  write('noise.bin', bin);
  commit('initial');
  for (let i = 2; i <= 30; i++) {
    write('src/a.txt', lines(1, 2000 + i * 20).replace(`line ${i * 7}\n`, `changed in commit ${i}\n`));
    if (i % 3 === 0) write('src/b.txt', `b\n${lines(1, i)}`);
    if (i === 8) write('nested/deeper/c.txt', lines(5, 60));
    if (i === 12) write('big.txt', lines(1, 130_000).replace('line 65000\n', 'the middle line\n'));
    if (i === 16) {
      bin.set(noise(100, 8), 500_000);
      write('noise.bin', bin);
    }
    if (i === 20) write('nested/deeper/c.txt', lines(5, 80));
    commit(`commit ${i}`);
    if (i === 20) git(['tag', '-a', 'v1.0', '-m', 'version 1.0']);
    if (i === 25) git(['tag', 'light']);
  }
  const pack = (options: string[] = [], revs?: string) =>
    new Uint8Array(
      git(['pack-objects', '--revs', '--stdout', '-q', ...options], {
        input: revs ?? git(['for-each-ref', '--format=%(objectname)']),
      }),
    );
  return { root, repo, git, pack, cleanup: () => rmSync(root, { recursive: true, force: true }) };
}

/** A few commits, for packs small enough to split at every byte. */
export function makeSmallRepo(): SampleRepo {
  const root = mkdtempSync(join(tmpdir(), 'blobless-pack-small-'));
  const repo = join(root, 'small');
  mkdirSync(repo);
  const git = makeGit(repo);
  git(['init', '-q']);
  for (let i = 1; i <= 4; i++) {
    writeFileSync(join(repo, 'notes.txt'), lines(1, 60 + i * 5).replace(`line ${i}\n`, `note ${i}\n`));
    git(['add', '-A']);
    git(['commit', '-q', '-m', `small ${i}`]);
    git.clock.tick();
  }
  git(['tag', '-a', 'v1', '-m', 'small tag']);
  const pack = (options: string[] = [], revs?: string) =>
    new Uint8Array(
      git(['pack-objects', '--revs', '--stdout', '-q', '--delta-base-offset', ...options], {
        input: revs ?? git(['for-each-ref', '--format=%(objectname)']),
      }),
    );
  return { root, repo, git, pack, cleanup: () => rmSync(root, { recursive: true, force: true }) };
}

export interface GitIndexOfPack {
  /** What `git index-pack` writes for the pack. */
  idx: Uint8Array;
  /** The pack checksum index-pack prints. */
  checksum: string;
  /** From `git verify-pack -v`, in pack order: id, type, offset, and the delta base for deltas. */
  objects: { oid: string; type: string; offset: number; deltaBase?: string }[];
  /** Object sizes from `git cat-file --batch-check` (the objects' own sizes, deltas resolved). */
  sizes: Map<string, number>;
}

/** Asks git to index `pack` (written to a scratch directory under `root`). */
export function gitIndexPack(
  git: GitRunner,
  root: string,
  pack: Uint8Array,
  name = 'oracle',
): GitIndexOfPack {
  const dir = mkdtempSync(join(root, `${name}-`));
  const packPath = join(dir, 'x.pack');
  writeFileSync(packPath, pack);
  const out = git(['index-pack', '-o', join(dir, 'x.idx'), packPath], { cwd: dir })
    .toString()
    .trim();
  const checksum = out.replace(/^pack\s+/, '');
  const idx = new Uint8Array(readFileSync(join(dir, 'x.idx')));
  const verify = git(['verify-pack', '-v', join(dir, 'x.idx')], { cwd: dir }).toString();
  const objects: GitIndexOfPack['objects'] = [];
  for (const line of verify.split('\n')) {
    const m = /^([0-9a-f]{40}) (\w+) +\d+ \d+ (\d+)(?: \d+ ([0-9a-f]{40}))?$/.exec(line);
    if (m) objects.push({ oid: m[1], type: m[2], offset: Number(m[3]), deltaBase: m[4] });
  }
  objects.sort((a, b) => a.offset - b.offset);
  // cat-file needs a repository: point one at the scratch pack.
  const objDir = join(dir, 'repo.git');
  git(['init', '-q', '--bare', objDir], { cwd: dir });
  mkdirSync(join(objDir, 'objects', 'pack'), { recursive: true });
  writeFileSync(join(objDir, 'objects', 'pack', `pack-${checksum}.pack`), pack);
  writeFileSync(join(objDir, 'objects', 'pack', `pack-${checksum}.idx`), idx);
  const batch = git(['cat-file', '--batch-check=%(objectname) %(objectsize)'], {
    cwd: objDir,
    input: objects.map((o) => o.oid).join('\n'),
  }).toString();
  const sizes = new Map<string, number>();
  for (const line of batch.trim().split('\n')) {
    const [oid, size] = line.split(' ');
    sizes.set(oid, Number(size));
  }
  return { idx, checksum, objects, sizes };
}
