// What changed between two commits, from their trees alone (a blob:none clone holds every tree), and the
// line diff of one file, for which its two blobs are fetched only when it is asked for.

import { isBinary } from '../../diff/binaryContent.ts';
import { diffLines } from '../../diff/lineDiff.ts';
import type { FilePair } from '../../diff/renames.ts';
import { unifiedHunks } from '../../diff/unifiedDiff.ts';
import type { OpsContext } from '../common/engineContext.ts';
import { OperationError } from '../common/errors.ts';
import {
  openRepo,
  type RepoHandle,
  readBlobBytes,
  readCommitObject,
  resolveCommit,
  shallowCommits,
} from '../common/repoAccess.ts';
import { walkTreePair } from '../common/treePair.ts';
import { type BlobContext, type BlobFetchHooks, ensureBlobs } from '../sync/lazyBlobs.ts';

/** How a path changed between two commits: git's A, D, M and T. */
export type ChangeStatus = 'added' | 'deleted' | 'modified' | 'type-changed';

/** One path that differs between two commits. */
export interface FileChange {
  /** The path from the repository's root. */
  path: string;
  /**
   * As `git diff --name-status --no-renames`: A, D, M (content or 644/755 mode), T (file, symlink and
   * submodule turning into one another). Renames are reported as a deletion and an addition: telling them
   * apart needs the blobs' contents.
   */
  status: ChangeStatus;
  /** The blob (or gitlink commit) before; absent when added. */
  oldOid?: string;
  /** The blob (or gitlink commit) after; absent when deleted. */
  newOid?: string;
  /** The octal mode before (`100644`, `100755`, `120000`, `160000`); absent when added. */
  oldMode?: string;
  /** The octal mode after; absent when deleted. */
  newMode?: string;
}

/** The files that differ between two commits. */
export interface CommitDiff {
  /** The commits compared; `from` is null when `to` is a root commit (compared with the empty tree). */
  from: string | null;
  /** The commit compared against `from`, as an id. */
  to: string;
  /** Each changed path, in git's path order. */
  files: FileChange[];
}

/** One line of a hunk, as `git diff` prints it. */
export interface DiffLine {
  /** A context line (` `), one added (`+`) or one removed (`-`). */
  kind: ' ' | '+' | '-';
  /** The line without its line feed. */
  text: string;
  /** The line is the last of its file and has no line feed (git's "\ No newline at end of file"). */
  noNewlineAtEnd?: true;
}

/** One hunk of a unified diff (`@@ -oldStart,oldLines +newStart,newLines @@`). */
export interface DiffHunk {
  /** The hunk's first line in the old file, from 1 (0 when the old side is empty). */
  oldStart: number;
  /** Lines of the old file the hunk covers. */
  oldLines: number;
  /** The hunk's first line in the new file, from 1 (0 when the new side is empty). */
  newStart: number;
  /** Lines of the new file the hunk covers. */
  newLines: number;
  /** The function line `git diff` prints after the hunk's `@@` (git's default rule), or "". */
  funcName: string;
  /** Its lines: three of context around each change, as git's default. */
  lines: DiffLine[];
}

/** The change of one file, as `git diff` shows it. */
export interface FileDiff {
  /** Either side is binary by git's rule (a NUL in the first 8000 bytes): no hunks then. */
  binary: boolean;
  /** The hunks, in file order; empty when binary or unchanged. */
  hunks: DiffHunk[];
}

export type DiffFileHooks = Pick<BlobFetchHooks, 'onProgress' | 'signal' | 'connection'>;

// git diff's default context (diff.context).
const CONTEXT_LINES = 3;

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

