// checkout (checkout.ts) against real git upload-pack answers (test/support/uploadPackFetch.ts: `git
// upload-pack --stateless-rpc` per request, no HTTP server) on a repo the git CLI builds here, the engine on
// memory storage. The oracle is `git checkout` of the same commits in a copy: the working tree (kinds,
// executable bits, bytes, link targets), `git ls-files --stage`, HEAD and a clean `git status` of our export,
// and git's own refusal of local changes. A clone costs well under a second, so each mutant of checkout.ts is
// judged in seconds (stryker.config.mjs). Against git http-backend and the fixtures: test/checkout.test.ts,
// test/typeChange.test.ts.
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import git from 'isomorphic-git';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { exportCheckout } from '../../../test/support/cloneOracle.ts';
import { requestLines } from '../../../test/support/craftedServer.ts';
import { datedGitEnv } from '../../../test/support/datedGit.ts';
import { testEngine } from '../../../test/support/engine.ts';
import { failure } from '../../../test/support/repoChecks.ts';
import { uploadPackFetch } from '../../../test/support/uploadPackFetch.ts';
import {
  readDiskWorktree,
  readLightningWorktree,
  type WorktreeEntry,
} from '../../../test/support/worktree.ts';
import { memoryStorage } from '../../storage/memory.ts';
import type { CrashPoint } from '../../store/crashPoints.ts';
import { GITDIR } from '../../store/repoFs.ts';
import { concatBytes, encodePktLine, FLUSH_PKT } from '../../wire/pktLine.ts';
import { maintenanceIdle, scheduleRepack } from '../maintenance/packMaintenance.ts';
import { ensureBlobs } from '../sync/lazyBlobs.ts';
import { type CheckoutHooks, type CheckoutProgress, checkout } from './checkout.ts';

let root: string;
let src: string;
/** Blob requests get a pack without the blobs (a server that lost them) while this is set. */
let emptyBlobAnswers = false;
/** While set, blob requests wait until the next blob request arrives (two requests in flight at once). */
let pairBlobRequests = false;
/** While set, each blob request also wants this blob, as a server sending more than was asked would. */
let extraWant: string | null = null;
/** While set, blob requests leave out `ofs-delta`: git then sends each delta as a REF_DELTA, naming its base. */
let refDeltas = false;
let releaseHeldRequest: (() => void) | null = null;
const served = uploadPackFetch((name) => join(root, name));
const EMPTY_PACK = execFileSync('git', ['pack-objects', '--stdout', '-q'], { input: '' });
/** The engine's storage: its locks are every tab's, so a test can hold a repo's lock as another tab does. */
const storage = memoryStorage();
const { engine, ctx } = testEngine({
  storage,
  fetch: async (input, init) => {
    const body = init?.body ? Buffer.from(init.body as Uint8Array).toString('latin1') : '';
    if (pairBlobRequests && body.includes('command=fetch') && !body.includes('filter')) {
      if (releaseHeldRequest) {
        releaseHeldRequest();
        releaseHeldRequest = null;
      } else await new Promise<void>((go) => (releaseHeldRequest = go));
    }
    if (emptyBlobAnswers && body.includes('command=fetch') && !body.includes('filter')) {
      const section = concatBytes([
        encodePktLine('packfile\n'),
        encodePktLine(concatBytes([Uint8Array.of(1), new Uint8Array(EMPTY_PACK)])),
        FLUSH_PKT,
      ]);
      return new Response(section as BodyInit, {
        headers: { 'Content-Type': 'application/x-git-upload-pack-result' },
      });
    }
    if (refDeltas && body.includes('command=fetch') && !body.includes('filter')) {
      const ofs = Buffer.from(encodePktLine('ofs-delta\n')).toString('latin1');
      expect(body).toContain(ofs);
      const edited = Buffer.from(body.replace(ofs, ''), 'latin1');
      return served.fetch(input, { ...init, body: new Uint8Array(edited) });
    }
    if (extraWant && body.includes('command=fetch') && !body.includes('filter')) {
      const at = body.indexOf('want ') - 4;
      const more = Buffer.from(encodePktLine(`want ${extraWant}\n`)).toString('latin1');
      const edited = Buffer.from(body.slice(0, at) + more + body.slice(at), 'latin1');
      return served.fetch(input, { ...init, body: new Uint8Array(edited) });
    }
    return served.fetch(input, init);
  },
  retry: { attempts: 1, baseDelayMs: 1, maxDelayMs: 1 },
});

let clock = 1_700_000_000;
function gitIn(dir: string, args: string[], input?: string): string {
  clock++;
  return execFileSync('git', args, {
    cwd: dir,
    input,
    env: { ...datedGitEnv(clock), GIT_TERMINAL_PROMPT: '0' },
    stdio: ['pipe', 'pipe', 'pipe'],
  })
    .toString()
    .trim();
}

/** `sh -c script` in the source repo. */
const sh = (script: string) => execFileSync('sh', ['-c', script], { cwd: src });

const ids: Record<'v1' | 'main' | 'other', string> = { v1: '', main: '', other: '' };

// v1 (tagged): every kind of entry; main: a change and a new file; other (from main, only on the server):
// each kind of change: modified, added (in new folders), removed (emptying folders), file ⇄ folder,
// file ⇄ symlink, symlink → folder, executable bit on and off, a submodule dropped.
beforeAll(() => {
  root = mkdtempSync(join(tmpdir(), 'blobless-checkoutfast-'));
  src = join(root, 'src');
  execFileSync('git', ['init', '-q', '-b', 'main', src]);
  gitIn(src, ['config', 'uploadpack.allowFilter', 'true']);
  sh(`mkdir -p d d2f gone/deep
    printf 'a\\n' > a.txt; printf 'keep\\n' > keep.txt; printf 'x\\n' > d/x.txt; printf 'y\\n' > d/y.txt
    printf '#!/bin/sh\\necho run\\n' > run.sh; chmod 755 run.sh; printf 'mode\\n' > mode.sh
    printf 'f2d\\n' > f2d; printf 'in d2f\\n' > d2f/x.txt; printf 'f2l\\n' > f2l; printf 'z\\n' > gone/deep/z.txt
    ln -s a.txt l2f; ln -s keep.txt l2d`);
  gitIn(src, ['add', '.']);
  gitIn(src, ['update-index', '--add', '--cacheinfo', `160000,${'5'.repeat(40)},mod`]);
  gitIn(src, ['commit', '-q', '-m', 'v1']);
  ids.v1 = gitIn(src, ['rev-parse', 'HEAD']);
  gitIn(src, ['tag', 'v1']);
  // An empty folder is an unpopulated submodule to `git add`: it keeps the gitlink.
  sh('mkdir mod');
  sh(`printf 'a, main\\n' > a.txt; printf 'b\\n' > b.txt`);
  gitIn(src, ['add', '.']);
  gitIn(src, ['commit', '-q', '-m', 'main']);
  ids.main = gitIn(src, ['rev-parse', 'HEAD']);
  gitIn(src, ['checkout', '-q', '-b', 'other']);
  sh(`printf 'a, other\\n' > a.txt; rm d/y.txt; rm -r gone; mkdir -p new/sub; printf 'n\\n' > new/sub/n.txt
    chmod 644 run.sh; chmod 755 mode.sh
    rm f2d; mkdir f2d; printf 'inner\\n' > f2d/inner.txt
    rm -r d2f; printf 'd2f is a file\\n' > d2f
    rm f2l; ln -s b.txt f2l; rm l2f; printf 'l2f is a file\\n' > l2f
    rm l2d; mkdir l2d; printf 'l2d/y\\n' > l2d/y.txt`);
  gitIn(src, ['add', '-A']);
  gitIn(src, ['rm', '-q', '--cached', 'mod']);
  gitIn(src, ['commit', '-q', '-m', 'other']);
  ids.other = gitIn(src, ['rev-parse', 'HEAD']);
  gitIn(src, ['checkout', '-q', 'main']);
});

