import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { expect } from 'vitest';
import type { EngineContext } from '../../workers/engine/engine.ts';
import { GITDIR } from '../../workers/store/repoFs.ts';
import { exportDir } from './exportGitDir.ts';
import { git } from './git.ts';
import { exportWorktree } from './worktree.ts';

/** `git ls-remote <options> <url> <patterns>` as sorted `oid name` lines: what a clone must report as its refs. */
export async function lsRemoteLines(
  url: string,
  options: string[] = [],
  patterns: string[] = [],
): Promise<string[]> {
  const out = await git(['ls-remote', ...options, url, ...patterns]);
  return out
    .trim()
    .split('\n')
    .filter(Boolean)
    .map((l) => l.replace('\t', ' '))
    .sort();
}

/** A clone's refs in the same form, peeled tags as `name^{}` lines. */
export function refLines(refs: { name: string; oid: string; peeled?: string }[]): string[] {
  const lines: string[] = [];
  for (const r of refs) {
    lines.push(`${r.oid} ${r.name}`);
    if (r.peeled) lines.push(`${r.peeled} ${r.name}^{}`);
  }
  return lines.sort();
}

/** `git cat-file --batch-all-objects` of a git directory: every object id it holds, sorted. */
export async function storedObjects(gitDir: string, env?: Record<string, string>): Promise<string[]> {
  const out = await git(['cat-file', '--batch-all-objects', '--batch-check=%(objectname)'], {
    cwd: gitDir,
    env,
  });
  return out.trim().split('\n').filter(Boolean).sort();
}

/** `git rev-list --objects <args>` in the bare repository: the objects a clone of those refs must hold. */
export async function reachableObjects(bare: string, args: string[]): Promise<string[]> {
  const out = await git(['rev-list', '--objects', ...args], { cwd: bare });
  return out
    .trim()
    .split('\n')
    .filter(Boolean)
    .map((l) => l.slice(0, 40))
    .sort();
}

/** Copies a repo's git directory out of lightning-fs to `${scratch}/${name}` for the git CLI. */
export async function exportRepo(
  ctx: EngineContext,
  repoId: string,
  scratch: string,
  name: string,
): Promise<string> {
  const dest = join(scratch, `${name}-${repoId}`);
  await exportDir(ctx.store.repoFs.open(repoId), GITDIR, dest);
  return dest;
}

let dotGitExports = 0;

/**
 * The repo's git directory copied out as the `.git` of a new folder under `scratch`, without a working tree:
 * git runs in the folder returned. Each call makes a new folder, so a test can export the same repo twice.
 */
export async function exportAsDotGit(ctx: EngineContext, repoId: string, scratch: string): Promise<string> {
  const dir = join(scratch, `export-${dotGitExports++}`);
  await exportDir(ctx.store.repoFs.open(repoId), GITDIR, join(dir, '.git'));
  return dir;
}

/** The repo's working tree with its git directory in `.git`, copied out for git: `git status` runs there. */
export async function exportCheckout(
  ctx: EngineContext,
  repoId: string,
  scratch: string,
  name: string,
): Promise<string> {
  const dest = join(scratch, `${name}-${repoId}`);
  const fs = ctx.store.repoFs.open(repoId);
  await exportWorktree(fs, dest);
  await exportDir(fs, GITDIR, join(dest, '.git'));
  return dest;
}

/** Every `.pack` of `gitDir` has its `.idx` and the other way round, and `git verify-pack` accepts each. */
export async function expectWholePacks(gitDir: string): Promise<void> {
  const names = await readdir(join(gitDir, 'objects', 'pack'));
  const stems = (ext: string) =>
    names
      .filter((n) => n.endsWith(ext))
      .map((n) => n.slice(0, -ext.length))
      .sort();
  expect(stems('.idx')).toEqual(stems('.pack'));
  for (const stem of stems('.pack'))
    await git(['verify-pack', join(gitDir, 'objects', 'pack', `${stem}.idx`)]);
}

/**
 * Exports the repo and checks it with git: `fsck --connectivity-only` passes and every pack is whole.
 * Returns the objects the export's packs hold.
 */
export async function checkedExport(
  ctx: EngineContext,
  repoId: string,
  scratch: string,
  name: string,
): Promise<string[]> {
  const dir = await exportRepo(ctx, repoId, scratch, name);
  await git(['fsck', '--connectivity-only', '--no-progress'], { cwd: dir });
  await expectWholePacks(dir);
  return storedObjects(dir);
}

/**
 * The clone test's oracle for a stored repo, in full: its objects are exactly `rev-list --objects
 * <revList>` of the served repository, `git fsck` accepts it, and every `.idx` is the bytes `git index-pack`
 * writes for its pack.
 */
export async function expectGitDirMatches(opts: {
  ctx: EngineContext;
  repoId: string;
  bare: string;
  revList: string[];
  scratch: string;
}): Promise<string> {
  const dir = await exportRepo(opts.ctx, opts.repoId, opts.scratch, 'oracle');
  expect(await storedObjects(dir)).toEqual(await reachableObjects(opts.bare, opts.revList));
  await git(['fsck', '--no-progress', '--connectivity-only'], { cwd: dir });
  const packDir = join(dir, 'objects/pack');
  const packs = (await readdir(packDir)).filter((f) => f.endsWith('.pack'));
  expect(packs.length).toBeGreaterThan(0);
  for (const pack of packs) {
    const oracle = join(opts.scratch, `${opts.repoId}-${pack}.idx`);
    await git(['index-pack', '-o', oracle, join(packDir, pack)]);
    const ours = await readFile(join(packDir, pack.replace(/\.pack$/, '.idx')));
    expect(Buffer.compare(ours, await readFile(oracle)), `${pack}: .idx differs from git index-pack`).toBe(0);
  }
  return dir;
}
