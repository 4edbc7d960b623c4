// `git blame` for one file of a partial clone. git's own blame in a blob:none clone fetches each old
// version's blob on its own, one request at a time. Here the versions come from the file's history, read
// from trees alone, and their blobs are fetched ahead of the walk in generations that double in size, so
// a file with n versions costs about log2(n) requests.

import { diffArrays } from 'diff';
import type { CommitObject } from 'isomorphic-git';
import { DateQueue } from '../../model/commitQueue.ts';
import { OperationError, throwIfAborted } from '../common/errors.ts';
import {
  openRepo,
  readBlobBytes,
  readCommitObject,
  resolveCommit,
  shallowCommits,
} from '../common/repoAccess.ts';
import { type BlobContext, type BlobFetchHooks, ensureBlobs } from '../sync/lazyBlobs.ts';
import { type FileHistoryContext, fileHistory } from './fileHistory.ts';
import type { CommitSummary } from './history.ts';
import { blobsByOid, commitTree, entryAtPath, type TreeEntryRef } from './treePaths.ts';

export interface BlameLine {
  /** The commit that last changed this line. */
  commit: string;
  /** The line's number in that commit's version of the file (1-based), as git blame's porcelain says. */
  origLine: number;
  /** The path in that commit (it differs where the file was renamed since). */
  origPath: string;
  text: string;
}

export interface BlameResult {
  commit: string;
  path: string;
  lines: BlameLine[];
  /** The commits named by `lines`, by id. */
  commits: Record<string, CommitSummary>;
  /** Blob requests and versions fetched, for the person and the benchmark. */
  requests: number;
  versionsFetched: number;
}

export type BlameProgress = {
  phase: 'blame';
  /** Lines attributed so far, of all. */
  linesDone: number;
  totalLines: number;
  /** Versions of the file whose content was fetched so far. */
  versionsFetched: number;
  requests: number;
};

export interface BlameHooks {
  onProgress?: (p: BlameProgress) => void;
  signal?: AbortSignal;
  connection?: BlobFetchHooks['connection'];
}

/** The first generation of versions fetched ahead; each next one is twice as many. */
export const BLAME_FIRST_GENERATION = 16;

/** Lines of `commit`'s version of the file still looking for their origin: final line -> line here. */
interface Suspect {
  commit: string;
  path: string;
  entry: TreeEntryRef;
  /** Pairs [finalLine, lineInThisVersion], both 0-based. */
  lines: [number, number][];
}

function splitLines(bytes: Uint8Array): string[] {
  const text = new TextDecoder().decode(bytes);
  if (text === '') return [];
  const lines = text.split('\n');
  if (text.endsWith('\n')) lines.pop();
  return lines;
}

/**
 * For each line of `newer` that is unchanged from `older`, the line's number in `older` (else -1), by a
 * Myers line diff as git's xdiff computes it (ambiguous alignments may differ from git's heuristics).
 */
function unchangedLines(older: string[], newer: string[]): Int32Array {
  const map = new Int32Array(newer.length).fill(-1);
  let o = 0;
  let n = 0;
  for (const part of diffArrays(older, newer)) {
    const count = part.count ?? part.value.length;
    if (part.added) n += count;
    else if (part.removed) o += count;
    else {
      for (let i = 0; i < count; i++) map[n + i] = o + i;
      o += count;
      n += count;
    }
  }
  return map;
}

