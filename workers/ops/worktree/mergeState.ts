// A merge that stopped on conflicts, left as git leaves it (git-merge: "How conflicts are presented"):
// `MERGE_HEAD` names the commit being merged, `MERGE_MSG` the message the merge commit will get, the index
// holds stages 1 (base), 2 (ours) and 3 (theirs) for each conflicted path, the working file carries
// conflict markers, and every change that merged cleanly is already staged and in the working tree. The
// person resolves each file (edits it, stages it: stage 0), then commits (two parents) or aborts.

import git from 'isomorphic-git';
import { comparePaths } from '../../model/pathOrder.ts';
import { sha1 } from '../../pack/objectHash.ts';
import { GITDIR, mkdirp } from '../../store/repoFs.ts';
import { OperationError } from '../common/errors.ts';
import type { RepoHandle } from '../common/repoAccess.ts';
import { WORKTREE_DIR } from './checkout.ts';
import { removeEmptyParents } from './emptyParents.ts';

/** A merge a conflicting pull left in progress, as git leaves one: commit or abort it. */
export interface MergeState {
  /** The commit being merged (`MERGE_HEAD`). */
  head: string;
  /** What the merge commit will say (`MERGE_MSG`). */
  message: string;
  /** Paths with unmerged stages in the index: still to be resolved. */
  conflicts: string[];
}

/** The merge in progress, or null. */
export async function readMergeState(repo: RepoHandle): Promise<MergeState | null> {
  const fs = repo.fs.promises;
  const head = await fs.readFile(`${GITDIR}/MERGE_HEAD`, { encoding: 'utf8' }).then(
    (t) => String(t).trim().split('\n')[0],
    () => null,
  );
  if (!head) return null;
  const message = await fs.readFile(`${GITDIR}/MERGE_MSG`, { encoding: 'utf8' }).then(
    (t) => String(t),
    () => `Merge commit '${head}'\n`,
  );
  return { head, message, conflicts: await unmergedPaths(repo) };
}

async function unmergedPaths(repo: RepoHandle): Promise<string[]> {
  const bytes = await repo.fs.promises.readFile(`${GITDIR}/index`).catch(() => null);
  return bytes ? indexUnmergedPaths(bytes as Uint8Array) : [];
}

/**
 * The paths of an index file (gitformat-index) that have an entry at stage 1, 2 or 3. Read from the bytes:
 * isomorphic-git's index cache would hand back another reader's view.
 */
export function indexUnmergedPaths(bytes: Uint8Array): string[] {
  const out = new Set<string>();
  for (const e of indexEntries(bytes).entries) if (e.stage) out.add(e.path);
  // In the index's own order, which is git's (read-cache.c compares names as bytes).
  return [...out];
}

/**
 * The index file with the mode of each entry `modeOf` gives one for set to it, and its checksum made again.
 * isomorphic-git writes every conflict stage, and a file merged clean beside a conflict, as 100644. Only for
 * an index with no extensions, as isomorphic-git writes it: git's cache of trees would go stale.
 */
export function withEntryModes(
  bytes: Uint8Array,
  modeOf: (path: string, stage: number) => number | undefined,
): Uint8Array {
  const { entries, end } = indexEntries(bytes);
  if (end !== bytes.length - 20) {
    throw new OperationError(
      'INTERNAL',
      'The index has extensions after its entries, which Blobless does not rewrite.',
    );
  }
  const out = bytes.slice();
  const view = new DataView(out.buffer);
  for (const e of entries) {
    const mode = modeOf(e.path, e.stage);
    if (mode !== undefined) view.setUint32(e.modeAt, mode);
  }
  out.set(sha1(out.subarray(0, out.length - 20)), out.length - 20);
  return out;
}

/** One entry of an index file: its path, its stage, and where its 32-bit mode is in the file. */
interface IndexEntry {
  path: string;
  stage: number;
  modeAt: number;
}

/**
 * The entries of an index file (gitformat-index), in its order, and where they end (extensions, if any, then
 * the checksum follow). An index cut short or otherwise damaged is refused as git refuses it ("index file
 * corrupt"): its trailing SHA-1 first, then each entry.
 */
