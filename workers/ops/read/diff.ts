// What changed between two commits, from their trees alone (a blob:none clone holds every tree), and the
// line diff of one file, for which its two blobs are fetched only when it is asked for.

import { structuredPatch } from 'diff';
import { MODE_TREE_PADDED as MODE_TREE } from '../../pack/treeCheck.ts';
import { readCheckedTree } from '../common/checkedTrees.ts';
import type { OpsContext } from '../common/engineContext.ts';
import { OperationError } from '../common/errors.ts';
import {
  isBinary,
  openRepo,
  type RepoHandle,
  readBlobBytes,
  readCommitObject,
  resolveCommit,
  shallowCommits,
} from '../common/repoAccess.ts';
import { type BlobContext, type BlobFetchHooks, ensureBlobs } from '../sync/lazyBlobs.ts';

export type ChangeStatus = 'added' | 'deleted' | 'modified' | 'type-changed';

export interface FileChange {
  path: string;
  /**
   * As `git diff --name-status --no-renames`: A, D, M (content or 644/755 mode), T (file, symlink and
   * submodule turning into one another). Renames are reported as a deletion and an addition: telling them
   * apart needs the blobs' contents.
   */
  status: ChangeStatus;
  oldOid?: string;
  newOid?: string;
  oldMode?: string;
  newMode?: string;
}

export interface CommitDiff {
  /** The commits compared; `from` is null when `to` is a root commit (compared with the empty tree). */
  from: string | null;
  to: string;
  files: FileChange[];
}

export interface DiffLine {
  kind: ' ' | '+' | '-';
  text: string;
  /** The line is the last of its file and has no line feed (git's "\ No newline at end of file"). */
  noNewlineAtEnd?: true;
}

export interface DiffHunk {
  oldStart: number;
  oldLines: number;
  newStart: number;
  newLines: number;
  lines: DiffLine[];
}

export interface FileDiff {
  /** Either side is binary by git's rule (a NUL in the first 8000 bytes): no hunks then. */
  binary: boolean;
  hunks: DiffHunk[];
  /** The line diff took too long and the hunk replaces every line; still a correct patch, just not minimal. */
  approximate?: true;
}

export type DiffFileHooks = Pick<BlobFetchHooks, 'onProgress' | 'signal' | 'connection'>;

// git diff's default context (diff.context).
const CONTEXT_LINES = 3;
// Longer and the hunks become one replacement: a line diff of two large, very different files is O(N·D).
const LINE_DIFF_TIMEOUT_MS = 3000;

/**
 * The files that differ between `commitA` and `commitB` (branch, tag or commit ids), in git's path order.
 * `commitA` null means B's first parent. Reads trees only and skips every subtree whose id is the same on
 * both sides, so it costs no network and time in proportion to what changed.
 */
export async function diffCommits(
  ctx: OpsContext,
  repoId: string,
  commitA: string | null,
  commitB: string,
  opts: { againstEmptyTree?: boolean } = {},
): Promise<CommitDiff> {
  const repo = await openRepo(ctx, repoId);
  const to = await resolveCommit(repo, commitB);
  const toCommit = await readCommitObject(repo, to);
  const from = opts.againstEmptyTree
    ? null
    : commitA === null
      ? (toCommit.parent[0] ?? null)
      : await resolveCommit(repo, commitA);
  let fromTree: string | null = null;
  if (from !== null) {
    try {
      fromTree = (await readCommitObject(repo, from)).tree;
    } catch (err) {
      // A shallow repo's boundary commit: its parent comes with a deeper fetch (the history fill's next step).
      if (commitA === null && (await shallowCommits(repo)).has(to)) {
        throw new OperationError(
          'NOT_FETCHED_YET',
          `The parent of ${to.slice(0, 10)} is not in this browser yet: this clone's history is shallow. It arrives with the rest of the history (or a Fetch that deepens it).`,
        );
      }
      throw err;
    }
  }
  const files: FileChange[] = [];
  await diffTrees(repo, fromTree, toCommit.tree, '', files);
  return { from, to, files };
}

interface Entry {
  name: string;
  oid: string;
  mode: string;
}

/** A checked tree's entries (checkedTrees.ts: HostileTreeError for one git refuses), in git's order. */
async function readEntries(repo: RepoHandle, oid: string | null, prefix: string): Promise<Entry[]> {
  if (oid === null) return [];
  // A checked tree is in git's order already, where a folder sorts as "name/".
  return readCheckedTree(repo, oid, prefix);
}

/** Walks two trees in step, in git's entry order, the way tree-diff.c does. */
async function diffTrees(
  repo: RepoHandle,
  oldTree: string | null,
  newTree: string | null,
  prefix: string,
  out: FileChange[],
): Promise<void> {
  if (oldTree === newTree) return;
  const [olds, news] = await Promise.all([
    readEntries(repo, oldTree, prefix),
    readEntries(repo, newTree, prefix),
  ]);
  let i = 0;
  let j = 0;
  while (i < olds.length || j < news.length) {
    const a = olds[i];
    const b = news[j];
    const order = a === undefined ? 1 : b === undefined ? -1 : compareEntries(a, b);
    if (order < 0) {
      await removed(repo, a, prefix, out);
      i++;
    } else if (order > 0) {
      await added(repo, b, prefix, out);
      j++;
    } else {
      const path = prefix + a.name;
      if (a.mode === MODE_TREE && b.mode === MODE_TREE) {
        await diffTrees(repo, a.oid, b.oid, `${path}/`, out);
      } else if (a.oid !== b.oid || a.mode !== b.mode) {
        const status = kindOf(a.mode) === kindOf(b.mode) ? 'modified' : 'type-changed';
        out.push({ path, status, oldOid: a.oid, newOid: b.oid, oldMode: a.mode, newMode: b.mode });
      }
      i++;
      j++;
    }
  }
}