export async function blame(
  ctx: BlobContext & FileHistoryContext,
  repoId: string,
  ref: string,
  path: string,
  hooks: BlameHooks = {},
): Promise<BlameResult> {
  const { signal, onProgress } = hooks;
  const clean = path.replace(/^\/+|\/+$/g, '');
  const repo = await openRepo(ctx, repoId);
  const start = await resolveCommit(repo, ref);
  const startEntry = await entryAtPath(repo, await commitTree(repo, start), clean);
  if (!startEntry || startEntry.mode === '040000' || startEntry.mode === '160000') {
    throw new OperationError('PATH_NOT_FOUND', `There is no file "${clean}" in ${ref} to blame.`);
  }

  // The versions the walk can need, newest first: the blobs of the commits that changed the file (and
  // their parents' versions, which are the next entries of the same list).
  const versions: string[] = [];
  for (let skip = 0; ; ) {
    throwIfAborted(signal);
    const page = await fileHistory(ctx, repoId, start, clean, { skip, limit: 200 }, { signal });
    for (const e of page.entries) {
      if (e.status === 'deleted') continue;
      const entry = await entryAtPath(repo, await commitTree(repo, e.commit.oid), e.path);
      if (entry && !versions.includes(entry.oid)) versions.push(entry.oid);
    }
    skip += page.entries.length;
    if (!page.more || page.entries.length === 0) break;
  }

  let requests = 0;
  let versionsFetched = 0;
  let fetchedUpTo = 0;
  let generation = BLAME_FIRST_GENERATION;
  const progress = (linesDone: number, totalLines: number) =>
    onProgress?.({ phase: 'blame', linesDone, totalLines, versionsFetched, requests });
  const contents = new Map<string, string[]>();
  let totalLines = 0;
  let linesDone = 0;
  const read = async (oid: string): Promise<string[]> => {
    const known = contents.get(oid);
    if (known) return known;
    const at = versions.indexOf(oid);
    if (at >= fetchedUpTo || at < 0) {
      // The next generation of versions, in one batch: what the walk will ask for next.
      const batch = at < 0 ? [oid] : versions.slice(fetchedUpTo, Math.max(at + 1, fetchedUpTo + generation));
      if (at >= 0) {
        fetchedUpTo += batch.length;
        generation *= 2;
      }
      const got = await ensureBlobs(ctx, repoId, batch, { signal, connection: hooks.connection });
      requests += got.requests;
      versionsFetched += got.fetched;
      progress(linesDone, totalLines);
    }
    const lines = splitLines(await readBlobBytes(repo, oid));
    contents.set(oid, lines);
    return lines;
  };

  const finalLines = await read(startEntry.oid);
  totalLines = finalLines.length;
  const result: BlameLine[] = new Array(finalLines.length);
  const commitInfo = new Map<string, CommitObject>();
  const readCommit = async (oid: string): Promise<CommitObject> => {
    let c = commitInfo.get(oid);
    if (!c) {
      c = await readCommitObject(repo, oid);
      commitInfo.set(oid, c);
    }
    return c;
  };
  const shallow = await shallowCommits(repo);

  // git's blame walks suspects newest first (its prio_queue by commit date).
  const queue = new DateQueue<Suspect>();
  const enqueue = async (commit: string, path: string, entry: TreeEntryRef, lines: [number, number][]) => {
    const existing = queue.find((s) => s.commit === commit && s.path === path);
    if (existing) {
      existing.lines.push(...lines);
      return;
    }
    const c = await readCommit(commit);
    queue.push({ commit, path, entry, lines }, c.committer.timestamp);
  };
  const attribute = (s: Suspect, lines: [number, number][]) => {
    for (const [finalLine, here] of lines) {
      result[finalLine] = {
        commit: s.commit,
        origLine: here + 1,
        origPath: s.path,
        text: finalLines[finalLine],
      };
    }
    linesDone += lines.length;
    progress(linesDone, totalLines);
  };

  await enqueue(
    start,
    clean,
    startEntry,
    finalLines.map((_, i) => [i, i]),
  );
  while (queue.size) {
    throwIfAborted(signal);
    const s = queue.pop()!;
    const commit = await readCommit(s.commit);
    const parents = shallow.has(s.commit) ? [] : commit.parent;
    const parentEntries: { oid: string; path: string; entry: TreeEntryRef }[] = [];
    for (const p of parents) {
      const tree = await commitTree(repo, p);
      let parentPath = s.path;
      let entry = await entryAtPath(repo, tree, s.path);
      if (!entry) {
        // A whole-file rename with the same content, found from the trees (see fileHistory.ts).
        const same = (await blobsByOid(repo, tree)).get(`${s.entry.mode} ${s.entry.oid}`);
        if (same?.length) {
          parentPath = same[0];
          entry = await entryAtPath(repo, tree, parentPath);
        }
      }
      if (entry && entry.mode !== '040000' && entry.mode !== '160000')
        parentEntries.push({ oid: p, path: parentPath, entry });
    }
    // The same content in a parent: every line passes to it unchanged (git checks this before diffing).
    const identical = parentEntries.find((p) => p.entry.oid === s.entry.oid);
    if (identical) {
      await enqueue(identical.oid, identical.path, identical.entry, s.lines);
      continue;
    }
    let remaining = s.lines;
    if (parentEntries.length) {
      const mine = await read(s.entry.oid);
      for (const p of parentEntries) {
        if (!remaining.length) break;
        const map = unchangedLines(await read(p.entry.oid), mine);
        const passed: [number, number][] = [];
        const kept: [number, number][] = [];
        for (const [finalLine, here] of remaining) {
          if (map[here] >= 0) passed.push([finalLine, map[here]]);
          else kept.push([finalLine, here]);
        }
        if (passed.length) await enqueue(p.oid, p.path, p.entry, passed);
        remaining = kept;
      }
    }
    if (remaining.length) attribute(s, remaining);
  }

  const commits: Record<string, CommitSummary> = {};
  for (const line of result) {
    if (commits[line.commit]) continue;
    const c = await readCommit(line.commit);
    commits[line.commit] = {
      oid: line.commit,
      parents: c.parent,
      message: c.message,
      author: c.author,
      committer: c.committer,
    };
  }
  return { commit: start, path: clean, lines: result, commits, requests, versionsFetched };
}
