// xdiff's preparation before Myers (xprepare.c: xdl_trim_ends, xdl_cleanup_records): the common head and
// tail are set aside, and lines that cannot match (no equal line in the other file), or that match so
// often they only slow the search (and sit among lines that cannot match), are marked changed up front.
// This changes which alignment Myers finds, so it is done exactly as xdiff does it.

/** xdiff's cap on how many equal lines still count as a "few" matches (XDL_MAX_EQLIMIT). */
const MAX_EQUAL_LIMIT = 1024;
/** How far the run-of-discards scan looks each way (XDL_SIMSCAN_WINDOW). */
const SCAN_WINDOW = 100;
/** A multi-match line is discarded when such lines are under 1 in this many of its run (XDL_KPDIS_RUN). */
const KEEP_RUN = 4;

/** xdl_bogosqrt: 2^ceil(bits(n)/2), xdiff's rough square root. */
export function bogoSqrt(n: number): number {
  let i = 1;
  for (let v = n; v > 0; v = Math.floor(v / 4)) i *= 2;
  return i;
}

/** The records each side passes to Myers: their indices, and their class ids in that order. */
export interface KeptRecords {
  index: Int32Array;
  classes: Int32Array;
}

/**
 * Marks in `changedA`/`changedB` (one byte per record, offset by one: index 0 stands for record -1) the
 * records discarded before the search, and returns the ones kept. With `minimal`, lines that match often
 * are kept (xdiff's XDF_NEED_MINIMAL).
 */
export function discardRecords(
  a: Int32Array,
  b: Int32Array,
  inA: Int32Array,
  inB: Int32Array,
  changedA: Uint8Array,
  changedB: Uint8Array,
  minimal: boolean,
): { a: KeptRecords; b: KeptRecords } {
  let start = 0;
  const limit = Math.min(a.length, b.length);
  while (start < limit && a[start] === b[start]) start++;
  let tail = 0;
  while (tail < limit - start && a[a.length - 1 - tail] === b[b.length - 1 - tail]) tail++;
  return {
    a: keep(a, inB, start, a.length - 1 - tail, changedA, minimal),
    b: keep(b, inA, start, b.length - 1 - tail, changedB, minimal),
  };
}

// 0: no equal line in the other file; 1: a few; 2: many.
function keep(
  classes: Int32Array,
  inOther: Int32Array,
  start: number,
  end: number,
  changed: Uint8Array,
  minimal: boolean,
): KeptRecords {
  const many = Math.min(bogoSqrt(classes.length), MAX_EQUAL_LIMIT);
  const n = Math.max(0, end - start + 1);
  const kind = new Uint8Array(classes.length);
  for (let i = start; i <= end; i++) {
    const matches = inOther[classes[i]];
    kind[i] = matches === 0 ? 0 : matches >= many && !minimal ? 2 : 1;
  }
  const index = new Int32Array(n);
  const kept = new Int32Array(n);
  let count = 0;
  for (let i = start; i <= end; i++) {
    if (kind[i] === 1 || (kind[i] === 2 && !amongDiscards(kind, i, start, end))) {
      index[count] = i;
      kept[count] = classes[i];
      count++;
    } else {
      changed[i + 1] = 1;
    }
  }
  return { index: index.subarray(0, count), classes: kept.subarray(0, count) };
}

/**
 * xdl_clean_mmatch: a many-match line is discarded when lines without a match surround it on both sides
 * and many-match lines are rare in that run.
 */
function amongDiscards(kind: Uint8Array, i: number, start: number, end: number): boolean {
  const s = i - start > SCAN_WINDOW ? i - SCAN_WINDOW : start;
  const e = end - i > SCAN_WINDOW ? i + SCAN_WINDOW : end;
  let none = 0;
  let many = 1;
  for (let r = 1; i - r >= s; r++) {
    const k = kind[i - r];
    if (k === 0) none++;
    else if (k === 2) many++;
    else break;
  }
  if (none === 0) return false;
  let noneAfter = 0;
  let manyAfter = 1;
  for (let r = 1; i + r <= e; r++) {
    const k = kind[i + r];
    if (k === 0) noneAfter++;
    else if (k === 2) manyAfter++;
    else break;
  }
  if (noneAfter === 0) return false;
  const runNone = none + noneAfter;
  const runMany = many + manyAfter;
  return runMany * KEEP_RUN < runMany + runNone;
}
