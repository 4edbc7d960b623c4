// Reads one file of a commit. The path is resolved through the trees, which a blob:none clone holds; only
// the file's own blob may have to come from the server, and only that one is fetched.

import { isBinary } from '../../diff/binaryContent.ts';
import { MODE_GITLINK, MODE_TREE_PADDED as MODE_TREE } from '../../pack/treeCheck.ts';
import { commitTree, lookupParts, readCheckedTree } from '../common/checkedTrees.ts';
import { MissingObjectError, OperationError } from '../common/errors.ts';
import { openRepo, type RepoHandle, readBlobBytes, resolveCommit } from '../common/repoAccess.ts';
import { type BlobContext, type BlobFetchHooks, ensureBlobs } from '../sync/lazyBlobs.ts';

/** One file's content at a commit. */
export interface FileContent {
  /** The blob's id. */
  oid: string;
  /** Octal mode as git stores it: 100644, 100755, or 120000 for a symlink (whose bytes are its target). */
  mode: string;
  /** The content's length in bytes. */
  size: number;
  /** By git's rule: a NUL byte in the first 8000 bytes. */
  binary: boolean;
  /** The content, as stored (no line-ending or encoding conversion). */
  bytes: Uint8Array;
}

export type ReadFileHooks = Pick<BlobFetchHooks, 'onProgress' | 'signal' | 'connection'>;

/**
 * The content of `path` in `ref` (a branch, tag or commit id). Throws PATH_NOT_FOUND for a path that is
 * not a file there, IS_SUBMODULE for a submodule, MissingObjectError (naming the path) when the blob is not
 * stored and cannot be fetched; nothing is stored then.
 */
export async function readFile(
  ctx: BlobContext,
  repoId: string,
  ref: string,
  path: string,
  hooks: ReadFileHooks = {},
): Promise<FileContent> {
  const repo = await openRepo(ctx, repoId);
  const commit = await resolveCommit(repo, ref);
  const clean = path.replace(/^\/+|\/+$/g, '');
  const entry = await findEntry(repo, commit, clean, ref);
  if (entry.mode === MODE_TREE) {
    throw new OperationError('PATH_NOT_FOUND', `"${clean}" is a folder in ${ref}, not a file.`);
  }
  if (entry.mode === MODE_GITLINK) {
    throw new OperationError(
      'IS_SUBMODULE',
      `"${clean}" is a submodule in ${ref}: it points at commit ${entry.oid.slice(0, 10)}… of another repository, and has no content here.`,
    );
  }
  try {
    await ensureBlobs(ctx, repoId, [entry.oid], hooks);
  } catch (err) {
    throw err instanceof MissingObjectError ? err.withPath(clean) : err;
  }
  const bytes = await readBlobBytes(repo, entry.oid);
  return { oid: entry.oid, mode: entry.mode, size: bytes.length, binary: isBinary(bytes), bytes };
}

/** Walks the trees from the commit's root to the entry named by `path`, each one checked. */
async function findEntry(
  repo: RepoHandle,
  commit: string,
  path: string,
  ref: string,
): Promise<{ oid: string; mode: string }> {
  const notFound = () => new OperationError('PATH_NOT_FOUND', `There is no file "${path}" in ${ref}.`);
  const parts = lookupParts(path, repo.treeLimits);
  if (path === '' || parts.some((p) => p === '' || p === '.' || p === '..')) throw notFound();
  let current = { oid: await commitTree(repo, commit), mode: MODE_TREE };
  let prefix = '';
  for (let depth = 0; depth < parts.length; depth++) {
    const name = parts[depth];
    if (current.mode !== MODE_TREE) throw notFound();
    const tree = await readCheckedTree(repo, current.oid, prefix, depth);
    const entry = tree.find((e) => e.name === name);
    if (!entry) throw notFound();
    current = { oid: entry.oid, mode: entry.mode };
    prefix += `${name}/`;
  }
  return current;
}