afterAll(async () => {
  await engine.close();
  if (root) rmSync(root, { recursive: true, force: true });
});

/** A clone of the source repo (blob:none, nothing checked out), then its first checkout. */
async function clonedAndCheckedOut(): Promise<string> {
  const { repoId } = await engine.clone({ url: `${served.base}/src` });
  await checkout(ctx, repoId, 'HEAD');
  return repoId;
}

interface Checked {
  tree: WorktreeEntry[];
  stage: string;
}

let copies = 0;
/** A clone of the source repo by git with `rev` checked out (detached): git's working tree and index. */
function gitCopy(rev: string): string {
  const dir = join(root, `git-${copies++}`);
  gitIn(root, ['clone', '-q', '--no-checkout', src, dir]);
  gitIn(dir, ['-c', 'advice.detachedHead=false', 'checkout', '-q', '--detach', rev]);
  return dir;
}

const oracles = new Map<string, Promise<Checked>>();
/** What `git checkout <commit>` leaves: working tree and `git ls-files --stage`. */
function gitsCheckout(commit: string): Promise<Checked> {
  let o = oracles.get(commit);
  if (!o) {
    o = (async () => {
      const dir = gitCopy(commit);
      return { tree: await readDiskWorktree(dir), stage: gitIn(dir, ['ls-files', '--stage']) };
    })();
    oracles.set(commit, o);
  }
  return o;
}

let exports = 0;
/** Our working tree and git directory copied to disk for git. */
async function exported(repoId: string): Promise<string> {
  await maintenanceIdle(ctx, repoId);
  return exportCheckout(ctx, repoId, root, `ours-${exports++}`);
}

/** HEAD as git reads it in an export: the branch it names (null: detached) and the commit. */
function headIn(dir: string): { branch: string | null; oid: string } {
  let branch: string | null;
  try {
    branch = gitIn(dir, ['symbolic-ref', '--short', '-q', 'HEAD']);
  } catch {
    branch = null;
  }
  return { branch, oid: gitIn(dir, ['rev-parse', 'HEAD']) };
}

/** The repo holds `git checkout` of `commit`: files, index, HEAD (on `branch`), and git status finds it clean. */
async function expectLikeGit(repoId: string, commit: string, branch: string | null): Promise<void> {
  const oracle = await gitsCheckout(commit);
  expect(await readLightningWorktree(ctx.store.repoFs.open(repoId))).toEqual(oracle.tree);
  const dir = await exported(repoId);
  expect(gitIn(dir, ['ls-files', '--stage'])).toBe(oracle.stage);
  expect(headIn(dir)).toEqual({ branch, oid: commit });
  expect(
    gitIn(dir, ['-c', 'protocol.allow=never', 'status', '--porcelain', '--ignore-submodules=none']),
  ).toBe('');
  const record = await ctx.store.registry.get(repoId);
  expect({ branch: record?.branch, headOid: record?.headOid }).toEqual({ branch, headOid: commit });
}

/** `git ls-tree -r` of a commit in the source: path to `mode oid`. */
function treeOf(commit: string): Map<string, string> {
  const out = new Map<string, string>();
  for (const line of gitIn(src, ['ls-tree', '-r', commit]).split('\n')) {
    const [meta, path] = line.split('\t');
    const [mode, , oid] = meta.split(' ');
    out.set(path, `${mode} ${oid}`);
  }
  return out;
}

/** The blob ids each blob request (a fetch without a filter) wanted, in order. */
function blobRequests(from: number): string[][] {
  return served.requests
    .slice(from)
    .filter((r) => r.body.includes('command=fetch') && !r.body.includes('filter'))
    .map((r) =>
      requestLines(r.body)
        .filter((l) => l.startsWith('want '))
        .map((l) => l.slice(5)),
    );
}

const OWN_STEPS = [
  'commit',
  'fetch-and-write-files',
  'fetch-blobs',
  'list-files',
  'total',
  'write-and-commit',
  'write-files',
];
/**
 * checkout.ts's own steps in the latest checkout's timeline (User Timing measures, `npm run bench --
 * --profile`), sorted; the blob fetch's are its own.
 */
function checkoutSteps(): string[] {
  const prefix = `${ctx.settings.timelinePrefix}checkout:`;
  return performance
    .getEntriesByType('measure')
    .filter((e) => e.name.startsWith(prefix))
    .map((e) => e.name.slice(prefix.length))
    .filter((name) => OWN_STEPS.includes(name))
    .sort();
}

/** How many times the latest checkout read files from a pack it had stored (its timeline's steps). */
function packStagings(): number {
  return performance.getEntriesByName(`${ctx.settings.timelinePrefix}checkout:pack-files-staged`).length;
}

/** Runs `run` with `hook` called at each crash point the engine passes (crashPoints.ts), where it stands. */
async function withCrashHook<T>(hook: (point: CrashPoint) => void, run: () => Promise<T>): Promise<T> {
  ctx.store.crash.setHook(hook);
  try {
    return await run();
  } finally {
    ctx.store.crash.setHook(undefined);
  }
}

/** Contents the repo's storage holds that no file or folder of its tree names (startup repair's "unnamed"). */
async function unnamedContents(repoId: string): Promise<number[]> {
  const fs = ctx.store.repoFs.open(repoId).promises;
  const named = new Set<number>();
  const walk = async (dir: string): Promise<void> => {
    for (const name of await fs.readdir(dir)) {
      const path = `${dir === '/' ? '' : dir}/${name}`;
      const stat = await fs.lstat(path);
      named.add(stat.ino);
      if (stat.isDirectory()) await walk(path);
    }
  };
  await walk('/');
  return [...(await ctx.store.repoFs.backend(repoId).storedInodes())].filter((ino) => !named.has(ino));
}