function indexEntries(bytes: Uint8Array): { entries: IndexEntry[]; end: number } {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const damaged = (why: string) =>
    new OperationError('INTERNAL', `The index file (.git/index) is damaged: ${why}. git refuses it too.`);
  const body = bytes.length - 20;
  if (body < 12 || view.getUint32(0) !== 0x44495243 /* DIRC */) throw damaged('it has no index header');
  if (!sha1(bytes.subarray(0, body)).every((b, k) => b === bytes[body + k])) {
    throw damaged('its checksum does not match (cut short?)');
  }
  const version = view.getUint32(4);
  // Version 4 compresses paths against the one before; neither isomorphic-git nor git by default writes it.
  if (version !== 2 && version !== 3) throw damaged(`version ${version} is not read here`);
  const count = view.getUint32(8);
  const out: IndexEntry[] = [];
  let at = 12;
  for (let i = 0; i < count; i++) {
    if (at + 62 > body) throw damaged(`entry ${i + 1} of ${count} is past its end`);
    const flags = view.getUint16(at + 60);
    // git reads the second flags word wherever this bit is set (read-cache.c), whatever the version says.
    const extended = (flags & 0x4000) !== 0;
    const nameStart = at + 62 + (extended ? 2 : 0);
    const nameEnd = bytes.subarray(0, body).indexOf(0, nameStart);
    // The flags hold the name's length (0xfff for 4,095 bytes or more; -1 when no NUL ends it): an entry
    // count too large reads an extension or the checksum as an entry, whose bytes do not agree.
    if ((flags & 0xfff) !== Math.min(nameEnd - nameStart, 0xfff)) {
      throw damaged(`entry ${i + 1} of ${count} has no name of the length it gives`);
    }
    const path = new TextDecoder().decode(bytes.subarray(nameStart, nameEnd));
    // ctime, mtime (8 bytes each), dev and ino come before the mode.
    out.push({ path, stage: (flags >> 12) & 3, modeAt: at + 24 });
    // Entries are padded with 1-8 NULs to a multiple of 8 bytes (version 2 and 3).
    at += Math.ceil((nameEnd - at + 1) / 8) * 8;
  }
  return { entries: out, end: at };
}

/**
 * Runs isomorphic-git's merge with its conflicts written out, then completes what it leaves undone so the
 * state is git's: the changes only `theirs` made are staged (isomorphic-git writes their files but leaves
 * the index at ours) and the files only they deleted are removed; then `MERGE_HEAD`, `MERGE_MSG` and
 * `ORIG_HEAD`. Runs inside the caller's all-or-nothing batch. The blobs the merge reads must be stored.
 */
export async function writeConflictedMerge(
  repo: RepoHandle,
  opts: { ours: string; theirs: string; base: string; oursRef: string; theirsRef: string; message: string },
): Promise<string[]> {
  const { fs, gitdir, cache } = repo;
  let conflicts: string[] = [];
  try {
    await git.merge({
      fs,
      dir: WORKTREE_DIR,
      gitdir,
      cache,
      ours: opts.oursRef,
      theirs: opts.theirsRef,
      noUpdateBranch: true,
      abortOnConflict: false,
      message: opts.message,
      author: { name: 'Blobless', email: 'blobless@localhost' },
    });
  } catch (err) {
    const e = err as { code?: string; data?: { filepaths?: string[] } };
    if (e.code !== 'MergeConflictError') throw err;
    conflicts = [...(e.data?.filepaths ?? [])].sort(comparePaths);
  }
  if (conflicts.length === 0) {
    throw new OperationError('INTERNAL', 'The merge was expected to stop on conflicts, and did not.');
  }
  const unmerged = new Set(conflicts);
  const changes = await theirChanges(repo, opts.base, opts.ours, opts.theirs);
  for (const change of changes) {
    if (!change.onlyTheirs || unmerged.has(change.path)) continue;
    await setIndexEntry(repo, change.path, change.theirs);
    if (!change.theirs) await removeWorkingEntry(repo, change.path);
    // isomorphic-git's merge writes files only; git checks a submodule out as an empty folder.
    else if (change.theirs.mode === GITLINK) {
      await removeWorkingEntry(repo, change.path);
      await mkdirp(fs.promises, `/${change.path}`);
    }
  }
  await setMergedModes(repo, changes, unmerged);
  await fs.promises.writeFile(`${GITDIR}/MERGE_HEAD`, `${opts.theirs}\n`, 'utf8');
  await fs.promises.writeFile(`${GITDIR}/MERGE_MSG`, `${opts.message}\n`, 'utf8');
  await fs.promises.writeFile(`${GITDIR}/ORIG_HEAD`, `${opts.ours}\n`, 'utf8');
  return conflicts;
}

