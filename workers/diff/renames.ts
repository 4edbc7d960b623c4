// Renames and copies as git 2.39 finds them (diffcore-rename.c): from a tree diff's file pairs, the added
// files are paired with deleted ones (with -C, also with modified ones; with --find-copies-harder, with
// unchanged ones too), exact matches first, then, for renames only, files of the same base name whose
// similarity reaches the midpoint between the minimum score and 100 %, then the best remaining pairs of
// the similarity matrix, within git's limit on its size. Pure: the caller supplies the blobs, which it can
// fetch in one batch from `renameBlobsNeeded`.

import {
  DEFAULT_RENAME_SCORE,
  estimateSimilarity,
  isRegularFile,
  MAX_SCORE,
  type SimilarityBlob,
  similarityPercent,
} from './similarity.ts';

export interface PairSide {
  path: string;
  mode: string;
  oid: string;
}

/**
 * One entry of a tree diff (`git diff-tree -r` order: by path). Both sides set and equal is an unchanged
 * file, which only --find-copies-harder lists.
 */
export interface FilePair {
  old: PairSide | null;
  new: PairSide | null;
}

export interface RenameOptions {
  /** `-M` (renames, the default) or `-C` (renames and copies). */
  detect?: 'renames' | 'copies';
  /** `--find-copies-harder`: unchanged files (listed in the pairs) are copy sources too. */
  findCopiesHarder?: boolean;
  /** Out of MAX_SCORE (60,000); `-M50%` is the default 30,000. */
  minimumScore?: number;
  /** `diff.renameLimit`: the matrix is at most this squared; 0 or less means no limit. git's default 1000. */
  renameLimit?: number;
  /** Only this added path is looked for (what `git log --follow` and blame ask). */
  singleFollow?: string;
}

export type RenameStatus = 'A' | 'D' | 'M' | 'T' | 'R' | 'C';

export interface RenamedPair {
  status: RenameStatus;
  old: PairSide | null;
  new: PairSide | null;
  /** For R and C: the similarity as git prints it (R087 is 87). */
  similarity?: number;
}

export interface RenameResult {
  /** The pairs as git reports them, in its order; unchanged files and renamed-away deletions dropped. */
  pairs: RenamedPair[];
  /** The matrix was over the limit and inexact detection was skipped (git's "rename limit" warning). */
  skippedInexact: boolean;
}

const EMPTY_BLOB = 'e69de29bb2d1d6434b8b29ae775ad8c2e48c5391';
const DEFAULT_RENAME_LIMIT = 1000;
/** Candidate sources kept per destination while scoring (NUM_CANDIDATE_PER_DST). */
const CANDIDATES_PER_DST = 4;
/** Identical sources looked at per destination at most (find_identical_files). */
const MAX_IDENTICAL = 100;

interface Source {
  pair: FilePair;
  side: PairSide;
  /** rename_used: destinations that took it, plus one for a file that stays (a copy source). */
  used: number;
  unmodified: boolean;
}

interface Destination {
  pair: FilePair;
  side: PairSide;
  source: Source | null;
  score: number;
}

function isCreation(p: FilePair): p is { old: null; new: PairSide } {
  return p.old === null && p.new !== null;
}

function isUnmodified(p: FilePair): boolean {
  return p.old !== null && p.new !== null && p.old.oid === p.new.oid && p.old.mode === p.new.mode;
}

/** The rename candidates of diffcore_rename's setup loop. */
function candidates(pairs: FilePair[], opts: RenameOptions): { srcs: Source[]; dsts: Destination[] } {
  const copies = opts.detect === 'copies';
  const srcs: Source[] = [];
  const dsts: Destination[] = [];
  for (const p of pairs) {
    if (isCreation(p)) {
      if (opts.singleFollow !== undefined && opts.singleFollow !== p.new.path) continue;
      dsts.push({ pair: p, side: p.new, source: null, score: 0 });
    } else if (p.old && !p.new) {
      srcs.push({ pair: p, side: p.old, used: 0, unmodified: false });
    } else if (p.old && copies && (opts.findCopiesHarder || !isUnmodified(p))) {
      srcs.push({ pair: p, side: p.old, used: 1, unmodified: isUnmodified(p) });
    }
  }
  return { srcs, dsts };
}

/** basename_same: the same file name, whatever the folders. */
function sameBaseName(a: string, b: string): boolean {
  return a.slice(a.lastIndexOf('/') + 1) === b.slice(b.lastIndexOf('/') + 1);
}