describe('switching between branches, tags and commits', () => {
  let repoId: string;

  beforeAll(async () => {
    ({ repoId } = await engine.clone({ url: `${served.base}/src` }));
  });

  it('the first checkout (no working tree yet) writes git checkout of HEAD, and says so', async () => {
    const events: CheckoutProgress[] = [];
    const result = await checkout(ctx, repoId, 'HEAD', {}, { onProgress: (p) => events.push({ ...p }) });
    const tree = treeOf(ids.main);
    const files = [...tree.values()].filter((e) => !e.startsWith('160000')).length;
    expect(result).toMatchObject({ commit: ids.main, branch: 'main', filesWritten: files, filesDeleted: 0 });
    expect(result.blobsFetched).toBe(new Set([...tree.values()].map((e) => e.split(' ')[1])).size - 1);
    expect(events.at(-1)).toEqual({ phase: 'writing-files', files: tree.size, totalFiles: tree.size });
    expect(checkoutSteps()).toEqual(['commit', 'fetch-and-write-files', 'list-files', 'total']);
    // The index holds each entry's stat as lightning-fs has it (git reads them: ls-files --debug), so a
    // status compares stats and reads no file.
    const fs = ctx.store.repoFs.open(repoId).promises;
    const debug = gitIn(await exported(repoId), ['ls-files', '--debug']).split(/\n(?! )/);
    expect(debug.length).toBe(tree.size);
    for (const entry of debug) {
      const [path, ...fields] = entry.split('\n');
      const stat = await fs.lstat(`/${path}`);
      const [mtime, ino, size] = ['mtime', 'ino', 'size'].map(
        (f) => fields.join(' ').match(new RegExp(`\\b${f}: (\\d+)`))?.[1],
      );
      expect([path, mtime, ino, size].map(String)).toEqual(
        [path, Math.floor(stat.mtimeMs / 1000), stat.ino, stat.size].map(String),
      );
    }
    await expectLikeGit(repoId, ids.main, 'main');
  });

  it('main to other, a branch only the server has: made tracking origin/other; every kind of change as git', async () => {
    const before = treeOf(ids.main);
    const after = treeOf(ids.other);
    const stored = new Set(
      [...before.values()].filter((e) => !e.startsWith('160000')).map((e) => e.split(' ')[1]),
    );
    const wanted = [
      ...new Set([...after.values()].map((e) => e.split(' ')[1]).filter((o) => !stored.has(o))),
    ].sort();
    const written = [...after].filter(([path, e]) => before.get(path) !== e).map(([path]) => path);
    const deleted = [...before]
      .filter(([path, e]) => !after.has(path) && !e.startsWith('160000'))
      .map(([path]) => path);
    const from = served.requests.length;
    const events: CheckoutProgress[] = [];
    const result = await checkout(
      ctx,
      repoId,
      'other',
      {},
      { onProgress: (p) => events.push({ ...p }), batching: { size: 2, concurrency: 1 } },
    );
    const asked = blobRequests(from);
    expect(asked.map((r) => r.length)).toEqual(
      Array.from({ length: Math.ceil(wanted.length / 2) }, (_, i) => Math.min(2, wanted.length - 2 * i)),
    );
    expect(asked.flat().sort()).toEqual(wanted);
    expect(result).toEqual({
      commit: ids.other,
      branch: 'other',
      filesWritten: written.length,
      filesDeleted: deleted.length,
      blobsFetched: wanted.length,
      requests: asked.length,
      bytes: expect.any(Number),
    });
    expect(result.bytes).toBeGreaterThan(0);
    // Fetching, then writing from 0 to all, in order.
    const phases = events.map((e) => e.phase);
    expect(phases.indexOf('writing-files')).toBeGreaterThan(phases.lastIndexOf('fetching-blobs'));
    const writing = events.filter((e) => e.phase === 'writing-files');
    expect(writing[0]).toEqual({ phase: 'writing-files', files: 0, totalFiles: 0 });
    const last = writing.at(-1) as { files: number; totalFiles: number };
    expect(last.files).toBe(last.totalFiles);
    expect(last.totalFiles).toBeGreaterThan(0);
    for (let i = 2; i < writing.length; i++) {
      const [a, b] = [writing[i - 1], writing[i]] as { files: number; totalFiles: number }[];
      expect(b.files).toBeGreaterThanOrEqual(a.files);
      expect(b.files).toBeLessThanOrEqual(b.totalFiles);
    }
    // This checkout's steps alone.
    expect(checkoutSteps()).toEqual([
      'commit',
      'fetch-blobs',
      'list-files',
      'total',
      'write-and-commit',
      'write-files',
    ]);
    await expectLikeGit(repoId, ids.other, 'other');
    const dir = await exported(repoId);
    expect(gitIn(dir, ['rev-parse', '--abbrev-ref', 'other@{upstream}'])).toBe('origin/other');
  });

  it('a tag detaches HEAD at its commit; the submodule folder and emptied folders are as git leaves them', async () => {
    const result = await checkout(ctx, repoId, 'v1');
    expect(result).toMatchObject({ commit: ids.v1, branch: null });
    await expectLikeGit(repoId, ids.v1, null);
  });

  it('refs/heads/main names the local branch', async () => {
    const result = await checkout(ctx, repoId, 'refs/heads/main');
    expect(result).toMatchObject({ commit: ids.main, branch: 'main', blobsFetched: 0, requests: 0 });
    await expectLikeGit(repoId, ids.main, 'main');
  });

  it('a remote-tracking branch and an abbreviated commit id detach HEAD', async () => {
    await checkout(ctx, repoId, 'origin/other');
    await expectLikeGit(repoId, ids.other, null);
    await checkout(ctx, repoId, 'refs/remotes/origin/main');
    await expectLikeGit(repoId, ids.main, null);
    await checkout(ctx, repoId, ids.v1.slice(0, 8));
    await expectLikeGit(repoId, ids.v1, null);
  });

  it('HEAD on a detached commit checks that commit out again, and other is now a local branch', async () => {
    const result = await checkout(ctx, repoId, 'HEAD');
    expect(result).toMatchObject({ commit: ids.v1, branch: null, filesWritten: 0, filesDeleted: 0 });
    await checkout(ctx, repoId, 'other');
    await expectLikeGit(repoId, ids.other, 'other');
    await checkout(ctx, repoId, 'main');
    await expectLikeGit(repoId, ids.main, 'main');
  });

  it('a second checkout of the same commit makes no request and writes nothing', async () => {
    const from = served.requests.length;
    const result = await checkout(ctx, repoId, 'main');
    expect(served.requests.length).toBe(from);
    expect(result).toMatchObject({ filesWritten: 0, filesDeleted: 0, blobsFetched: 0, requests: 0 });
  });

  it('an unknown ref is REF_NOT_FOUND, and nothing changes', async () => {
    const err = await failure(checkout(ctx, repoId, 'no-such-ref'));
    expect(err.code).toBe('REF_NOT_FOUND');
    expect(err.message).toBe('"no-such-ref" is not a branch, tag or commit of src.');
    expect((await failure(checkout(ctx, repoId, 'refs/tags/nope'))).code).toBe('REF_NOT_FOUND');
    await expectLikeGit(repoId, ids.main, 'main');
  });
});

/** Applies the same local changes to our working tree and to a git copy on `rev`. */
async function localChanges(
  repoId: string,
  rev: 'main' | 'other',
  changes: Record<string, string>,
  dir = gitCopy(ids[rev]),
): Promise<string> {
  const fs = ctx.store.repoFs.open(repoId).promises;
  for (const [path, text] of Object.entries(changes)) {
    await fs.writeFile(`/${path}`, text, 'utf8');
    writeFileSync(join(dir, path), text);
  }
  return dir;
}

/** The paths git lists when it refuses `git checkout <rev>` in `dir` (tab-indented lines of its message). */
function gitRefusal(dir: string, rev: string): string[] {
  try {
    gitIn(dir, ['checkout', '-q', rev]);
  } catch (err) {
    const stderr = String((err as { stderr?: Buffer }).stderr);
    return stderr
      .split('\n')
      .filter((l) => l.startsWith('\t'))
      .map((l) => l.trim());
  }
  throw new Error('git checked out');
}