/**
 * Gives the index entries isomorphic-git's merge wrote for files both sides changed the modes git gives them:
 * each conflict stage its side's mode, and a file merged clean the mode the merge chose (theirs where ours
 * kept the base's, else ours). Written last, on the bytes: no isomorphic-git call reads the index after it.
 */
async function setMergedModes(
  repo: RepoHandle,
  changes: readonly TheirChange[],
  unmerged: ReadonlySet<string>,
): Promise<void> {
  const stages = new Map<string, (number | undefined)[]>();
  for (const { path, base, ours, theirs, onlyTheirs } of changes) {
    if (unmerged.has(path)) stages.set(path, [undefined, base?.mode, ours?.mode, theirs?.mode]);
    else if (!onlyTheirs && ours && theirs) {
      stages.set(path, [ours.mode === base?.mode ? theirs.mode : ours.mode]);
    }
  }
  // Never empty: a merge that stopped has a conflict, and each conflict is a change of theirs.
  const file = `${GITDIR}/index`;
  const bytes = (await repo.fs.promises.readFile(file)) as Uint8Array;
  await repo.fs.promises.writeFile(
    file,
    withEntryModes(bytes, (path, stage) => stages.get(path)?.[stage]),
  );
}

/** Removes the merge's files: after its commit, or with the index and files reset by an abort. */
export async function clearMergeState(repo: RepoHandle): Promise<void> {
  for (const name of ['MERGE_HEAD', 'MERGE_MSG', 'MERGE_MODE']) {
    await repo.fs.promises.unlink(`${GITDIR}/${name}`).catch(() => undefined);
  }
}

/** A submodule's mode (MODE_GITLINK) as the walk and the index give it: a number, written as a literal. */
const GITLINK = 0o160000;

interface Side {
  oid: string;
  mode: number;
}

/** A file `theirs` changed (from the base) to something ours does not have. */
interface TheirChange {
  path: string;
  base: Side | null;
  ours: Side | null;
  theirs: Side | null;
  /** Ours is the base's: a clean merge takes theirs. */
  onlyTheirs: boolean;
}

/**
 * The files a merge of `theirs` into `ours` may change: where theirs differs from the base and from ours.
 * Folders that theirs did not change, or that are the same on both sides, are not walked.
 */
async function theirChanges(
  repo: RepoHandle,
  base: string,
  ours: string,
  theirs: string,
): Promise<TheirChange[]> {
  const { fs, gitdir, cache } = repo;
  // The walk's default reduce flattens what map returned below each folder, leaving out the undefined of
  // folders and walking nothing under a null: what comes back is a TheirChange per file.
  return (await git.walk({
    fs,
    gitdir,
    cache,
    trees: [git.TREE({ ref: base }), git.TREE({ ref: ours }), git.TREE({ ref: theirs })],
    map: async (path, [b, o, t]) => {
      if (path === '.') return undefined;
      // A mode alone changes an entry too (a file made executable).
      const id = async (e: typeof b) => (e ? `${await e.mode()} ${await e.oid()}` : null);
      const [ib, io, it] = [await id(b), await id(o), await id(t)];
      // Theirs unchanged, or the same on both sides: nothing of theirs to take here.
      if (it === ib || it === io) return null;
      // A blob or a submodule's gitlink (type commit): both are entries of the index.
      const side = async (e: typeof b): Promise<Side | null> =>
        e && (await e.type()) !== 'tree' ? { oid: await e.oid(), mode: await e.mode() } : null;
      const [sb, so, st] = [await side(b), await side(o), await side(t)];
      // A folder on some side: its files are walked below it.
      if (!sb && !so && !st) return undefined;
      return { path, base: sb, ours: so, theirs: st, onlyTheirs: io === ib } satisfies TheirChange;
    },
  })) as TheirChange[];
}