/** Exact renames (find_exact_renames): the same blob; an unused source and the same base name first. */
function exactRenames(srcs: Source[], dsts: Destination[], copies: boolean): number {
  const byOid = new Map<string, Source[]>();
  for (const s of srcs) {
    const list = byOid.get(s.side.oid);
    if (list) list.push(s);
    else byOid.set(s.side.oid, [s]);
  }
  let found = 0;
  for (const d of dsts) {
    let best: Source | null = null;
    let bestScore = -1;
    let left = MAX_IDENTICAL;
    for (const s of byOid.get(d.side.oid) ?? []) {
      const regular = isRegularFile(s.side.mode) && isRegularFile(d.side.mode);
      if (!regular && s.side.mode !== d.side.mode) continue;
      if (s.used && !copies) continue;
      const score = (s.used ? 0 : 1) + (sameBaseName(s.side.path, d.side.path) ? 1 : 0);
      if (score > bestScore) {
        best = s;
        bestScore = score;
        if (score === 2) break;
      }
      if (!--left) break;
    }
    if (best) {
      record(d, best, MAX_SCORE);
      found++;
    }
  }
  return found;
}

function record(d: Destination, s: Source, score: number): void {
  s.used++;
  d.source = s;
  d.score = score;
}

/**
 * The blobs inexact detection reads: every destination and source left after exact matches (for `-M`, a
 * superset: the same-base-name pass may leave fewer). With `-C --find-copies-harder`, unchanged sources
 * are left out when git's rename limit would leave them out.
 */
export function renameBlobsNeeded(pairs: FilePair[], opts: RenameOptions = {}): string[] {
  const { srcs, dsts } = candidates(pairs, opts);
  if (!srcs.length || !dsts.length) return [];
  const copies = opts.detect === 'copies';
  const found = exactRenames(srcs, dsts, copies);
  if ((opts.minimumScore || DEFAULT_RENAME_SCORE) >= MAX_SCORE || found === dsts.length) return [];
  let sources = copies ? srcs : srcs.filter((s) => !s.used);
  if (copies) {
    const limit = opts.renameLimit ?? DEFAULT_RENAME_LIMIT;
    const verdict = tooManyCandidates(dsts.length - found, sources, limit, opts.findCopiesHarder === true);
    if (verdict === 'skip') return [];
    if (verdict === 'skip-unmodified') sources = sources.filter((s) => !s.unmodified);
  }
  const needed = new Set<string>();
  for (const d of dsts) if (!d.source) needed.add(d.side.oid);
  for (const s of sources) needed.add(s.side.oid);
  needed.delete(EMPTY_BLOB);
  return [...needed];
}

interface Candidate {
  dst: number;
  src: number;
  score: number;
  nameScore: number;
}

/** score_compare: higher scores first, then the same base name; empty slots last. */
function compareCandidates(a: Candidate, b: Candidate): number {
  if (a.dst < 0) return b.dst >= 0 ? 1 : 0;
  if (b.dst < 0) return -1;
  if (a.score === b.score) return b.nameScore - a.nameScore;
  return b.score - a.score;
}

/**
 * diffcore_rename on a tree diff's pairs. `content` gives each blob `renameBlobsNeeded` named; a missing
 * one throws, as git would fail to read it.
 */
export function detectRenames(
  pairs: FilePair[],
  content: (oid: string) => Uint8Array | undefined,
  opts: RenameOptions = {},
): RenameResult {
  const copies = opts.detect === 'copies';
  const minimumScore = opts.minimumScore || DEFAULT_RENAME_SCORE;
  const limit = opts.renameLimit ?? DEFAULT_RENAME_LIMIT;
  let { srcs, dsts } = candidates(pairs, opts);
  let skippedInexact = false;
  const blobs = new Map<string, SimilarityBlob>();
  const blob = (side: PairSide): SimilarityBlob => {
    const key = `${side.mode} ${side.oid}`;
    let b = blobs.get(key);
    if (!b) {
      const bytes = side.oid === EMPTY_BLOB ? new Uint8Array(0) : content(side.oid);
      if (!bytes) throw new Error(`detectRenames: blob ${side.oid} (${side.path}) was not given`);
      b = { mode: side.mode, content: bytes };
      blobs.set(key, b);
    }
    return b;
  };

  if (srcs.length && dsts.length) {
    const exact = exactRenames(srcs, dsts, copies);
    let renamed = exact;
    if (minimumScore < MAX_SCORE) {
      if (!copies) {
        // Sources an exact rename took are gone; then files of the same base name, unique on both sides.
        srcs = srcs.filter((s) => !s.used);
        renamed += baseNameMatches(
          srcs,
          dsts,
          minimumScore + Math.floor((MAX_SCORE - minimumScore) / 2),
          blob,
        );
        srcs = srcs.filter((s) => !s.used);
      }
      const open = dsts.length - renamed;
      if (open && srcs.length) {
        const verdict = tooManyCandidates(open, srcs, limit, opts.findCopiesHarder === true);
        if (verdict === 'skip') skippedInexact = true;
        else inexactRenames(srcs, dsts, minimumScore, verdict === 'skip-unmodified', copies, blob);
      }
    }
  }

  return { pairs: report(pairs, dsts), skippedInexact };
}