describe('local changes, as git checkout treats them', () => {
  let repoId: string;
  let copy: string;

  beforeAll(async () => {
    repoId = await clonedAndCheckedOut();
  });

  it('a change the switch would overwrite: WORKTREE_DIRTY naming what git names; nothing changes', async () => {
    // An untracked file besides: git keeps it, with or without -f.
    copy = await localChanges(repoId, 'main', {
      'a.txt': 'mine\n',
      'keep.txt': 'also mine\n',
      'notes.txt': 'untracked\n',
    });
    const before = await readLightningWorktree(ctx.store.repoFs.open(repoId));
    const err = (await failure(checkout(ctx, repoId, 'other'))) as Error & { code: string; paths: string[] };
    expect(err.code).toBe('WORKTREE_DIRTY');
    expect(err.paths).toEqual(gitRefusal(copy, 'other'));
    expect(await readLightningWorktree(ctx.store.repoFs.open(repoId))).toEqual(before);
    expect(await readLightningWorktree(ctx.store.repoFs.open(repoId))).toEqual(await readDiskWorktree(copy));
    const dir = await exported(repoId);
    expect(headIn(dir)).toEqual({ branch: 'main', oid: ids.main });
    expect(() => gitIn(dir, ['rev-parse', '-q', '--verify', 'refs/heads/other'])).toThrow();
  });

  it('force throws local changes away, as git checkout -f does', async () => {
    // A new file in the index too: git -f drops it, from the index and the working tree.
    const fs = ctx.store.repoFs.open(repoId);
    await fs.promises.writeFile('/staged.txt', 'staged\n', 'utf8');
    await git.add({ fs, dir: '/', gitdir: GITDIR, filepath: 'staged.txt' });
    writeFileSync(join(copy, 'staged.txt'), 'staged\n');
    gitIn(copy, ['add', 'staged.txt']);
    const result = await checkout(ctx, repoId, 'other', { force: true });
    expect(result.branch).toBe('other');
    gitIn(copy, ['checkout', '-q', '-f', 'other']);
    expect(await readLightningWorktree(fs)).toEqual(await readDiskWorktree(copy));
    expect(gitIn(await exported(repoId), ['ls-files', '--stage'])).toBe(gitIn(copy, ['ls-files', '--stage']));
    await fs.promises.unlink('/notes.txt');
    await expectLikeGit(repoId, ids.other, 'other');
  });

  it('without force, a change the switch does not touch is carried over, as git carries it', async () => {
    copy = await localChanges(repoId, 'other', { 'keep.txt': 'carried\n' });
    gitIn(copy, ['checkout', '-q', 'main']);
    await checkout(ctx, repoId, 'main');
    expect(await readLightningWorktree(ctx.store.repoFs.open(repoId))).toEqual(await readDiskWorktree(copy));
    const dir = await exported(repoId);
    expect(gitIn(dir, ['status', '--porcelain'])).toBe(gitIn(copy, ['status', '--porcelain']));
    expect(gitIn(dir, ['ls-files', '--stage'])).toBe(gitIn(copy, ['ls-files', '--stage']));
  });

  it('force with a file where the target has a folder: replaced, as git checkout -f does', async () => {
    await checkout(ctx, repoId, 'main', { force: true });
    copy = await localChanges(repoId, 'main', { f2d: 'edited f2d\n', 'a.txt': 'edited a\n' });
    const err = (await failure(checkout(ctx, repoId, 'other'))) as Error & { code: string; paths: string[] };
    expect(err.code).toBe('WORKTREE_DIRTY');
    // The change of kind and the rest of the switch's conflicts, named at once as git names them.
    expect(err.paths).toEqual(['a.txt', 'f2d']);
    expect(gitRefusal(copy, 'other').sort()).toEqual(err.paths);
    await checkout(ctx, repoId, 'other', { force: true });
    await expectLikeGit(repoId, ids.other, 'other');
  });

  it('a change of kind refused alone: WORKTREE_DIRTY naming it as git does; nothing changes', async () => {
    await checkout(ctx, repoId, 'main', { force: true });
    copy = await localChanges(repoId, 'main', { f2d: 'edited f2d\n' });
    const before = await readLightningWorktree(ctx.store.repoFs.open(repoId));
    // The dry run that looks for other conflicts finds none here.
    const err = (await failure(checkout(ctx, repoId, 'other'))) as Error & { code: string; paths: string[] };
    expect([err.code, err.paths]).toEqual(['WORKTREE_DIRTY', gitRefusal(copy, 'other')]);
    expect(err.paths).toEqual(['f2d']);
    expect(await readLightningWorktree(ctx.store.repoFs.open(repoId))).toEqual(before);
    expect(headIn(await exported(repoId))).toEqual({ branch: 'main', oid: ids.main });
  });

  it.each([
    ['the whole tree (".")', ['.'], ['a.txt', 'f2d']],
    ['f2d alone: a change outside it is not in the way', ['f2d'], ['f2d']],
  ])(
    'a change of kind refused in a checkout of %s: the others named are those in its paths',
    async (_, paths, named) => {
      await checkout(ctx, repoId, 'main', { force: true });
      await localChanges(repoId, 'main', { f2d: 'edited f2d\n', 'a.txt': 'edited a\n' });
      const before = await readLightningWorktree(ctx.store.repoFs.open(repoId));
      const err = (await failure(checkout(ctx, repoId, 'other', { paths }))) as Error & {
        code: string;
        paths: string[];
      };
      expect([err.code, err.paths]).toEqual(['WORKTREE_DIRTY', named]);
      expect(await readLightningWorktree(ctx.store.repoFs.open(repoId))).toEqual(before);
    },
  );
});

describe('an untracked file where the target has a folder', () => {
  it('is refused as git refuses it; with force it is replaced, as git checkout -f replaces it', async () => {
    const repoId = await clonedAndCheckedOut();
    const copy = await localChanges(repoId, 'main', { new: 'untracked\n' });
    const before = await readLightningWorktree(ctx.store.repoFs.open(repoId));
    const err = (await failure(checkout(ctx, repoId, 'other'))) as Error & { code: string; paths: string[] };
    expect([err.code, err.paths]).toEqual(['WORKTREE_DIRTY', gitRefusal(copy, 'other')]);
    expect(await readLightningWorktree(ctx.store.repoFs.open(repoId))).toEqual(before);
    expect(headIn(await exported(repoId))).toEqual({ branch: 'main', oid: ids.main });
    await checkout(ctx, repoId, 'other', { force: true });
    gitIn(copy, ['checkout', '-q', '-f', 'other']);
    expect(await readLightningWorktree(ctx.store.repoFs.open(repoId))).toEqual(await readDiskWorktree(copy));
    await expectLikeGit(repoId, ids.other, 'other');
  });

  it('with force, an untracked folder where the target has a file goes, as with git checkout -f (lead11)', async () => {
    const repoId = await clonedAndCheckedOut();
    await checkout(ctx, repoId, 'other');
    // other removed d/y.txt; an untracked folder of that name holds a file.
    await ctx.store.repoFs.open(repoId).promises.mkdir('/d/y.txt');
    const copy = gitCopy(ids.other);
    mkdirSync(join(copy, 'd/y.txt'));
    await localChanges(repoId, 'other', { 'd/y.txt/u.txt': 'u\n' }, copy);
    const err = (await failure(checkout(ctx, repoId, 'main'))) as Error & { code: string; paths: string[] };
    expect(err.code).toBe('WORKTREE_DIRTY');
    expect(() => gitIn(copy, ['checkout', '-q', 'main'])).toThrow();
    await checkout(ctx, repoId, 'main', { force: true });
    gitIn(copy, ['checkout', '-q', '-f', 'main']);
    expect(await readLightningWorktree(ctx.store.repoFs.open(repoId))).toEqual(await readDiskWorktree(copy));
    await expectLikeGit(repoId, ids.main, 'main');
  });
});

