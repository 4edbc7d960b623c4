import type FS from '@isomorphic-git/lightning-fs';
import git, { type CommitObject, type PromiseFsClient } from 'isomorphic-git';
import { CommitQueue } from '../../model/commitQueue.ts';
import { parseShallow } from '../../model/shallow.ts';
import { parseTagHeader } from '../../model/tagObject.ts';
import { DEFAULT_TREE_LIMITS, type TreeLimits } from '../../pack/packLimits.ts';
import type { RepoRecord } from '../../store/registry.ts';
import { GITDIR } from '../../store/repoFs.ts';
import type { OpsContext } from './engineContext.ts';
import { OperationError } from './errors.ts';
import { objectReadFs } from './objectReadFs.ts';
import { usePackObjectCache } from './packObjectCache.ts';
import type { RepoCache } from './repoCaches.ts';
import { StoredPackReader } from './storedPackReader.ts';

type Fs = FS;

export interface RepoHandle {
  readonly id: string;
  record: RepoRecord;
  fs: Fs;
  /** `fs` wrapped for isomorphic-git's object reads (objectReadFs.ts): made once, with the handle. */
  objectFs: PromiseFsClient;
  gitdir: string;
  /** isomorphic-git's object cache: reused so a pack is loaded once, not once per call. */
  cache: object;
  /** Tree ids that passed pack/treeCheck.ts in this repo: checked once, then read without checking. */
  checkedTrees: Set<string>;
  /** What a tree of this repo may hold and how deep it may sit: the clone's limits, defaults for the rest. */
  treeLimits: TreeLimits;
  /** What the engine keeps of this repo between operations (its caches above, its commit-graph). */
  kept: RepoCache;
  /**
   * When set, trees, commits and tags are read from the stored packs by our reader first, so that
   * isomorphic-git loads no pack (storedPackReader.ts): a first checkout's walk, for its memory.
   */
  storedPacks?: StoredPackReader;
}

/** A commit object, read through the repo's object cache. */
export async function readCommitObject(repo: RepoHandle, oid: string): Promise<CommitObject> {
  return (await git.readCommit({ fs: repo.objectFs, gitdir: repo.gitdir, oid, cache: repo.cache })).commit;
}

/** A history walk's queue over `repo` (model/commitQueue.ts): commits are read as they are reached. */
export function commitQueue(repo: RepoHandle, skip?: Set<string>): CommitQueue<CommitObject> {
  return new CommitQueue((oid) => readCommitObject(repo, oid), skip);
}

/** Opens a stored repo for an operation: REPO_NOT_FOUND if there is none. */
export async function openRepo(ctx: OpsContext, repoId: string): Promise<RepoHandle> {
  const { store } = ctx;
  // Another tab may have committed since: read its tree, not the one this engine last saw.
  await store.repoFs.sync(repoId);
  const record = await store.registry.get(repoId);
  if (!record)
    throw new OperationError('REPO_NOT_FOUND', `No stored repository "${repoId}". It may have been deleted.`);
  const kept = ctx.repos.for(repoId);
  const { cache, checkedTrees } = kept;
  // Any operation that read a pack before left it loaded here: from now on reads reuse delta bases.
  await usePackObjectCache(cache, ctx.settings.packObjectCacheBytes);
  const fs = store.repoFs.open(repoId);
  return {
    id: repoId,
    record,
    fs,
    objectFs: objectReadFs(fs),
    gitdir: GITDIR,
    cache,
    checkedTrees,
    treeLimits: { ...DEFAULT_TREE_LIMITS, ...record.treeLimits },
    kept,
  };
}

/**
 * `repo` reading its trees, commits and tags from the stored packs by our reader (storedPackReader.ts), so
 * that isomorphic-git parses no .idx for them: for walks over many objects that want little memory (a first
 * checkout's trees, a commit-graph build). The caller lets go of the packs read with `storedPacks.release()`
 * or with the handle.
 */
export async function readingStoredPacks(ctx: OpsContext, repo: RepoHandle): Promise<RepoHandle> {
  return { ...repo, storedPacks: new StoredPackReader(repo.fs.promises, await ctx.store.packs.for(repo.id)) };
}

/**
 * Drops deleted packs from isomorphic-git's cache, which would otherwise hold their bytes for as long as
 * the repo is open. isomorphic-git keeps packs in a Map under a private symbol named `PackfileCache`, keyed
 * by the .idx path; if a version of it stores them otherwise, nothing is dropped and only memory is lost.
 */
export function evictPacksFromCache(ctx: OpsContext, repoId: string, checksums: string[]): void {
  const cache = ctx.repos.existing(repoId)?.cache as Record<symbol, unknown> | undefined;
  if (!cache) return;
  for (const key of Object.getOwnPropertySymbols(cache)) {
    const packs = cache[key];
    if (key.description !== 'PackfileCache' || !(packs instanceof Map)) continue;
    for (const checksum of checksums) packs.delete(`${GITDIR}/objects/pack/pack-${checksum}.idx`);
  }
}

