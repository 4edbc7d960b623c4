// A working tree written where there is none (the first checkout after a clone). Nothing is there to
// compare or keep, so no analysis: each file is written as soon as its blob arrives, straight from the pack
// just received while it is still in memory, its contents stored ahead of the tree that will name them
// (store/repoFs.ts RepoFileSystems.stageFileAhead). The caller names them all, with the index and HEAD, in one
// all-or-nothing write at the end (placeNewWorktree), or drops them. What the worker holds is a few packs
// and STAGE_AHEAD_BYTES, not the working tree: 537 MB of peak heap on the large fixture before, when
// isomorphic-git read every blob at once and the batch held every file until its commit (issue 23).

import { PackReader } from '../../pack/packReader.ts';
import { MODE_EXECUTABLE, MODE_GITLINK, MODE_SYMLINK } from '../../pack/treeCheck.ts';
import { type IndexEntry, serializeIndex } from '../../store/indexFile.ts';
import { GITDIR, mkdirp, type StagedFile } from '../../store/repoFs.ts';
import { linkTarget } from '../common/checkedTrees.ts';
import { abortedError, throwIfAborted } from '../common/errors.ts';
import { forgetIndexCache, type RepoHandle, readBlobBytes } from '../common/repoAccess.ts';
import {
  type BlobContext,
  type BlobFetchHooks,
  type BlobFetchProgress,
  type BlobFetchResult,
  ensureBlobs,
  type ObjectHook,
  type StoredBlobPack,
} from '../sync/lazyBlobs.ts';

/** A file of the tree being checked out: its blob (a commit for a gitlink) and git's mode for it. */
export interface NewWorktreeFile {
  oid: string;
  mode: string;
}

export type NewWorktreeProgress =
  | BlobFetchProgress
  | { phase: 'writing-files'; files: number; totalFiles: number };

/** What writeNewWorktree left for placeNewWorktree: nothing of it is in the tree yet. */
export interface WrittenAhead {
  fetched: BlobFetchResult;
  /** Regular files, their contents stored. */
  staged: Map<string, StagedFile>;
  /** Symlinks: their targets, checked by the caller before they are made. */
  links: Map<string, string>;
  /** Submodules: an empty folder each, as git leaves them. */
  gitlinks: string[];
}

/**
 * Largest request of blobs: up to BLOB_FETCH_CONCURRENCY packs this size are in memory at once. Measured on
 * the large fixture (58.5 MB of blobs), one run each of `HEAP_TRACE=1 npx tsx bench/run.ts --sizes large
 * --runs 1 --profile --skip openOneFile,blame,embedOneFile,noopFetch,firstView,deepLink,isogit` (heap
 * sampled every 100 ms), on 2 shared cores at load 15 to 20, so times are noise and heaps are ±20 MB:
 *
 * | cap           | requests | peak heap while blobs arrive and are written | checkout |
 * | ------------- | -------- | -------------------------------------------- | -------- |
 * | 32 MB (as lazyBlobs) | 5 | 194 MB                                     | 36.2 s   |
 * | 6 MB (chosen) | 11       | 173 MB                                       | 40.3 s   |
 */
export const NEW_WORKTREE_BATCH_BYTES = 6 * 1024 * 1024;

/**
 * Blob bytes copied from the ingester (onObject) and not yet staged, at most. A blob that would pass it is
 * read from its pack once stored instead, as before the hook; so what waits here is bounded by this, not by
 * the tree, whatever IndexedDB's pace. STAGE_AHEAD_BYTES (16 MB) bounds what is in IndexedDB's hands.
 *
 * Was 8 MB. Once the warm-up compiled the inflater for text (2026-12-05) the receive outpaced IndexedDB and
 * the queue filled to its cap: large's checkout peaked at 142–160 MB. Quiet machine (Intel Xeon, 2 cores),
 * `npx tsx bench/run.ts --sizes large --runs 2 --profile --skip
 * history,isogit,blame,openOneFile,embedOneFile,noopFetch,firstView,deepLink` (and `--sizes medium --runs 3`),
 * runs taken in turn:
 *
 * | cap            | large: checkout peak heap        | large: checkout  | medium: checkout (6 runs) |
 * | -------------- | -------------------------------- | ---------------- | ------------------------- |
 * | 8 MB           | 160.4, 142.3, 152.9, 141.8 MB    | 10.0–10.65 s     | 1.43–1.59 s, median 1.52  |
 * | 4 MB (chosen)  | 130.9, 136.7 MB                  | 10.11, 10.33 s   | 1.47–1.59 s, median 1.535 |
 */