describe('the first checkout, blob by blob', () => {
  it('stages a blob over hookedBytes from its stored pack, the others as they arrive; as git either way', async () => {
    const { repoId } = await engine.clone({ url: `${served.base}/src` });
    const entries = [...treeOf(ids.main).values()].filter((e) => !e.startsWith('160000'));
    const blobs = new Set(entries.map((e) => e.split(' ')[1]));
    const sizes = [...blobs].map((oid) => Number(gitIn(src, ['cat-file', '-s', oid])));
    // One blob a request: what waits to be staged is then one blob, so the cap alone chooses.
    const phases: string[] = [];
    let firstWriting: { files: number } | undefined;
    const result = await checkout(
      ctx,
      repoId,
      'HEAD',
      {},
      {
        hookedBytes: 2,
        batching: { size: 1 },
        onProgress: (p) => {
          phases.push(p.phase);
          if (p.phase === 'writing-files') firstWriting ??= p;
        },
      },
    );
    expect(result.requests).toBe(sizes.length);
    // Files are staged as blobs arrive, but counted only once every blob is here: one bar, then the other;
    // by then every file is staged, from its pack in memory, none read from storage again.
    expect(phases.indexOf('writing-files')).toBeGreaterThan(phases.lastIndexOf('fetching-blobs'));
    expect(firstWriting?.files).toBe(entries.length);
    expect(sizes.filter((s) => s === 2).length).toBeGreaterThan(0);
    expect(packStagings()).toBe(sizes.filter((s) => s > 2).length);
    await expectLikeGit(repoId, ids.main, 'main');
  });

  it('stages from a pack of many blobs those over hookedBytes, once, the rest as they arrive', async () => {
    const { repoId } = await engine.clone({ url: `${served.base}/src` });
    const blobs = new Set(
      [...treeOf(ids.main).values()].filter((e) => !e.startsWith('160000')).map((e) => e.split(' ')[1]),
    );
    const largest = Math.max(...[...blobs].map((oid) => Number(gitIn(src, ['cat-file', '-s', oid]))));
    // One request, one pack: the largest blob passes the cap and is left to the pack's read; the others
    // are staged as they arrive while the queue has room.
    const result = await checkout(ctx, repoId, 'HEAD', {}, { hookedBytes: largest - 1 });
    expect(result.requests).toBe(1);
    expect(packStagings()).toBe(1);
    await expectLikeGit(repoId, ids.main, 'main');
    // Each file staged once: a second staging of one would leave contents no file names.
    expect(await unnamedContents(repoId)).toEqual([]);
  });

  it('stages blobs sent as REF_DELTA from their pack, their bases found by id; as git', async () => {
    const name = 'lead12-deltas';
    const dir = join(root, name);
    execFileSync('git', ['init', '-q', '-b', 'main', dir]);
    gitIn(dir, ['config', 'uploadpack.allowFilter', 'true']);
    // Two files alike but for one line: git sends one as a delta of the other.
    const lines = Array.from({ length: 400 }, (_, i) => `line ${i} of a file git will deltify\n`).join('');
    writeFileSync(join(dir, 'base.txt'), lines);
    writeFileSync(join(dir, 'near.txt'), `${lines}one more line\n`);
    gitIn(dir, ['add', '.']);
    gitIn(dir, ['commit', '-q', '-m', 'deltas']);
    const head = gitIn(dir, ['rev-parse', 'HEAD']);
    const { repoId } = await engine.clone({ url: `${served.base}/${name}` });
    refDeltas = true;
    try {
      // Nothing hooked: every file is read from the stored pack.
      expect(await checkout(ctx, repoId, 'HEAD', {}, { hookedBytes: 0 })).toMatchObject({ blobsFetched: 2 });
    } finally {
      refDeltas = false;
    }
    expect(packStagings()).toBe(1);
    const copy = join(root, `${name}-git`);
    gitIn(root, ['clone', '-q', dir, copy]);
    expect(await readLightningWorktree(ctx.store.repoFs.open(repoId))).toEqual(await readDiskWorktree(copy));
    const ours = await exported(repoId);
    expect(gitIn(ours, ['ls-files', '--stage'])).toBe(gitIn(copy, ['ls-files', '--stage']));
    expect(headIn(ours)).toEqual({ branch: 'main', oid: head });
    // The pack stored holds the delta as git sent it: a REF_DELTA (verify-pack names its base by id).
    const idx = gitIn(ours, ['rev-parse', '--git-path', 'objects/pack']);
    const packs = readdirSync(join(ours, idx)).filter((f) => f.endsWith('.idx'));
    const verified = packs.map((p) => gitIn(join(ours, idx), ['verify-pack', '-v', p])).join('\n');
    expect(verified).toMatch(/^[0-9a-f]{40} blob +\d+ \d+ \d+ 1 [0-9a-f]{40}$/m);
  });

  it('counts files read from stored packs every 50 ms, as soon as 50 ms have passed', async () => {
    const { repoId } = await engine.clone({ url: `${served.base}/src` });
    const blobs = [...treeOf(ids.main).values()].filter((e) => !e.startsWith('160000'));
    await ensureBlobs(ctx, repoId, [...new Set(blobs.map((e) => e.split(' ')[1]))]);
    // newWorktree.ts's clock moves 10 ms each time it is read, so the counts fall where the interval says;
    // the rest of the engine keeps the real one (its locks and flushes wait on it).
    let now = 0;
    const real = performance.now.bind(performance);
    const clock = vi.spyOn(performance, 'now').mockImplementation(() => {
      if (!new Error().stack?.includes('newWorktree.ts')) return real();
      now += 10;
      return now;
    });
    const counts: { files: number; totalFiles: number; at: number }[] = [];
    try {
      await checkout(
        ctx,
        repoId,
        'HEAD',
        {},
        {
          onProgress: (p) => {
            if (p.phase === 'writing-files') counts.push({ ...p, at: now });
          },
        },
      );
    } finally {
      clock.mockRestore();
    }
    // The first count (nothing yet) and the last ones (every file) are told whatever the clock says;
    // between them, each count comes as soon as 50 ms have passed since the one before: the clock is read
    // once a file, so exactly 50 ms later.
    const files = blobs.length;
    expect(counts[0]).toMatchObject({ files: 0, totalFiles: files });
    const between = counts.slice(1).filter((c) => c.files < files);
    expect(between.length).toBeGreaterThan(0);
    const told = [counts[0], ...between];
    for (let i = 1; i < told.length; i++) expect(told[i].at - told[i - 1].at).toBe(50);
    expect(counts.at(-2)).toMatchObject({ files, totalFiles: files });
    await expectLikeGit(repoId, ids.main, 'main');
  });
});

describe('the first checkout while a file view fetches', () => {
  it("a blob both want comes from the view's request; the blob only the view wants is not written; as git", async () => {
    const { repoId } = await engine.clone({ url: `${served.base}/src` });
    const main = treeOf(ids.main);
    const shared = (main.get('a.txt') ?? '').split(' ')[1];
    const viewOnly = (treeOf(ids.other).get('new/sub/n.txt') ?? '').split(' ')[1];
    const from = served.requests.length;
    pairBlobRequests = true;
    try {
      // The view's request waits for the checkout's: the checkout waits for the view's batch for the blob
      // they share, and is told of each object of it.
      const view = ensureBlobs(ctx, repoId, [shared, viewOnly]);
      await checkout(ctx, repoId, 'HEAD');
      await view;
    } finally {
      pairBlobRequests = false;
    }
    const asked = blobRequests(from);
    expect(asked.find((r) => r.includes(viewOnly))?.sort()).toEqual([shared, viewOnly].sort());
    expect(asked.flat().filter((oid) => oid === shared)).toHaveLength(1);
    await expectLikeGit(repoId, ids.main, 'main');
  });
});

describe('the first checkout and pack merges', () => {
  it('of a tag: HEAD detached as git leaves it; a merge held back by another tab is waited for before anything is named, and its own packs set one off', async () => {
    const { repoId } = await engine.clone({ url: `${served.base}/src` });
    await maintenanceIdle(ctx, repoId);
    let otherTabHolds = false;
    let heldAtOnce = false;
    /** Another tab takes the repo's lock (the locks are the storage's) and lets it go a moment later. */
    const otherTabHoldsAWhile = () => {
      void storage.locks.request(ctx.store.locks.lockName(repoId), {}, async () => {
        otherTabHolds = true;
        await new Promise((done) => setTimeout(done, 100));
        otherTabHolds = false;
      });
      heldAtOnce = otherTabHolds;
    };
    const seen: Partial<Record<CrashPoint, boolean>> = {};
    const result = await withCrashHook(
      (point) => {
        // Files named only once the held-back merge ran; after them, a merge for the packs just fetched.
        if (point === 'checkout:blobs-stored') seen[point] = otherTabHolds;
        if (point === 'checkout:files-committed') seen[point] = ctx.maintenance.running.has(repoId);
      },
      () =>
        checkout(
          ctx,
          repoId,
          'v1',
          {},
          {
            onProgress: (p) => {
              if (p.phase !== 'writing-files' || p.files < p.totalFiles || heldAtOnce) return;
              // Every blob stored and every file staged: another tab takes the lock, and a lazy fetch's
              // merge set off now waits for that tab to let it go.
              otherTabHoldsAWhile();
              scheduleRepack(ctx, repoId);
            },
          },
        ),
    );
    expect(heldAtOnce).toBe(true);
    expect(seen).toEqual({ 'checkout:blobs-stored': false, 'checkout:files-committed': true });
    expect(result).toMatchObject({ commit: ids.v1, branch: null });
    expect(result.blobsFetched).toBeGreaterThan(0);
    await expectLikeGit(repoId, ids.v1, null);
  });

  it("under the repo's lock (the API's checkout), a merge set off meanwhile waits for that lock, not the checkout for it", async () => {
    const { repoId } = await engine.clone({ url: `${served.base}/src` });
    await maintenanceIdle(ctx, repoId);
    let setOff = false;
    await engine.repo(repoId).checkout(
      { ref: 'HEAD' },
      {
        onProgress: (p) => {
          if (p.phase !== 'fetching-blobs' || setOff) return;
          // As a file view's lazy fetch does while the checkout fetches: the merge is deferred.
          setOff = true;
          scheduleRepack(ctx, repoId);
        },
      },
    );
    expect(setOff).toBe(true);
    await expectLikeGit(repoId, ids.main, 'main');
    // A checkout that waited for that merge would wait for ever: this deadline, not the suite's, says so.
  }, 30_000);
});