async function removed(repo: RepoHandle, e: Entry, prefix: string, out: FileChange[]): Promise<void> {
  if (e.mode === MODE_TREE) return diffTrees(repo, e.oid, null, `${prefix}${e.name}/`, out);
  out.push({ path: prefix + e.name, status: 'deleted', oldOid: e.oid, oldMode: e.mode });
}

async function added(repo: RepoHandle, e: Entry, prefix: string, out: FileChange[]): Promise<void> {
  if (e.mode === MODE_TREE) return diffTrees(repo, null, e.oid, `${prefix}${e.name}/`, out);
  out.push({ path: prefix + e.name, status: 'added', newOid: e.oid, newMode: e.mode });
}

/** Regular files (644 and 755) are one kind: a mode change between them is a modification. */
function kindOf(mode: string): string {
  return mode === '100755' ? '100644' : mode;
}

/**
 * git's tree order (tree.c base_name_compare): names compared as bytes, a tree's name as if it ended in "/".
 * A file and a folder of the same name are two entries, as in git: one deleted, the other added.
 */
function compareEntries(a: Entry, b: Entry): number {
  return compareCodePoints(
    a.mode === MODE_TREE ? `${a.name}/` : a.name,
    b.mode === MODE_TREE ? `${b.name}/` : b.name,
  );
}

/** UTF-8 byte order is code point order, which differs from JS's UTF-16 order only past U+FFFF. */
function compareCodePoints(a: string, b: string): number {
  const n = Math.min(a.length, b.length);
  for (let k = 0; k < n; k++) {
    const x = a.charCodeAt(k);
    const y = b.charCodeAt(k);
    if (x === y) continue;
    const xs = x >= 0xd800 && x <= 0xdfff;
    const ys = y >= 0xd800 && y <= 0xdfff;
    if (xs !== ys) return xs ? 1 : -1; // a surrogate stands for a code point above every BMP one
    return x - y;
  }
  return a.length - b.length;
}

/**
 * The line diff of two blobs (null for the side where the file does not exist), with git's 3 lines of
 * context. Both blobs are fetched in one request if they are not stored.
 */
export async function diffFile(
  ctx: BlobContext,
  repoId: string,
  oldOid: string | null,
  newOid: string | null,
  hooks: DiffFileHooks = {},
): Promise<FileDiff> {
  const oids = [oldOid, newOid].filter((o): o is string => o !== null);
  if (oids.length > 0) await ensureBlobs(ctx, repoId, oids, hooks);
  const repo = await openRepo(ctx, repoId);
  const empty = new Uint8Array(0);
  const oldBytes = oldOid === null ? empty : await readBlobBytes(repo, oldOid);
  const newBytes = newOid === null ? empty : await readBlobBytes(repo, newOid);
  if (isBinary(oldBytes) || isBinary(newBytes)) return { binary: true, hunks: [] };
  if (oldOid === newOid) return { binary: false, hunks: [] };
  const decoder = new TextDecoder('utf-8');
  return lineDiff(decoder.decode(oldBytes), decoder.decode(newBytes));
}

/** Unified-diff hunks of two texts; exported for tests. */
export function lineDiff(oldText: string, newText: string): FileDiff {
  const patch = structuredPatch('a', 'b', oldText, newText, undefined, undefined, {
    context: CONTEXT_LINES,
    timeout: LINE_DIFF_TIMEOUT_MS,
  });
  if (!patch) return { binary: false, hunks: replaceAll(oldText, newText), approximate: true };
  const hunks = patch.hunks.map((h) => {
    const lines: DiffLine[] = [];
    for (const raw of h.lines) {
      if (raw.startsWith('\\')) {
        // "\ No newline at end of file" belongs to the line before it.
        const last = lines[lines.length - 1];
        if (last) last.noNewlineAtEnd = true;
        continue;
      }
      lines.push({ kind: raw[0] as DiffLine['kind'], text: raw.slice(1) });
    }
    // jsdiff numbers an empty side's range from 1; git (and its own formatPatch) from the line before.
    return {
      oldStart: h.oldLines === 0 ? h.oldStart - 1 : h.oldStart,
      oldLines: h.oldLines,
      newStart: h.newLines === 0 ? h.newStart - 1 : h.newStart,
      newLines: h.newLines,
      lines,
    };
  });
  return { binary: false, hunks };
}

function replaceAll(oldText: string, newText: string): DiffHunk[] {
  const split = (text: string, kind: '+' | '-'): DiffLine[] => {
    if (text === '') return [];
    const parts = text.split('\n');
    const last = parts.pop();
    const lines: DiffLine[] = parts.map((t) => ({ kind, text: t }));
    if (last !== '') lines.push({ kind, text: last as string, noNewlineAtEnd: true });
    return lines;
  };
  const removed = split(oldText, '-');
  const addedLines = split(newText, '+');
  if (removed.length + addedLines.length === 0) return [];
  return [
    {
      oldStart: removed.length === 0 ? 0 : 1,
      oldLines: removed.length,
      newStart: addedLines.length === 0 ? 0 : 1,
      newLines: addedLines.length,
      lines: [...removed, ...addedLines],
    },
  ];
}