export const HOOKED_BYTES = 4 * 1024 * 1024;

const PROGRESS_INTERVAL_MS = 50;

export type NewWorktreeHooks = Pick<BlobFetchHooks, 'signal' | 'connection' | 'batching' | 'steps'> & {
  onProgress?: (p: NewWorktreeProgress) => void;
  /** For tests and the benchmark: replaces HOOKED_BYTES (0: files are read from their stored packs, empty ones aside). */
  hookedBytes?: number;
};

/** Whether the repo has no working tree: no index, and nothing beside the git directory. */
export async function hasNoWorktree(repo: RepoHandle): Promise<boolean> {
  const fs = repo.fs.promises;
  const index = await fs.stat(`${GITDIR}/index`).then(
    () => true,
    () => false,
  );
  if (index) return false;
  const names = await fs.readdir('/').catch(() => [] as string[]);
  return names.every((name) => `/${name}` === GITDIR);
}

/**
 * Fetches the blobs `files` lack and stores every file's contents ahead, pack by pack as they arrive;
 * blobs already stored are read from the packs. On failure or cancel, what was staged is deleted.
 */
export async function writeNewWorktree(
  ctx: BlobContext,
  repo: RepoHandle,
  files: Map<string, NewWorktreeFile>,
  hooks: NewWorktreeHooks,
): Promise<WrittenAhead> {
  const repoId = repo.record.id;
  const { signal, onProgress } = hooks;
  const byOid = new Map<string, string[]>();
  const gitlinks: string[] = [];
  for (const [path, f] of files) {
    if (f.mode === MODE_GITLINK) gitlinks.push(path);
    else byOid.set(f.oid, [...(byOid.get(f.oid) ?? []), path]);
  }
  const staged = new Map<string, StagedFile>();
  const links = new Map<string, string>();
  const total = files.size - gitlinks.length;
  let fetching = true;
  let lastReport = 0;
  const report = (force = false) => {
    const now = performance.now();
    if (fetching || !onProgress || (!force && now - lastReport < PROGRESS_INTERVAL_MS)) return;
    lastReport = now;
    onProgress({ phase: 'writing-files', files: staged.size + links.size, totalFiles: total });
  };

  /** Every path of blob `oid`, from its bytes; once per blob. */
  const write = async (oid: string, data: Uint8Array) => {
    const paths = byOid.get(oid);
    if (!paths) return;
    byOid.delete(oid);
    await place(paths, data);
  };
  const place = async (paths: string[], data: Uint8Array) => {
    for (const path of paths) {
      if (signal?.aborted) throw abortedError();
      if (files.get(path)!.mode === MODE_SYMLINK) links.set(path, linkTarget(path, data, repo.treeLimits));
      else staged.set(path, await ctx.store.repoFs.stageFileAhead(repoId, data));
      report();
    }
  };

  // Packs are written one after the other, as they arrive; each leaves memory once its files are staged,
  // and its request's place goes to the next request only then (BlobFetchHooks.onPack).
  let writing: Promise<void> = Promise.resolve();
  let writeError: unknown = null;
  const chain = (work: () => Promise<void>) => {
    writing = writing.then(async () => {
      if (writeError !== null) return;
      try {
        await work();
      } catch (err) {
        writeError = err;
      }
    });
    return writing;
  };

  // Most blobs are staged from the ingester's own inflate as their pack arrives (BlobFetchHooks.onObject),
  // not inflated a second time from the stored pack: a copy each, queued while IndexedDB catches up. Past
  // HOOKED_BYTES queued, a blob is left to onPack's read of its pack, so memory stays bounded by it.
  const hookedCap = hooks.hookedBytes ?? HOOKED_BYTES;
  let hookedBytes = 0;
  const onObject: ObjectHook = ({ oid, type, data }) => {
    if (type !== 'blob' || writeError !== null || hookedBytes + data.byteLength > hookedCap) return;
    const paths = byOid.get(oid);
    if (!paths) return;
    byOid.delete(oid);
    const copy = data.slice();
    hookedBytes += copy.byteLength;
    void chain(async () => {
      hookedBytes -= copy.byteLength;
      await place(paths, copy);
    });
  };

  const onPack = (stored: StoredBlobPack) =>
    chain(async () => {
      // Staged from onObject as it arrived, unless the queue was full or another call's request brought it.
      if (!stored.objects.some((o) => o.type === 'blob' && byOid.has(o.oid))) return;
      const started = performance.now();
      try {
        const offsets = new Map(stored.objects.map((o) => [o.oid, o.offset]));
        const reader = new PackReader(stored.pack, (oid) => offsets.get(oid));
        for (const object of stored.objects) {
          if (object.type === 'blob' && byOid.has(object.oid)) {
            await write(object.oid, reader.read(object.offset).data);
          }
        }
      } finally {
        hooks.steps?.measure('pack-files-staged', started);
      }
    });

  try {
    const fetched = await ensureBlobs(ctx, repoId, [...byOid.keys()], {
      onProgress,
      signal,
      connection: hooks.connection,
      batching: hooks.batching ?? { policy: { maxBatchBytes: NEW_WORKTREE_BATCH_BYTES } },
      deferMaintenance: true,
      onPack,
      onObject,
      steps: hooks.steps,
    });
    await writing;
    if (writeError !== null) throw writeError;
    fetching = false;
    report(true);
    // Blobs stored before this checkout, and any whose pack was stored by another call's request.
    for (const oid of [...byOid.keys()]) {
      throwIfAborted(signal);
      await write(oid, await readBlobBytes(repo, oid));
    }
    // The contents staged last, short of a transaction of their own, go with the caller's commit
    // (placeStaged): one IndexedDB transaction fewer (31 to 45 ms of small's checkout, busy machine).
    report(true);
    return { fetched, staged, links, gitlinks };
  } catch (err) {
    await writing;
    await ctx.store.repoFs.dropStaged(repoId, [...staged.values()]);
    throw err;
  }
}