describe('what hasNoWorktree finds beside .git', () => {
  it('an untracked file before the first checkout: checked out around it, as onto a working tree', async () => {
    const { repoId } = await engine.clone({ url: `${served.base}/src` });
    const fs = ctx.store.repoFs.open(repoId);
    await fs.promises.writeFile('/notes.txt', 'mine\n', 'utf8');
    await checkout(ctx, repoId, 'HEAD');
    // Not staged ahead into nothing: isomorphic-git's checkout, which looks at what is there.
    expect(checkoutSteps()).toContain('write-files');
    const oracle = await gitsCheckout(ids.main);
    const ours = await readLightningWorktree(fs);
    expect(ours.filter((e) => e.path !== 'notes.txt')).toEqual(oracle.tree);
    expect(await fs.promises.readFile('/notes.txt', 'utf8')).toBe('mine\n');
    const dir = await exported(repoId);
    expect(gitIn(dir, ['ls-files', '--stage'])).toBe(oracle.stage);
    expect(gitIn(dir, ['status', '--porcelain'])).toBe('?? notes.txt');
  });

  it('every file deleted after a checkout: the switch writes what it changes and leaves the rest deleted, as git', async () => {
    const repoId = await clonedAndCheckedOut();
    const copy = gitCopy(ids.main);
    const fs = ctx.store.repoFs.open(repoId).promises;
    const removeAll = async (dir: string): Promise<void> => {
      for (const name of await fs.readdir(dir)) {
        const path = `${dir === '/' ? '' : dir}/${name}`;
        if (path === GITDIR) continue;
        if ((await fs.lstat(path)).isDirectory()) {
          await removeAll(path);
          await fs.rmdir(path);
        } else await fs.unlink(path);
      }
    };
    await removeAll('/');
    sh(`cd ${copy} && ls -A | grep -vx .git | xargs rm -rf`);
    await checkout(ctx, repoId, 'other');
    gitIn(copy, ['checkout', '-q', 'other']);
    expect(await readLightningWorktree(ctx.store.repoFs.open(repoId))).toEqual(await readDiskWorktree(copy));
    const dir = await exported(repoId);
    expect(gitIn(dir, ['status', '--porcelain'])).toBe(gitIn(copy, ['status', '--porcelain']));
    expect(gitIn(dir, ['ls-files', '--stage'])).toBe(gitIn(copy, ['ls-files', '--stage']));
  });
});

describe('a submodule folder already gone', () => {
  it('when the target drops the submodule: the switch goes on, as git checkout does', async () => {
    const repoId = await clonedAndCheckedOut();
    await ctx.store.repoFs.open(repoId).promises.rmdir('/mod');
    await checkout(ctx, repoId, 'other');
    await expectLikeGit(repoId, ids.other, 'other');
  });
});

describe('a checkout that fails or is cancelled leaves HEAD, index and files as they were', () => {
  let repoId: string;

  beforeAll(async () => {
    repoId = await clonedAndCheckedOut();
  });

  async function expectMain(): Promise<void> {
    expect(ctx.store.repoFs.backend(repoId).pendingWrites).toBe(0);
    await (
      ctx.store.repoFs.open(repoId).promises as unknown as { _deactivate(): Promise<void> }
    )._deactivate();
    await expectLikeGit(repoId, ids.main, 'main');
    await expect(
      git.resolveRef({ fs: ctx.store.repoFs.open(repoId), gitdir: GITDIR, ref: 'refs/heads/other' }),
    ).rejects.toThrow();
  }

  const aborted = async (hooks: (c: AbortController) => CheckoutHooks) => {
    const controller = new AbortController();
    const err = await failure(checkout(ctx, repoId, 'other', {}, hooks(controller)));
    expect(err.code).toBe('ABORTED');
    await expectMain();
  };

  it('cancelled before it starts: nothing asked', async () => {
    const from = served.requests.length;
    await aborted((c) => {
      c.abort();
      return { signal: c.signal };
    });
    expect(served.requests.length).toBe(from);
    // Nothing is looked at: not even the ref.
    const signal = AbortSignal.abort();
    expect((await failure(checkout(ctx, repoId, 'no-such-ref', {}, { signal }))).code).toBe('ABORTED');
  });

  it('a blob the server does not send: MissingObjectError naming a file that wants it', async () => {
    const before = treeOf(ids.main);
    const needing = new Map(
      [...treeOf(ids.other)].filter(
        ([, e]) => ![...before.values()].some((b) => b.endsWith(e.split(' ')[1])),
      ),
    );
    emptyBlobAnswers = true;
    try {
      const err = (await failure(checkout(ctx, repoId, 'other'))) as Error & { code: string; path?: string };
      expect(err.code).toBe('MISSING_OBJECT');
      expect(needing.has(err.path ?? '')).toBe(true);
    } finally {
      emptyBlobAnswers = false;
    }
    await expectMain();
  });

  it('cancelled while fetching blobs', async () => {
    await aborted((c) => ({
      signal: c.signal,
      batching: { size: 1, concurrency: 1 },
      onProgress: (p) => {
        if (p.phase === 'fetching-blobs') queueMicrotask(() => c.abort());
      },
    }));
  });

  it('cancelled while writing files', async () => {
    let wrote = 0;
    await aborted((c) => ({
      signal: c.signal,
      onProgress: (p) => {
        if (p.phase === 'writing-files' && p.files > 0) {
          wrote = p.files;
          c.abort();
        }
      },
    }));
    expect(wrote).toBeGreaterThan(0);
  });

  /** Fails the write of /a.txt with "no space left", after `before` ran. */
  async function failingWrite<T>(before: () => void, run: () => Promise<T>): Promise<T> {
    const fs = ctx.store.repoFs.open(repoId).promises;
    const { writeFile } = fs;
    fs.writeFile = (async (path: string, ...rest: unknown[]) => {
      if (path.replace(/\/+/g, '/') === '/a.txt') {
        before();
        throw new Error('no space left');
      }
      return (writeFile as (...a: unknown[]) => Promise<void>)(path, ...rest);
    }) as typeof fs.writeFile;
    try {
      return await run();
    } finally {
      fs.writeFile = writeFile;
    }
  }

  it('a write that fails: its error as it is, and nothing changed', async () => {
    const err = await failingWrite(
      () => undefined,
      () => failure(checkout(ctx, repoId, 'other')),
    );
    // isomorphic-git gathers the errors of its writes.
    const errors = (err as unknown as { errors: Error[] }).errors;
    expect([err.name, errors.map((e) => e.message)]).toEqual(['MultipleGitError', ['no space left']]);
    await expectMain();
  });

  it('cancelled as a write fails: ABORTED, the cancel named rather than the write', async () => {
    const controller = new AbortController();
    const err = await failingWrite(
      () => controller.abort(),
      () => failure(checkout(ctx, repoId, 'other', {}, { signal: controller.signal })),
    );
    expect(err.code).toBe('ABORTED');
    await expectMain();
  });

  it('forced over a local change, its forced pass failing to write: that failure as it is, nothing changed', async () => {
    const fs = ctx.store.repoFs.open(repoId);
    await fs.promises.writeFile('/a.txt', 'mine\n', 'utf8');
    const before = await readLightningWorktree(fs);
    // The first pass stops on a.txt (in the way); the pass that forces it fails to write it.
    const err = await failingWrite(
      () => undefined,
      () => failure(checkout(ctx, repoId, 'other', { force: true })),
    );
    const errors = (err as unknown as { errors?: Error[] }).errors;
    expect([err.name, errors?.map((e) => e.message)]).toEqual(['MultipleGitError', ['no space left']]);
    expect(await readLightningWorktree(fs)).toEqual(before);
    await fs.promises.writeFile('/a.txt', 'a, main\n', 'utf8');
    await fs.promises.flush();
    await expectMain();
  });

  it('then succeeds', async () => {
    await checkout(ctx, repoId, 'other');
    await expectLikeGit(repoId, ids.other, 'other');
  });
});