/** find_basename_matches, as plain `-M` runs it (no directory-rename hints outside merges). */
function baseNameMatches(
  srcs: Source[],
  dsts: Destination[],
  minimumScore: number,
  blob: (side: PairSide) => SimilarityBlob,
): number {
  const base = (path: string) => path.slice(path.lastIndexOf('/') + 1);
  const sources = new Map<string, number>();
  srcs.forEach((s, i) => {
    const b = base(s.side.path);
    sources.set(b, sources.has(b) ? -1 : i);
  });
  const dests = new Map<string, number>();
  dsts.forEach((d, i) => {
    if (d.source) return;
    const b = base(d.side.path);
    dests.set(b, dests.has(b) ? -1 : i);
  });
  let found = 0;
  srcs.forEach((s, i) => {
    const b = base(s.side.path);
    const di = dests.get(b);
    if (di === undefined || sources.get(b) !== i || di === -1) return;
    const d = dsts[di];
    if (d.source) return;
    const score = estimateSimilarity(blob(s.side), blob(d.side), minimumScore);
    if (score < minimumScore) return;
    record(d, s, score);
    found++;
  });
  return found;
}

/** too_many_rename_candidates: run, run without unchanged sources (-C -C degraded to -C), or skip. */
function tooManyCandidates(
  dsts: number,
  srcs: Source[],
  limit: number,
  findCopiesHarder: boolean,
): 'run' | 'skip-unmodified' | 'skip' {
  if (limit <= 0 || dsts * srcs.length <= limit * limit) return 'run';
  if (!findCopiesHarder) return 'skip';
  const limited = srcs.filter((s) => !s.unmodified).length;
  return dsts * limited <= limit * limit ? 'skip-unmodified' : 'skip';
}

/** The similarity matrix: the 4 best sources per destination, then the best pairs overall. */
function inexactRenames(
  srcs: Source[],
  dsts: Destination[],
  minimumScore: number,
  skipUnmodified: boolean,
  copies: boolean,
  blob: (side: PairSide) => SimilarityBlob,
): void {
  const matrix: Candidate[] = [];
  dsts.forEach((d, i) => {
    if (d.source) return;
    const best: Candidate[] = [];
    for (let k = 0; k < CANDIDATES_PER_DST; k++) best.push({ dst: -1, src: -1, score: 0, nameScore: 0 });
    srcs.forEach((s, j) => {
      if (skipUnmodified && s.unmodified) return;
      const candidate: Candidate = {
        dst: i,
        src: j,
        score: estimateSimilarity(blob(s.side), blob(d.side), minimumScore),
        nameScore: sameBaseName(s.side.path, d.side.path) ? 1 : 0,
      };
      // record_if_better: replace the worst of the four (the first of equals) if strictly better.
      let worst = 0;
      for (let k = 1; k < CANDIDATES_PER_DST; k++) if (compareCandidates(best[k], best[worst]) > 0) worst = k;
      if (compareCandidates(best[worst], candidate) > 0) best[worst] = candidate;
    });
    matrix.push(...best);
  });
  // git sorts with a stable merge sort (STABLE_QSORT), as Array.prototype.sort is.
  matrix.sort(compareCandidates);
  const take = (allowUsed: boolean) => {
    for (const c of matrix) {
      if (c.dst < 0 || c.score < minimumScore) break;
      const d = dsts[c.dst];
      if (d.source) continue;
      if (!allowUsed && srcs[c.src].used) continue;
      record(d, srcs[c.src], c.score);
    }
  };
  take(false);
  if (copies) take(true);
}

/**
 * The pairs as git reports them (diffcore_rename's write-back, then diff_resolve_rename_copy): a destination
 * that found a source becomes R, or C when its source stays or is used again further down; a deletion
 * whose file went elsewhere and unchanged files are dropped.
 */
function report(pairs: FilePair[], dsts: Destination[]): RenamedPair[] {
  const byPair = new Map<FilePair, Destination>();
  for (const d of dsts) if (d.source) byPair.set(d.pair, d);
  const used = new Map<FilePair, number>();
  for (const d of byPair.values()) used.set(d.source!.pair, d.source!.used);
  const out: RenamedPair[] = [];
  for (const p of pairs) {
    const d = byPair.get(p);
    if (d) {
      const src = d.source!;
      const left = used.get(src.pair)! - 1;
      used.set(src.pair, left);
      const status = src.side.path === d.side.path ? 'M' : left > 0 ? 'C' : 'R';
      out.push({ status, old: src.side, new: d.side, similarity: similarityPercent(d.score) });
    } else if (p.old && !p.new) {
      if (!used.has(p)) out.push({ status: 'D', old: p.old, new: null });
    } else if (isCreation(p)) {
      out.push({ status: 'A', old: null, new: p.new });
    } else if (p.old && p.new && !isUnmodified(p)) {
      const kind = (m: string) => (m === '100755' ? '100644' : m);
      out.push({ status: kind(p.old.mode) === kind(p.new.mode) ? 'M' : 'T', old: p.old, new: p.new });
    }
  }
  return out;
}