/**
 * Inside the caller's writeAllOrNothing: names the staged files at their paths, makes the symlinks (their
 * targets checked by the caller) and submodule folders, and writes the index, once. On failure the
 * caller's batch is discarded, and the staged contents with it.
 */
export async function placeNewWorktree(
  ctx: BlobContext,
  repo: RepoHandle,
  files: Map<string, NewWorktreeFile>,
  written: WrittenAhead,
): Promise<void> {
  const repoId = repo.record.id;
  const fs = repo.fs.promises;
  await ctx.store.repoFs.placeStaged(
    repoId,
    [...written.staged].map(([path, staged]) => ({
      path: `/${path}`,
      staged,
      // As isomorphic-git writes them: lightning-fs keeps the permissions only.
      mode: files.get(path)!.mode === MODE_EXECUTABLE ? 0o777 : 0o666,
    })),
  );
  for (const path of written.gitlinks) await mkdirp(fs, `/${path}`);
  for (const [path, target] of written.links) {
    await mkdirp(fs, `/${path.slice(0, Math.max(0, path.lastIndexOf('/')))}`);
    await fs.symlink(target, `/${path}`);
  }
  const entries: IndexEntry[] = [];
  for (const [path, f] of files) {
    const stat = await fs.lstat(`/${path}`);
    entries.push({
      path,
      oid: f.oid,
      mode: Number.parseInt(f.mode, 8),
      stat: {
        ctimeMs: stat.ctimeMs,
        mtimeMs: stat.mtimeMs,
        dev: stat.dev,
        ino: stat.ino,
        uid: stat.uid,
        gid: stat.gid,
        size: stat.size,
      },
    });
  }
  await fs.writeFile(`${GITDIR}/index`, serializeIndex(entries));
  // isomorphic-git remembers that there was no index; from now on it reads this one.
  forgetIndexCache(repo);
}
