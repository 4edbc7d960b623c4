import { explainRefNameProblem, refNameProblem } from '../model/refName.ts';
import { serializeShallow } from '../model/shallow.ts';
import { handOver } from './batchedIdb.ts';
import { StoreError, storageError } from './errors.ts';
import { type RepoConfig, serializeRepoConfig } from './gitConfig.ts';
import { type PackedRef, serializePackedRefs } from './packedRefs.ts';
import { GITDIR, mkdirp, type PromiseFs, writeFileDeep } from './repoFs.ts';

/** A pack to store; its `pack` and `idx` are handed over (batchedIdb.ts handOver): never change them after. */
export interface StoredPack {
  /** Hex SHA-1 of the pack; files are `pack-<checksum>.pack|.idx|.promisor`. */
  checksum: string;
  pack: Uint8Array;
  idx: Uint8Array;
  /** Content of the `.promisor` marker, or undefined for a pack fetched without a filter. */
  promisor?: string;
  /** The `.pack` is written already (writePackFile, in the same held batch): only its partners follow. */
  packWritten?: boolean;
}

/**
 * Writes a pack's `.pack` alone, handed over: the batched store keeps it without a copy, since the caller
 * at most reads it after. The clone stores it while its index is still being computed, then writePack
 * (`packWritten`) adds the partners; writePack itself writes it this way otherwise.
 */
export async function writePackFile(fs: PromiseFs, checksum: string, pack: Uint8Array): Promise<void> {
  try {
    await mkdirp(fs, `${GITDIR}/objects/pack`);
    await fs.writeFile(`${GITDIR}/objects/pack/pack-${checksum}.pack`, handOver(compact(pack)));
  } catch (err) {
    throw storageError(err, `the ${(pack.length / 1e6).toFixed(1)} MB pack`);
  }
}

/**
 * Writes a pack so that no reader sees it half-written: git and isomorphic-git find packs through their
 * `.idx`, so the `.pack` goes first and the `.idx` last.
 */
export async function writePack(fs: PromiseFs, p: StoredPack): Promise<void> {
  const base = `${GITDIR}/objects/pack/pack-${p.checksum}`;
  try {
    if (!p.packWritten) await writePackFile(fs, p.checksum, p.pack);
    if (p.promisor !== undefined) await fs.writeFile(`${base}.promisor`, p.promisor, 'utf8');
    // Handed over like the .pack: a defensive copy held 12 MB more while large.git's clone was written.
    await fs.writeFile(`${base}.idx`, handOver(compact(p.idx)));
  } catch (err) {
    // Whole or not at all: a .pack left without its .idx would only take up space.
    await removePackFiles(fs, p.checksum).catch(() => undefined);
    throw storageError(err, `the ${(p.pack.length / 1e6).toFixed(1)} MB pack`);
  }
}

/**
 * Deletes a pack's files, the .idx first: readers find packs through their .idx, so none of them sees an
 * index whose pack is already gone. Files that do not exist are skipped.
 */
export async function removePackFiles(fs: PromiseFs, checksum: string): Promise<void> {
  const base = `${GITDIR}/objects/pack/pack-${checksum}`;
  for (const ext of ['idx', 'pack', 'promisor', 'keep']) {
    try {
      await fs.unlink(`${base}.${ext}`);
    } catch (err) {
      if ((err as { code?: string }).code !== 'ENOENT')
        throw storageError(err, `the deletion of pack ${checksum}`);
    }
  }
}

/**
 * IndexedDB stores a typed array by cloning its whole ArrayBuffer, not just the view: a view into a larger
 * buffer would be stored with all the slack. PackIngester's packs fill their buffer exactly (no copy here).
 */
function compact(bytes: Uint8Array): Uint8Array {
  return bytes.byteOffset === 0 && bytes.byteLength === bytes.buffer.byteLength ? bytes : bytes.slice();
}

/**
 * Every ref name about to become a path or a line is one git accepts: ops checks names from the server
 * already; this is the last guard before `refs/heads/../../config` could be a file name.
 */
function checkRefNames(names: readonly string[]): void {
  for (const name of names) {
    const problem = refNameProblem(name);
    if (problem !== null) {
      throw new StoreError(
        'REF_NAME_INVALID',
        `Refusing to store the ref ${JSON.stringify(name)}: ${explainRefNameProblem(problem)}, which git does not allow.`,
      );
    }
  }
}

/** What every git directory holds before its objects and refs. */
export interface GitDirBase {
  config: RepoConfig;
  /** `.git/description` ("Cloned by Blobless"): what gitweb and hooks show; the engine's productName says. */
  description: string;
}