/**
 * `git merge --abort`: every file the merge touched goes back to HEAD's version, in the index and the
 * working tree, and the merge's files are removed. (isomorphic-git's abortMerge leaves the files the
 * merged branch added, and fails on them.)
 */
export async function abortMergeState(repo: RepoHandle): Promise<void> {
  const state = await readMergeState(repo);
  if (!state) throw new OperationError('NO_MERGE', 'No merge is in progress.');
  const { fs, gitdir, cache } = repo;
  const head = await git.resolveRef({ fs, gitdir, ref: 'HEAD' });
  const [base] = await git.findMergeBase({ fs, gitdir, cache, oids: [head, state.head] });
  const paths = new Set(state.conflicts);
  const changes = base ? await theirChanges(repo, base, head, state.head) : [];
  const ours = new Map(changes.map((c) => [c.path, c.ours]));
  for (const p of paths) if (!ours.has(p)) ours.set(p, await entryAt(repo, head, p));
  for (const [path, side] of ours) {
    if (side?.mode === GITLINK) {
      await removeWorkingEntry(repo, path);
      await mkdirp(fs.promises, `/${path}`);
    } else if (side) {
      const { blob } = await git.readBlob({ fs, gitdir, cache, oid: side.oid });
      await removeWorkingEntry(repo, path);
      await writeWorkingFile(repo, path, blob, side.mode);
    } else {
      await removeWorkingEntry(repo, path);
      // A file the merge added goes, with the folders it made (git merge --abort leaves none).
      await removeEmptyParents(repo, path);
    }
    await setIndexEntry(repo, path, side);
  }
  await clearMergeState(repo);
}

/** The index's stage-0 entry of a path (resolving any conflict stages), or none when `side` is null. */
async function setIndexEntry(repo: RepoHandle, filepath: string, side: Side | null): Promise<void> {
  const { fs, gitdir, cache } = repo;
  await git.updateIndex({
    fs,
    dir: WORKTREE_DIR,
    gitdir,
    cache,
    filepath,
    ...(side ? { oid: side.oid, mode: side.mode, add: true } : { remove: true, force: true }),
  });
}

async function entryAt(repo: RepoHandle, commit: string, path: string): Promise<Side | null> {
  const { fs, gitdir, cache } = repo;
  try {
    const { oid } = await git.readBlob({ fs, gitdir, cache, oid: commit, filepath: path });
    const parent = path.includes('/') ? path.slice(0, path.lastIndexOf('/')) : undefined;
    const { tree } = await git.readTree({ fs, gitdir, cache, oid: commit, filepath: parent });
    const mode = tree.find((e) => e.oid === oid && `${parent ? `${parent}/` : ''}${e.path}` === path)?.mode;
    return { oid, mode: Number.parseInt(mode ?? '100644', 8) };
  } catch {
    return null;
  }
}

/** A file, link or submodule's empty folder at `path`, gone (nothing there is fine). */
async function removeWorkingEntry(repo: RepoHandle, path: string): Promise<void> {
  const fs = repo.fs.promises;
  await fs.unlink(`/${path}`).catch(() => fs.rmdir(`/${path}`).catch(() => undefined));
}

async function writeWorkingFile(
  repo: RepoHandle,
  path: string,
  bytes: Uint8Array,
  mode: number,
): Promise<void> {
  const fs = repo.fs.promises;
  const dir = path.includes('/') ? `/${path.slice(0, path.lastIndexOf('/'))}` : null;
  if (dir) await mkdirp(fs, dir);
  if (mode === 0o120000) {
    await fs.unlink(`/${path}`).catch(() => undefined);
    await fs.symlink(new TextDecoder().decode(bytes), `/${path}`);
  } else await fs.writeFile(`/${path}`, bytes, { mode: mode & 0o111 ? 0o777 : 0o666 });
}
