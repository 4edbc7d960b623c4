// `git blame` for one file of a partial clone. git's own blame in a blob:none clone fetches each old
// version's blob on its own, one request at a time. Here the versions come from the file's history, read
// from trees alone, and their blobs are fetched ahead of the walk in generations that double in size, so
// a file with n versions costs about log2(n) requests.

import { pathKeys, pathMaybeChanged } from '../../commitgraph/bloomFilter.ts';
import { blameLineMap } from '../../diff/blameLineMap.ts';
import { detectRenames, renameBlobsNeeded } from '../../diff/renames.ts';
import { DateQueue } from '../../model/commitQueue.ts';
import { type CommitHeader, commitGraphFor, commitHeaders } from '../common/commitGraphAccess.ts';
import { OperationError, throwIfAborted } from '../common/errors.ts';
import {
  openRepo,
  readBlobBytes,
  readCommitObject,
  resolveCommit,
  shallowCommits,
} from '../common/repoAccess.ts';
import { TreeEntriesCache } from '../common/treePair.ts';
import { type BlobContext, type BlobFetchHooks, ensureBlobs } from '../sync/lazyBlobs.ts';
import { treeFilePairs } from './diff.ts';
import { type FileHistoryContext, fileHistory } from './fileHistory.ts';
import type { CommitSummary } from './history.ts';
import { commitTree, entryAtPath, HISTORY_TREE_CACHE, type TreeEntryRef } from './treePaths.ts';

/** One line of the file, and where it came from. */
export interface BlameLine {
  /** The commit that last changed this line. */
  commit: string;
  /** The line's number in that commit's version of the file (1-based), as git blame's porcelain says. */
  origLine: number;
  /** The path in that commit (it differs where the file was renamed since). */
  origPath: string;
  /** The line's text, without its line feed. */
  text: string;
}

/** `git blame` of a file: each line with the commit that last changed it. */
export interface BlameResult {
  /** The commit blamed from (the ref, resolved). */
  commit: string;
  /** The file's path from the root. */
  path: string;
  /** Every line of the file, in order. */
  lines: BlameLine[];
  /** The commits named by `lines`, by id. */
  commits: Record<string, CommitSummary>;
  /** Blob requests and versions fetched, for the person and the benchmark. */
  requests: number;
  /** Old versions of the file whose blobs had to be fetched. */
  versionsFetched: number;
}

/** What blame tells onProgress, a few times a second: a view can show lines as they are attributed. */
export type BlameProgress = {
  /** The one phase. */
  phase: 'blame';
  /** Lines attributed so far, of all. */
  linesDone: number;
  /** Lines of the file. */
  totalLines: number;
  /** Versions of the file whose content was fetched so far. */
  versionsFetched: number;
  /** Blob requests sent so far. */
  requests: number;
  /** The file's lines, once, in the first report after its content was read: what `found` attributes. */
  fileLines?: string[];
  /** Lines attributed since the last report, `line` being the 0-based line of the file. */
  found?: (Omit<BlameLine, 'text'> & {
    /** The line's index in the file, from 0. */
    line: number;
  })[];
  /** The commits `found` names that no earlier report named. */
  commits?: Record<string, CommitSummary>;
};

/**
 * Attributed lines wait at most this long for a report, so a view re-renders a few times a second and
 * not once per commit; a report also goes out before each blob request, which can take seconds.
 */
export const BLAME_REPORT_MS = 150;

export interface BlameHooks {
  onProgress?: (p: BlameProgress) => void;
  signal?: AbortSignal;
  connection?: BlobFetchHooks['connection'];
}

/** The first generation of versions fetched ahead; each next one is twice as many. */
export const BLAME_FIRST_GENERATION = 16;

function splitLines(bytes: Uint8Array): string[] {
  const text = new TextDecoder().decode(bytes);
  if (text === '') return [];
  const lines = text.split('\n');
  if (text.endsWith('\n')) lines.pop();
  return lines;
}