/** `ref: refs/heads/x` for a branch, or a detached commit id. */
export type GitDirHead = { branch: string } | { oid: string };

export interface NewGitDir extends GitDirBase {
  head: GitDirHead;
  looseRefs: { name: string; value: string }[];
  packedRefs: PackedRef[];
  shallow: string[];
  pack: StoredPack;
}

/**
 * The folders and files every git directory has, as `git init` leaves them but without HEAD. The config goes
 * last: readers that find it take the directory as set up (the minimal read's repos), and HEAD, written by
 * whoever stores the first commit, is what makes it a repository to git.
 */
export async function writeGitDirBase(fs: PromiseFs, d: GitDirBase): Promise<void> {
  for (const dir of [
    'objects/pack',
    'objects/info',
    'refs/heads',
    'refs/tags',
    'refs/remotes/origin',
    'info',
  ]) {
    await mkdirp(fs, `${GITDIR}/${dir}`);
  }
  await fs.writeFile(`${GITDIR}/description`, `${d.description}\n`, 'utf8');
  await fs.writeFile(`${GITDIR}/info/exclude`, '', 'utf8');
  await fs.writeFile(`${GITDIR}/config`, serializeRepoConfig(d.config), 'utf8');
}

/** Loose refs, each a file holding its value; refuses (REF_NAME_INVALID) before writing if a name is bad. */
export async function writeLooseRefs(
  fs: PromiseFs,
  refs: readonly { name: string; value: string }[],
): Promise<void> {
  checkRefNames(refs.map((r) => r.name));
  for (const ref of refs) await writeFileDeep(fs, `${GITDIR}/${ref.name}`, `${ref.value}\n`);
}

/** HEAD: a symbolic ref to a branch, or a detached commit. Refuses a branch name git refuses. */
export async function writeHead(fs: PromiseFs, head: GitDirHead): Promise<void> {
  if ('branch' in head) checkRefNames([`refs/heads/${head.branch}`]);
  const value = 'branch' in head ? `ref: refs/heads/${head.branch}` : head.oid;
  await fs.writeFile(`${GITDIR}/HEAD`, `${value}\n`, 'utf8');
}

/**
 * The `shallow` file (gitrepository-layout), the one place it is written: the commits sorted and once each,
 * or no file at all when none is left (as `git fetch --unshallow` leaves it).
 */
export async function writeShallow(fs: PromiseFs, commits: readonly string[]): Promise<void> {
  const sorted = [...new Set(commits)].sort();
  if (sorted.length > 0) await fs.writeFile(`${GITDIR}/shallow`, serializeShallow(sorted), 'utf8');
  else await unlinkIfPresent(fs, `${GITDIR}/shallow`);
}

/**
 * `packed-refs`, rewritten whole, and the loose refs named in `unhide` deleted where they exist: a loose ref
 * hides its packed value, so an updated ref's packed value must be its only one. Refuses (REF_NAME_INVALID)
 * a name git refuses before writing anything.
 */
export async function writePackedRefs(
  fs: PromiseFs,
  refs: readonly PackedRef[],
  unhide: readonly string[] = [],
): Promise<void> {
  checkRefNames([...refs.map((r) => r.name), ...unhide]);
  await fs.writeFile(`${GITDIR}/packed-refs`, serializePackedRefs([...refs]), 'utf8');
  for (const name of unhide) await unlinkIfPresent(fs, `${GITDIR}/${name}`);
}

async function unlinkIfPresent(fs: PromiseFs, path: string): Promise<void> {
  try {
    await fs.unlink(path);
  } catch (err) {
    if ((err as { code?: string }).code !== 'ENOENT') throw err;
  }
}

/** Lays out a fresh git directory as `git clone` leaves it (before checkout). */
export async function writeNewGitDir(fs: PromiseFs, d: NewGitDir): Promise<void> {
  // Every name before the first write: a refused clone leaves no directory behind.
  checkRefNames([
    ...d.looseRefs.map((r) => r.name),
    ...d.packedRefs.map((r) => r.name),
    ...('branch' in d.head ? [`refs/heads/${d.head.branch}`] : []),
  ]);
  try {
    await writePack(fs, d.pack);
    await writeGitDirBase(fs, d);
    await writePackedRefs(fs, d.packedRefs);
    await writeLooseRefs(fs, d.looseRefs);
    await writeShallow(fs, d.shallow);
    // HEAD last: a directory without HEAD is not a repository to git, so an interrupted write is inert.
    await writeHead(fs, d.head);
  } catch (err) {
    if ((err as { name?: string }).name === 'StoreError') throw err;
    throw storageError(err, 'the repository');
  }
}