describe('a first checkout that fails or is cancelled leaves no working tree', () => {
  let repoId: string;

  beforeAll(async () => {
    ({ repoId } = await engine.clone({ url: `${served.base}/src` }));
    // Each file's contents stored as soon as it is staged, so that a failure finds them stored to delete.
    ctx.store.repoFs.backend(repoId).stageBytes = 1;
  });

  async function expectNothing(): Promise<void> {
    expect(await readLightningWorktree(ctx.store.repoFs.open(repoId))).toEqual([]);
    const fs = ctx.store.repoFs.open(repoId).promises;
    await expect(fs.stat(`${GITDIR}/index`)).rejects.toThrow();
    // The files' contents staged ahead are deleted with them, not left for startup repair.
    expect(await unnamedContents(repoId)).toEqual([]);
  }

  it('a blob the server does not send: MissingObjectError naming a file that wants it', async () => {
    emptyBlobAnswers = true;
    try {
      const err = (await failure(checkout(ctx, repoId, 'HEAD'))) as Error & { code: string; path?: string };
      expect(err.code).toBe('MISSING_OBJECT');
      expect(treeOf(ids.main).has(err.path ?? '')).toBe(true);
    } finally {
      emptyBlobAnswers = false;
    }
    await expectNothing();
  });

  it('cancelled while blobs arrive, some files staged: ABORTED, and their contents deleted', async () => {
    const controller = new AbortController();
    const err = await failure(
      checkout(
        ctx,
        repoId,
        'HEAD',
        {},
        {
          signal: controller.signal,
          batching: { size: 1, concurrency: 1 },
          onProgress: (p) => {
            if (p.phase === 'fetching-blobs' && p.objects >= 3) controller.abort();
          },
        },
      ),
    );
    expect(err.code).toBe('ABORTED');
    await expectNothing();
  });

  it('cancelled once every file is staged, before they are named: ABORTED', async () => {
    const controller = new AbortController();
    const err = await failure(
      checkout(
        ctx,
        repoId,
        'HEAD',
        {},
        {
          signal: controller.signal,
          onProgress: (p) => {
            if (p.phase === 'writing-files' && p.files > 0 && p.files === p.totalFiles) controller.abort();
          },
        },
      ),
    );
    expect(err.code).toBe('ABORTED');
    await expectNothing();
  });

  it('then succeeds with the blobs the failures fetched: no request, and no pack merge set off', async () => {
    const from = served.requests.length;
    let merging: boolean | undefined;
    const writing: { files: number; totalFiles: number; at: number }[] = [];
    const result = await withCrashHook(
      (point) => {
        if (point === 'checkout:files-committed') merging = ctx.maintenance.running.has(repoId);
      },
      () =>
        checkout(
          ctx,
          repoId,
          'HEAD',
          {},
          {
            onProgress: (p) => {
              if (p.phase === 'writing-files') writing.push({ ...p, at: performance.now() });
            },
          },
        ),
    );
    expect([result.blobsFetched, served.requests.length - from, merging]).toEqual([0, 0, false]);
    await expectLikeGit(repoId, ids.main, 'main');
    // Each file read from the stored packs is counted, at most every PROGRESS_INTERVAL_MS (50) until all
    // are; the staging ends on every file (the gitlink aside), before the checkout's own last count.
    const files = [...treeOf(ids.main).values()].filter((e) => !e.startsWith('160000')).length;
    expect(writing.at(-2)).toMatchObject({ files, totalFiles: files });
    const partial = writing.filter((w) => w.files < w.totalFiles);
    for (let i = 1; i < partial.length; i++) {
      expect(partial[i].at - partial[i - 1].at).toBeGreaterThan(45);
    }
  });
});

describe('a first checkout failing as its files are named (lead11)', () => {
  let repoId: string;

  beforeAll(async () => {
    ({ repoId } = await engine.clone({ url: `${served.base}/src` }));
  });

  const failAt =
    (point: CrashPoint, also: () => void = () => undefined) =>
    (at: CrashPoint) => {
      if (at !== point) return;
      also();
      throw new Error('lead11: the write failed');
    };

  async function expectNothing(): Promise<void> {
    expect(await readLightningWorktree(ctx.store.repoFs.open(repoId))).toEqual([]);
    await expect(ctx.store.repoFs.open(repoId).promises.stat(`${GITDIR}/index`)).rejects.toThrow();
  }

  it('without a signal: that error as it is, and no working tree', async () => {
    const err = await failure(
      withCrashHook(failAt('checkout:files-written'), () => checkout(ctx, repoId, 'HEAD')),
    );
    expect([err.code, err.message]).toEqual([undefined, 'lead11: the write failed']);
    await expectNothing();
  });

  it('cancelled as the write fails: ABORTED, the cancel named rather than the write', async () => {
    const controller = new AbortController();
    const err = await failure(
      withCrashHook(
        failAt('checkout:files-written', () => controller.abort()),
        () => checkout(ctx, repoId, 'HEAD', {}, { signal: controller.signal }),
      ),
    );
    expect(err.code).toBe('ABORTED');
    await expectNothing();
  });

  it('then succeeds', async () => {
    await checkout(ctx, repoId, 'HEAD');
    await expectLikeGit(repoId, ids.main, 'main');
  });

  it('a blob the server sent unasked, in the answer to its request: stored, and no file written from it', async () => {
    const { repoId: fresh } = await engine.clone({ url: `${served.base}/src` });
    const main = new Set([...treeOf(ids.main).values()].map((e) => e.split(' ')[1]));
    const other = [...treeOf(ids.other).values()].find(
      (e) => e.startsWith('100') && !main.has(e.split(' ')[1]),
    );
    const unasked = (other ?? '').split(' ')[1];
    expect(unasked).toMatch(/^[0-9a-f]{40}$/);
    extraWant = unasked;
    try {
      await checkout(ctx, fresh, 'HEAD');
    } finally {
      extraWant = null;
    }
    await expectLikeGit(fresh, ids.main, 'main');
    const dir = await exported(fresh);
    expect(gitIn(dir, ['cat-file', '-t', unasked])).toBe('blob');
  });
});

