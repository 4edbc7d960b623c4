// The line diff git computes (xdiff's default algorithm with git's default options): records and classes,
// xdiff's discards, Myers with its cut-offs, then hunk sliding with the indent heuristic on both files.
// Its changes are git's, byte for byte; the unified form is in unifiedDiff.ts.

import { compactChanges } from './compaction.ts';
import { discardRecords } from './discardRecords.ts';
import { classifyRecords, type LineRecords, splitRecords } from './lineRecords.ts';
import { myersMarkChanges } from './myers.ts';

/** One change: `oldCount` records of the old file at `oldStart` became `newCount` at `newStart` (0-based). */
export interface LineChange {
  oldStart: number;
  oldCount: number;
  newStart: number;
  newCount: number;
}

export interface LineDiffOptions {
  /** git's `diff.indentHeuristic`, on by default since git 2.14. */
  indentHeuristic?: boolean;
  /** `--minimal`: no cost cut-offs, and frequent lines are not set aside first. */
  minimal?: boolean;
}

export interface LineDiff {
  old: LineRecords;
  new: LineRecords;
  /** In file order, never empty ones. */
  changes: LineChange[];
}

export function diffLines(oldBytes: Uint8Array, newBytes: Uint8Array, opts: LineDiffOptions = {}): LineDiff {
  const a = splitRecords(oldBytes);
  const b = splitRecords(newBytes);
  const classes = classifyRecords(a, b);
  const minimal = opts.minimal ?? false;
  // One byte per record, offset by one, so that record -1 and record n read as unchanged.
  const changedA = new Uint8Array(a.count + 2);
  const changedB = new Uint8Array(b.count + 2);
  const kept = discardRecords(classes.a, classes.b, classes.inA, classes.inB, changedA, changedB, minimal);
  myersMarkChanges(kept.a.classes, kept.a.index, changedA, kept.b.classes, kept.b.index, changedB, minimal);
  const heuristic = opts.indentHeuristic ?? true;
  compactChanges(classes.a, changedA, classes.b, changedB, heuristic ? a : null);
  compactChanges(classes.b, changedB, classes.a, changedA, heuristic ? b : null);
  return { old: a, new: b, changes: editScript(changedA, a.count, changedB, b.count) };
}

/** xdl_build_script: the runs of changed records of both files, paired in order. */
function editScript(
  changedA: Uint8Array,
  countA: number,
  changedB: Uint8Array,
  countB: number,
): LineChange[] {
  const out: LineChange[] = [];
  let i1 = 0;
  let i2 = 0;
  while (i1 < countA || i2 < countB) {
    if (changedA[i1 + 1] || changedB[i2 + 1]) {
      let e1 = i1;
      while (e1 < countA && changedA[e1 + 1]) e1++;
      let e2 = i2;
      while (e2 < countB && changedB[e2 + 1]) e2++;
      out.push({ oldStart: i1, oldCount: e1 - i1, newStart: i2, newCount: e2 - i2 });
      i1 = e1;
      i2 = e2;
    } else {
      i1++;
      i2++;
    }
  }
  return out;
}

/** Bytes compared per step when trimming the common tail (trim_common_tail's block). */
const TAIL_BLOCK = 1024;

/**
 * What git's blame (and every xdiff caller without context lines) diffs: both files without the longest
 * common tail made of whole 1,024-byte blocks, given back up to the first line feed in it (xdiff-interface.c
 * trim_common_tail). It only saves time in git, but the trimmed end bounds how far a hunk can slide, so
 * blame must diff exactly these.
 */
export function trimCommonTail(a: Uint8Array, b: Uint8Array): [Uint8Array, Uint8Array] {
  const smaller = Math.min(a.length, b.length);
  let trimmed = 0;
  while (TAIL_BLOCK + trimmed <= smaller && sameTail(a, b, trimmed)) trimmed += TAIL_BLOCK;
  let recovered = 0;
  const ap = a.length - trimmed;
  while (recovered < trimmed) if (a[ap + recovered++] === 0x0a) break;
  const cut = trimmed - recovered;
  return [a.subarray(0, a.length - cut), b.subarray(0, b.length - cut)];
}

function sameTail(a: Uint8Array, b: Uint8Array, trimmed: number): boolean {
  const ai = a.length - trimmed - TAIL_BLOCK;
  const bi = b.length - trimmed - TAIL_BLOCK;
  for (let k = 0; k < TAIL_BLOCK; k++) if (a[ai + k] !== b[bi + k]) return false;
  return true;
}