async function diffTrees(
  repo: RepoHandle,
  oldTree: string | null,
  newTree: string | null,
  prefix: string,
  out: FileChange[],
): Promise<void> {
  await walkTreePair(
    repo,
    oldTree,
    newTree,
    prefix,
    (path, a, b) => {
      if (a && b) {
        const status = kindOf(a.mode) === kindOf(b.mode) ? 'modified' : 'type-changed';
        out.push({ path, status, oldOid: a.oid, newOid: b.oid, oldMode: a.mode, newMode: b.mode });
      } else if (a) out.push({ path, status: 'deleted', oldOid: a.oid, oldMode: a.mode });
      else if (b) out.push({ path, status: 'added', newOid: b.oid, newMode: b.mode });
    },
    false,
  );
}

/**
 * The file pairs of a tree diff, as rename detection takes them (renames.ts): changed files, and with
 * `unchanged` every other file too. Trees only.
 */
export async function treeFilePairs(
  repo: RepoHandle,
  oldTree: string | null,
  newTree: string | null,
  unchanged: boolean,
): Promise<FilePair[]> {
  const pairs: FilePair[] = [];
  await walkTreePair(
    repo,
    oldTree,
    newTree,
    '',
    (path, a, b) => {
      pairs.push({
        old: a && { path, mode: a.mode, oid: a.oid },
        new: b && { path, mode: b.mode, oid: b.oid },
      });
    },
    unchanged,
  );
  return pairs;
}

/** Regular files (644 and 755) are one kind: a mode change between them is a modification. */
function kindOf(mode: string): string {
  return mode === '100755' ? '100644' : mode;
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
  const blobs = await readBlobs(
    ctx,
    repoId,
    [oldOid, newOid].filter((o): o is string => o !== null),
    hooks,
  );
  const empty = new Uint8Array(0);
  const oldBytes = oldOid === null ? empty : blobs.get(oldOid)!;
  const newBytes = newOid === null ? empty : blobs.get(newOid)!;
  if (isBinary(oldBytes) || isBinary(newBytes)) return { binary: true, hunks: [] };
  if (oldOid === newOid) return { binary: false, hunks: [] };
  return lineDiff(oldBytes, newBytes);
}

/**
 * Blobs by id, those the partial clone left on the server fetched first, in one request: a file's two
 * versions (diffFile), the candidates of a rename (fileHistory).
 */
export async function readBlobs(
  ctx: BlobContext,
  repoId: string,
  oids: readonly string[],
  hooks: DiffFileHooks = {},
): Promise<Map<string, Uint8Array>> {
  if (oids.length > 0) await ensureBlobs(ctx, repoId, [...oids], hooks);
  const repo = await openRepo(ctx, repoId);
  const blobs = new Map<string, Uint8Array>();
  for (const oid of oids) if (!blobs.has(oid)) blobs.set(oid, await readBlobBytes(repo, oid));
  return blobs;
}

const UTF8 = new TextEncoder();

/**
 * The hunks `git diff -U3` prints for two texts (workers/diff: git's own alignment, hunk sliding and indent
 * heuristic), with each line as text; exported for tests.
 */
export function lineDiff(oldText: Uint8Array | string, newText: Uint8Array | string): FileDiff {
  const diff = diffLines(
    typeof oldText === 'string' ? UTF8.encode(oldText) : oldText,
    typeof newText === 'string' ? UTF8.encode(newText) : newText,
  );
  const decoder = new TextDecoder('utf-8');
  const hunks = unifiedHunks(diff, { context: CONTEXT_LINES }).map(
    (h): DiffHunk => ({
      oldStart: h.oldStart,
      oldLines: h.oldCount,
      newStart: h.newStart,
      newLines: h.newCount,
      funcName: decoder.decode(h.funcName),
      lines: h.lines.map((l) => {
        const file = l.kind === '+' ? diff.new : diff.old;
        let end = file.starts[l.record + 1];
        const finalNewline = file.bytes[end - 1] === 0x0a;
        if (finalNewline) end--;
        const text = decoder.decode(file.bytes.subarray(file.starts[l.record], end));
        return finalNewline ? { kind: l.kind, text } : { kind: l.kind, text, noNewlineAtEnd: true };
      }),
    }),
  );
  return { binary: false, hunks };
}
