import { createHash } from 'node:crypto';
import type { EngineContext } from '../../workers/engine/engine.ts';
import { maintenanceIdle } from '../../workers/ops/maintenance/packMaintenance.ts';
import { GITDIR } from '../../workers/store/repoFs.ts';
import { git } from './git.ts';

/** The files of a repo's pack directory, sorted: what a fetch stored, or did not. */
export async function packFiles(ctx: EngineContext, repoId: string): Promise<string[]> {
  return (await ctx.store.repoFs.open(repoId).promises.readdir(`${GITDIR}/objects/pack`)).sort();
}

/** The typed error a call failed with; fails the test if it succeeded. */
export async function failure(p: Promise<unknown>): Promise<Error & { code: string }> {
  try {
    await p;
  } catch (err) {
    return err as Error & { code: string };
  }
  throw new Error('the call unexpectedly succeeded');
}

/**
 * Every file under the repo's `/.git`, path to SHA-1 of its bytes, sorted: compare two to show an operation
 * left the git directory byte for byte as it was.
 */
export async function snapshotGitDir(ctx: EngineContext, repoId: string): Promise<Record<string, string>> {
  const fs = ctx.store.repoFs.open(repoId).promises;
  const out: Record<string, string> = {};
  const walk = async (dir: string): Promise<void> => {
    for (const name of (await fs.readdir(dir)).sort()) {
      const path = `${dir}/${name}`;
      const st = await fs.lstat(path);
      if (st.isDirectory()) await walk(path);
      else if (st.isSymbolicLink()) out[path] = `-> ${await fs.readlink(path)}`;
      else
        out[path] = createHash('sha1')
          .update((await fs.readFile(path)) as Uint8Array)
          .digest('hex');
    }
  };
  await walk(GITDIR);
  return out;
}

/**
 * snapshotGitDir once the repo's background maintenance is done: the "before" of a comparison. A clone's or
 * fetch's commit-graph step runs once the engine is quiet (20 ms in tests), so a snapshot taken right after
 * one may be followed by the step's own writes, which are no part of what the test then checks. Do not call
 * it while the test holds the repo's lock: a step waiting for that lock would wait for the test.
 */
export async function settledGitDir(ctx: EngineContext, repoId: string): Promise<Record<string, string>> {
  await maintenanceIdle(ctx, repoId);
  return snapshotGitDir(ctx, repoId);
}

/**
 * The remote-tracking branches and tags of an exported git directory, read by git, as `<oid> <name>`
 * lines, sorted; `refs/remotes/origin/HEAD` left out. `asRemote` names branches as the server does
 * (`refs/heads/…`), to compare with `git ls-remote`.
 */
export async function trackingRefs(dir: string, opts: { asRemote?: boolean } = {}): Promise<string[]> {
  const out = await git(['for-each-ref', '--format=%(objectname) %(refname)', 'refs/remotes', 'refs/tags'], {
    cwd: dir,
  });
  return out
    .trim()
    .split('\n')
    .filter((l) => l && !l.endsWith(' refs/remotes/origin/HEAD'))
    .map((l) => (opts.asRemote ? l.replace(' refs/remotes/origin/', ' refs/heads/') : l))
    .sort();
}