/**
 * One file version blame is looking at (git's blame_origin): a commit and a path in it, and the lines of
 * the final file still suspected to come from here: [finalLine, lineInThisVersion], both 0-based.
 */
interface Origin {
  commit: string;
  path: string;
  entry: TreeEntryRef;
  suspects: [number, number][];
}

/** Regular files (644 and 755) are one kind: blame follows a path across a mode change, not a type change. */
function kindOf(mode: string): string {
  return mode === '100755' ? '100644' : mode;
}

/**
 * `git blame` (blame.c assign_blame and pass_blame, git 2.39, without -M/-C): commits newest first; each
 * version passes its suspect lines to its parents. For each parent, in order, the same path (find_origin)
 * and then, for parents without it, the file it was renamed from, by similarity (find_rename); a parent
 * with the very same blob takes every line; a parent whose blob an earlier parent already has takes none;
 * otherwise each parent in turn takes the lines its diff (blameLineMap: git's diff, with blame's trimmed
 * tail) leaves unchanged, and the commit keeps the rest. The blobs come from the file's history, fetched
 * ahead of the walk in generations that double in size.
 */
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

  // The versions the walk can need, newest first: the blobs of the commits that changed the file.
  const versions: string[] = [];
  const listed = new Set<string>();
  for (let skip = 0; ; ) {
    throwIfAborted(signal);
    const page = await fileHistory(ctx, repoId, start, clean, { skip, limit: 200 }, hooks);
    for (const { blob } of page.entries) {
      if (blob && !listed.has(blob)) {
        listed.add(blob);
        versions.push(blob);
      }
    }
    skip += page.entries.length;
    if (!page.more || page.entries.length === 0) break;
  }

  let requests = 0;
  let versionsFetched = 0;
  let fetchedUpTo = 0;
  let generation = BLAME_FIRST_GENERATION;
  let totalLines = 0;
  let linesDone = 0;
  // What the next report carries: lines attributed since the last one, and commits not named before.
  let fileLines: string[] | undefined;
  let found: NonNullable<BlameProgress['found']> = [];
  let newCommits: Record<string, CommitSummary> = {};
  let reportedAt = 0;
  const progress = () => {
    const report: BlameProgress = { phase: 'blame', linesDone, totalLines, versionsFetched, requests };
    if (fileLines) report.fileLines = fileLines;
    if (found.length) {
      report.found = found;
      report.commits = newCommits;
    }
    fileLines = undefined;
    found = [];
    newCommits = {};
    reportedAt = performance.now();
    onProgress?.(report);
  };
  const fetch = async (batch: string[]) => {
    // What was attributed so far is shown while the request runs, not after it.
    if (found.length || fileLines) progress();
    const got = await ensureBlobs(ctx, repoId, batch, { signal, connection: hooks.connection });
    requests += got.requests;
    versionsFetched += got.fetched;
    progress();
  };
  const contents = new Map<string, Uint8Array>();
  const read = async (oid: string): Promise<Uint8Array> => {
    const known = contents.get(oid);
    if (known) return known;
    const at = versions.indexOf(oid);
    if (at < 0) {
      await fetch([oid]); // no version's blob (a parent's file at another path): alone
    } else if (at >= fetchedUpTo) {
      // The next generation of versions, in one batch: what the walk will ask for next.
      const batch = versions.slice(fetchedUpTo, Math.max(at + 1, fetchedUpTo + generation));
      fetchedUpTo += batch.length;
      generation *= 2;
      await fetch(batch);
    }
    const bytes = await readBlobBytes(repo, oid);
    contents.set(oid, bytes);
    return bytes;
  };

  const final = await read(startEntry.oid);
  const finalLines = splitLines(final);
  totalLines = finalLines.length;
  fileLines = finalLines; // with no listener, the reports that carry it go to no one
  const result: BlameLine[] = new Array(finalLines.length);
  const graph = await commitGraphFor(repo);
  const headers = new Map<string, CommitHeader>();
  const header = commitHeaders(graph, (oid) => readCommitObject(repo, oid));
  const readCommit = async (oid: string): Promise<CommitHeader> => {
    let c = headers.get(oid);
    if (!c) {
      c = await header(oid);
      headers.set(oid, c);
    }
    return c;
  };
  const shallow = await shallowCommits(repo);
  const trees = new TreeEntriesCache(HISTORY_TREE_CACHE);
  const keysByPath = new Map<string, Uint32Array[]>();
  const keysOf = (path: string): Uint32Array[] => {
    let keys = keysByPath.get(path);
    if (!keys) {
      keys = pathKeys(path);
      keysByPath.set(path, keys);
    }
    return keys;
  };
  /** maybe_changed_path: the commit-graph's Bloom filter says the commit at `position` left the path as its first parent had it. */
  const unchangedAt = (position: number, path: string): boolean => {
    const filter = position >= 0 ? graph!.bloomFilter(position) : null;
    return filter !== null && !pathMaybeChanged(filter, keysOf(path));
  };
  const unchangedByFilter = (commit: string, path: string): boolean =>
    graph !== null && unchangedAt(graph.position(commit), path);

  /** The commits `result` names, by id (read as lines are attributed when someone listens, else at the end). */
  const commits: Record<string, CommitSummary> = {};
  const summaryOf = async (oid: string): Promise<CommitSummary> => {
    const c = await readCommitObject(repo, oid);
    return { oid, parents: c.parent, message: c.message, author: c.author, committer: c.committer };
  };

  // The scoreboard: origins by commit and path, and the commits with suspects, newest first (git's
  // prio_queue by commit date, stable); a commit that gets suspects again is queued again.
  const origins = new Map<string, Map<string, Origin>>();
  /** The graph positions of the commits in `origins`. */
  const originsAt = new Set<number>();
  const queue = new DateQueue<string>();
  const origin = (commit: string, path: string, entry: TreeEntryRef): Origin => {
    let byPath = origins.get(commit);
    if (!byPath) {
      byPath = new Map();
      origins.set(commit, byPath);
      if (graph) originsAt.add(graph.position(commit));
    }
    let o = byPath.get(path);
    if (!o) {
      o = { commit, path, entry, suspects: [] };
      byPath.set(path, o);
    }
    return o;
  };
  const give = async (o: Origin, lines: [number, number][]) => {
    if (!lines.length) return;
    if (!o.suspects.length) queue.push(o.commit, (await readCommit(o.commit)).committer.timestamp);
    o.suspects.push(...lines);
  };

  /** find_origin: the same path in the parent, unless it is absent there or of another kind. */
  const sameOrigin = async (parent: string, o: Origin, first: boolean): Promise<Origin | null> => {
    const known = origins.get(parent)?.get(o.path);
    if (known) return known;
    // As git does for the first parent: a filter that rules a change out means the same blob, unread.
    if (first && unchangedByFilter(o.commit, o.path)) return origin(parent, o.path, o.entry);
    const entry = await entryAtPath(repo, (await readCommit(parent)).tree, o.path, trees);
    return entry && kindOf(entry.mode) === kindOf(o.entry.mode) ? origin(parent, o.path, entry) : null;
  };
  /** find_rename: the file of the parent the path was renamed from (git diff -M, for this path only). */
  const renamedOrigin = async (parent: string, o: Origin, tree: string): Promise<Origin | null> => {
    const pairs = await treeFilePairs(repo, (await readCommit(parent)).tree, tree, false);
    const opts = { singleFollow: o.path } as const;
    const needed = renameBlobsNeeded(pairs, opts);
    const missing = needed.filter((oid) => !contents.has(oid));
    if (missing.length) await fetch(missing);
    const blobs = new Map<string, Uint8Array>();
    for (const oid of needed) blobs.set(oid, contents.get(oid) ?? (await readBlobBytes(repo, oid)));
    const found = detectRenames(pairs, (oid) => blobs.get(oid), opts).pairs.find(
      (p) => (p.status === 'R' || p.status === 'C') && p.new?.path === o.path,
    );
    if (!found?.old) return null;
    return origins.get(parent)?.get(found.old.path) ?? origin(parent, found.old.path, found.old);
  };

  /**
   * Where the Bloom filters say a run of single-parent commits left the path alone, every suspect passes
   * down the whole run at once (pass_whole_blame at each, in one step): the run's commits are never
   * queued, read or given an origin. Which line ends where depends only on the diffs along its way, not
   * on the order the scoreboard visits commits in, so the result is git's. The run stops at a commit that
   * already has origins, to join their suspects. False when the first commit of the run is not one.
   */
  const passDownRun = async (o: Origin): Promise<boolean> => {
    if (!graph || shallow.size) return false;
    let position = graph.position(o.commit);
    let moved = false;
    while (position >= 0) {
      const parents = graph.parents(position);
      if (parents.length !== 1 || !unchangedAt(position, o.path)) break;
      position = parents[0];
      moved = true;
      if (originsAt.has(position)) break;
    }
    if (!moved) return false;
    const lines = o.suspects;
    o.suspects = [];
    const commit = graph.oid(position);
    await give(origins.get(commit)?.get(o.path) ?? origin(commit, o.path, o.entry), lines);
    return true;
  };

  const passBlame = async (o: Origin) => {
    if (await passDownRun(o)) return;
    const commit = await readCommit(o.commit);
    const parents = shallow.has(o.commit) ? [] : commit.parent;
    const scapegoats: (Origin | null)[] = parents.map(() => null);
    for (const pass of [0, 1]) {
      for (let i = 0; i < parents.length; i++) {
        if (scapegoats[i]) continue;
        const p =
          pass === 0
            ? await sameOrigin(parents[i], o, i === 0)
            : await renamedOrigin(parents[i], o, commit.tree);
        if (!p) continue;
        if (p.entry.oid === o.entry.oid) {
          // The same content: every line passes to this parent (pass_whole_blame).
          const lines = o.suspects;
          o.suspects = [];
          await give(p, lines);
          return;
        }
        if (!scapegoats.some((s, j) => j < i && s && s.entry.oid === p.entry.oid)) scapegoats[i] = p;
      }
    }
    let remaining = o.suspects;
    o.suspects = [];
    if (scapegoats.some((s) => s)) {
      const mine = await read(o.entry.oid);
      for (const p of scapegoats) {
        if (!p || !remaining.length) continue;
        const map = blameLineMap(await read(p.entry.oid), mine);
        const passed: [number, number][] = [];
        const kept: [number, number][] = [];
        for (const [finalLine, here] of remaining) {
          if (map[here] >= 0) passed.push([finalLine, map[here]]);
          else kept.push([finalLine, here]);
        }
        await give(p, passed);
        remaining = kept;
      }
    }
    for (const [finalLine, here] of remaining) {
      result[finalLine] = {
        commit: o.commit,
        origLine: here + 1,
        origPath: o.path,
        text: finalLines[finalLine],
      };
      if (onProgress) found.push({ line: finalLine, commit: o.commit, origLine: here + 1, origPath: o.path });
    }
    linesDone += remaining.length;
    if (!remaining.length) return;
    if (onProgress && !commits[o.commit]) {
      commits[o.commit] = await summaryOf(o.commit);
      newCommits[o.commit] = commits[o.commit];
    }
    if (performance.now() - reportedAt >= BLAME_REPORT_MS) progress();
  };

  await give(
    origin(start, clean, startEntry),
    finalLines.map((_, i) => [i, i]),
  );
  while (queue.size) {
    throwIfAborted(signal);
    const commit = queue.pop()!;
    for (const o of [...(origins.get(commit)?.values() ?? [])]) if (o.suspects.length) await passBlame(o);
  }

  for (const line of result) commits[line.commit] ??= await summaryOf(line.commit);
  progress();
  return { commit: start, path: clean, lines: result, commits, requests, versionsFetched };
}