describe('sparse checkouts and onBranch', () => {
  let repoId: string;

  beforeAll(async () => {
    repoId = await clonedAndCheckedOut();
  });

  it('paths outside the repository, or not in the commit, are PATH_NOT_FOUND before anything is fetched', async () => {
    const from = served.requests.length;
    const outside = await failure(checkout(ctx, repoId, 'other', { paths: ['d/../..'] }));
    expect([outside.code, outside.message]).toEqual([
      'PATH_NOT_FOUND',
      '"d/../.." is not a path inside the repository.',
    ]);
    const dot = await failure(checkout(ctx, repoId, 'other', { paths: ['d/./x.txt'] }));
    expect(dot.message).toBe('"d/./x.txt" is not a path inside the repository.');
    const one = await failure(checkout(ctx, repoId, 'other', { paths: ['d', 'gone'] }));
    expect([one.code, one.message]).toEqual([
      'PATH_NOT_FOUND',
      `"gone" is not in commit ${ids.other.slice(0, 10)}.`,
    ]);
    const two = await failure(checkout(ctx, repoId, 'other', { paths: ['nope', 'd/nope'] }));
    expect(two.message).toBe(`"nope", "d/nope" are not in commit ${ids.other.slice(0, 10)}.`);
    expect(served.requests.length).toBe(from);
    await expectLikeGit(repoId, ids.main, 'main');
  });

  it('"." is the whole tree', async () => {
    await checkout(ctx, repoId, 'other', { paths: ['.'] });
    await expectLikeGit(repoId, ids.other, 'other');
  });

  it('onBranch moves that branch to the commit and HEAD to the branch, as git checkout -B', async () => {
    const result = await checkout(ctx, repoId, ids.v1, { onBranch: 'main' });
    expect(result).toMatchObject({ commit: ids.v1, branch: 'main' });
    await expectLikeGit(repoId, ids.v1, 'main');
  });

  it('onBranch back to main, then a sparse checkout from there', async () => {
    await checkout(ctx, repoId, ids.main, { onBranch: 'main' });
    await expectLikeGit(repoId, ids.main, 'main');
  });

  it('on a working tree: only what is under paths changes (git checkout --no-overlay other -- paths); HEAD moves', async () => {
    const copy = gitCopy(ids.main);
    gitIn(copy, ['checkout', '--no-overlay', ids.other, '--', 'd', 'f2d', 'new/sub']);
    const result = await checkout(ctx, repoId, 'other', { paths: ['/d/', 'f2d//', 'new/sub'] });
    expect(result).toMatchObject({ commit: ids.other, branch: 'other', filesWritten: 2, filesDeleted: 2 });
    expect(await readLightningWorktree(ctx.store.repoFs.open(repoId))).toEqual(await readDiskWorktree(copy));
    const dir = await exported(repoId);
    expect(gitIn(dir, ['ls-files', '--stage'])).toBe(gitIn(copy, ['ls-files', '--stage']));
    expect(headIn(dir)).toEqual({ branch: 'other', oid: ids.other });
  });

  it('a first checkout with paths writes only those', async () => {
    const { repoId: fresh } = await engine.clone({ url: `${served.base}/src` });
    const result = await checkout(ctx, fresh, 'HEAD', { paths: ['d/x.txt', 'd/y.txt'] });
    expect(result).toMatchObject({ commit: ids.main, branch: 'main', filesWritten: 2, blobsFetched: 2 });
    expect((await readLightningWorktree(ctx.store.repoFs.open(fresh))).map((e) => e.path)).toEqual([
      'd',
      'd/x.txt',
      'd/y.txt',
    ]);
  });
});

describe('a commit with a tree git refuses outside the paths checked out', () => {
  // Its own server repo, made by plumbing: main has good/ and bad/, bad/ holding a folder named .git
  // (fsck's HAS_DOTGIT), which git's sparse checkout of good/ never reads; fine (main's child) has neither
  // bad/ nor anything refused.
  let bare: string;
  const commits = { refused: '', fine: '' };

  beforeAll(() => {
    bare = join(root, 'refused-outside-paths.git');
    execFileSync('git', ['init', '-q', '--bare', '-b', 'main', bare]);
    gitIn(bare, ['config', 'uploadpack.allowFilter', 'true']);
    const blob = (text: string) => gitIn(bare, ['hash-object', '-w', '--stdin'], text);
    const tree = (entries: string[]) => gitIn(bare, ['mktree'], `${entries.join('\n')}\n`);
    const planted = tree([`100644 blob ${blob('[core]\n\tbare = true\n')}\tconfig`]);
    const bad = tree([`040000 tree ${planted}\t.git`]);
    // A link alone in its folder: the first checkout makes the folder for it.
    const deeper = tree([`120000 blob ${blob('../g.txt')}\tlink`]);
    const good = tree([`100644 blob ${blob('g\n')}\tg.txt`, `040000 tree ${deeper}\tdeeper`]);
    const top = tree([`040000 tree ${bad}\tbad`, `040000 tree ${good}\tgood`]);
    commits.refused = gitIn(bare, ['commit-tree', '-m', 'bad/.git', top]);
    const fineGood = tree([`100644 blob ${blob('g, fine\n')}\tg.txt`]);
    const fine = tree([`040000 tree ${fineGood}\tgood`, `100644 blob ${blob('n\n')}\tn.txt`]);
    commits.fine = gitIn(bare, ['commit-tree', '-p', commits.refused, '-m', 'fine', fine]);
    gitIn(bare, ['update-ref', 'refs/heads/main', commits.refused]);
    gitIn(bare, ['update-ref', 'refs/heads/fine', commits.fine]);
  });

  it('a first checkout of good/ alone, as git checks it out; then a switch away from it, as git switches', async () => {
    const { repoId } = await engine.clone({ url: `${served.base}/refused-outside-paths.git` });
    const copy = join(root, `git-${copies++}`);
    gitIn(root, ['clone', '-q', '--no-checkout', bare, copy]);
    const fs = ctx.store.repoFs.open(repoId);
    const asGit = async () => {
      expect(await readLightningWorktree(fs)).toEqual(await readDiskWorktree(copy));
      expect(gitIn(await exported(repoId), ['ls-files', '--stage'])).toBe(
        gitIn(copy, ['ls-files', '--stage']),
      );
    };

    const sparse = await checkout(ctx, repoId, 'HEAD', { paths: ['good'] });
    gitIn(copy, ['checkout', commits.refused, '--', 'good']);
    expect(sparse).toMatchObject({ commit: commits.refused, branch: 'main', filesWritten: 2 });
    await asGit();
    // HEAD names the refused commit: what it had checked out is looked up in its tree, refused or not.
    const switched = await checkout(ctx, repoId, 'fine');
    gitIn(copy, ['checkout', '-q', 'fine']);
    expect(switched).toMatchObject({ commit: commits.fine, branch: 'fine' });
    await asGit();
  });
});

describe('symlinks whose targets no file system holds, fetched by the first checkout', () => {
  it('HOSTILE_TREE naming the first link staged; the staging stops there, and nothing is kept', async () => {
    // Its own server repo: two links of 4,096 bytes (maxSymlinkTargetBytes is PATH_MAX's 4,095), one blob
    // each, and a file.
    const bare = join(root, 'long-link-targets.git');
    execFileSync('git', ['init', '-q', '--bare', '-b', 'main', bare]);
    gitIn(bare, ['config', 'uploadpack.allowFilter', 'true']);
    const blob = (text: string) => gitIn(bare, ['hash-object', '-w', '--stdin'], text);
    const links = new Map([
      [blob('a'.repeat(4096)), 'a-link'],
      [blob('b'.repeat(4096)), 'b-link'],
    ]);
    const entries = [...links].map(([oid, path]) => `120000 blob ${oid}\t${path}`);
    const tree = gitIn(bare, ['mktree'], `${[...entries, `100644 blob ${blob('f\n')}\tfile`].join('\n')}\n`);
    gitIn(bare, ['update-ref', 'refs/heads/main', gitIn(bare, ['commit-tree', '-m', 'long links', tree])]);

    const { repoId } = await engine.clone({ url: `${served.base}/long-link-targets.git` });
    ctx.store.repoFs.backend(repoId).stageBytes = 1;
    const from = served.requests.length;
    // One blob a request, one after the other: each link is staged (and refused) as its pack arrives.
    const err = (await failure(
      checkout(ctx, repoId, 'HEAD', {}, { batching: { size: 1, concurrency: 1 } }),
    )) as Error & { code: string; path: string; check: string };
    const first = links.get(
      blobRequests(from)
        .flat()
        .find((oid) => links.has(oid)) ?? '',
    );
    expect([err.name, err.code, err.check, err.path]).toEqual([
      'HostileTreeError',
      'HOSTILE_TREE',
      'SYMLINK_TOO_LONG',
      first,
    ]);
    expect(await readLightningWorktree(ctx.store.repoFs.open(repoId))).toEqual([]);
    expect(await unnamedContents(repoId)).toEqual([]);
  });
});