/**
 * Lets go of every pack isomorphic-git loaded for `repo` (their bytes, offsets and cached objects): the
 * next read loads what it needs again. For a long write that reads no more of them (newWorktree.ts).
 */
export function forgetLoadedPacks(repo: RepoHandle): void {
  const cache = repo.cache as Record<symbol, unknown>;
  for (const key of Object.getOwnPropertySymbols(cache)) {
    const packs = cache[key];
    if (key.description === 'PackfileCache' && packs instanceof Map) packs.clear();
  }
}

/**
 * Makes isomorphic-git read the index again: it remembers an index it found missing as missing for good
 * (isIndexStale), so one written by other means (ops/worktree/newWorktree.ts) must be announced. Its parsed
 * indexes sit under a private symbol named `IndexCache`, keyed by path; a version that keeps them
 * otherwise would go on seeing no index, which the checkout tests would show.
 */
export function forgetIndexCache(repo: RepoHandle): void {
  const cache = repo.cache as Record<symbol, unknown>;
  for (const key of Object.getOwnPropertySymbols(cache)) {
    const entry = cache[key] as { map?: unknown; stats?: unknown } | undefined;
    if (key.description !== 'IndexCache' || !(entry?.map instanceof Map) || !(entry.stats instanceof Map))
      continue;
    entry.map.delete(`${repo.gitdir}/index`);
    entry.stats.delete(`${repo.gitdir}/index`);
  }
}

/** Branch, tag, remote branch or (abbreviated) commit id to a commit id. */
export async function resolveCommit(repo: RepoHandle, ref: string): Promise<string> {
  const { fs, gitdir, cache } = repo;
  const candidates = [ref, `refs/heads/${ref}`, `refs/remotes/origin/${ref}`, `refs/tags/${ref}`];
  for (const candidate of candidates) {
    try {
      const oid = await git.resolveRef({ fs, gitdir, ref: candidate });
      return await peelToCommit(repo, oid);
    } catch {
      // try the next spelling
    }
  }
  if (/^[0-9a-f]{4,40}$/i.test(ref)) {
    try {
      const oid =
        ref.length === 40 ? ref.toLowerCase() : await git.expandOid({ fs, gitdir, oid: ref, cache });
      return await peelToCommit(repo, oid);
    } catch {
      // fall through to the error below
    }
  }
  throw new OperationError(
    'REF_NOT_FOUND',
    `"${ref}" is not a branch, tag or commit of ${repo.record.name}.`,
  );
}

/**
 * Follows annotated tags (at most 10 deep) to the commit they name; null when they lead to another kind
 * of object. Errors reading an object (a missing one) are the caller's.
 */
export async function peelTags(repo: RepoHandle, oid: string): Promise<string | null> {
  let current = oid;
  for (let i = 0; i < 10; i++) {
    const own = await repo.storedPacks?.read(current);
    if (own && own.type !== 'tag') return own.type === 'commit' ? current : null;
    const header = own ? parseTagHeader(own.object) : null;
    if (header) {
      current = header.object;
      continue;
    }
    const { type, object } = await git.readObject({
      fs: repo.objectFs,
      gitdir: repo.gitdir,
      oid: current,
      cache: repo.cache,
    });
    if (type === 'commit') return current;
    if (type !== 'tag') return null;
    current = (object as { object: string }).object;
  }
  return null;
}

async function peelToCommit(repo: RepoHandle, oid: string): Promise<string> {
  const commit = await peelTags(repo, oid);
  if (commit) return commit;
  throw new OperationError('REF_NOT_FOUND', `${oid} does not lead to a commit.`);
}

/**
 * A blob's bytes from the packs. isomorphic-git lists objects/pack on every read, so packs added since the
 * cache was made are found; a pack deleted by maintenance between that listing and the read of its .pack
 * makes the read fail once, and the retry finds the object in the merged pack.
 */
export async function readBlobBytes(repo: RepoHandle, oid: string): Promise<Uint8Array> {
  const read = () => git.readBlob({ fs: repo.objectFs, gitdir: repo.gitdir, oid, cache: repo.cache });
  let result: Awaited<ReturnType<typeof git.readBlob>>;
  try {
    result = await read();
  } catch (err) {
    const code = (err as { code?: string }).code;
    if (code !== 'NotFoundError' && code !== 'InternalError') throw err;
    result = await read();
  }
  const blob = result.blob;
  return new Uint8Array(blob.buffer, blob.byteOffset, blob.byteLength);
}

/** The commits `.git/shallow` names: their parents are not stored, and history walks end there. */
export async function shallowCommits(repo: RepoHandle): Promise<Set<string>> {
  try {
    const text = (await repo.fs.promises.readFile(`${repo.gitdir}/shallow`, 'utf8')) as string;
    return new Set(parseShallow(text));
  } catch {
    return new Set();
  }
}
