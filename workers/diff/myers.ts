// Myers' O(ND) difference search as git's xdiff runs it (xdiffi.c: xdl_split, xdl_recs_cmp): a middle
// snake found from both ends of a box, then the two halves, with xdiff's cut-offs that return a good
// enough split once the edit cost passes a limit. The cut-offs change which lines come out changed on
// large, very different inputs, so they are part of matching git's hunks. The halves go on an explicit
// stack: no input can make the call stack deep.

import { bogoSqrt } from './discardRecords.ts';

/** Edit cost past which the search looks for a good snake instead of the best split (XDL_HEUR_MIN_COST). */
const HEURISTIC_MIN_COST = 256;
/** The least cost limit, whatever the size (XDL_MAX_COST_MIN). */
const MAX_COST_MIN = 256;
/** A snake this long is "good" (XDL_SNAKE_CNT). */
const SNAKE_COUNT = 20;
/** A diagonal is interesting past this many times the cost (XDL_K_HEUR). */
const K_HEURISTIC = 4;
const LINE_MAX = 0x7fffffff;

/**
 * Marks changed records of two class sequences. `changedA[indexA[k] + 1]` is set for each record k of `a`
 * that is not on the common subsequence found (the change arrays are offset by one, see discardRecords).
 */
export function myersMarkChanges(
  a: Int32Array,
  indexA: Int32Array,
  changedA: Uint8Array,
  b: Int32Array,
  indexB: Int32Array,
  changedB: Uint8Array,
  minimal: boolean,
): void {
  const n1 = a.length;
  const n2 = b.length;
  const diagonals = n1 + n2 + 3;
  const kv = new Int32Array(2 * diagonals + 2);
  const search: Search = {
    a,
    b,
    kv,
    fwd: n2 + 1,
    bwd: diagonals + n2 + 1,
    maxCost: Math.max(bogoSqrt(diagonals), MAX_COST_MIN),
    i1: 0,
    i2: 0,
    minLow: false,
    minHigh: false,
  };
  // Boxes still to compare: off1, lim1, off2, lim2, need-minimal.
  const stack: number[] = [0, n1, 0, n2, minimal ? 1 : 0];
  while (stack.length) {
    const needMin = stack.pop() === 1;
    let lim2 = stack.pop()!;
    let off2 = stack.pop()!;
    let lim1 = stack.pop()!;
    let off1 = stack.pop()!;
    while (off1 < lim1 && off2 < lim2 && a[off1] === b[off2]) {
      off1++;
      off2++;
    }
    while (off1 < lim1 && off2 < lim2 && a[lim1 - 1] === b[lim2 - 1]) {
      lim1--;
      lim2--;
    }
    if (off1 === lim1) {
      for (let k = off2; k < lim2; k++) changedB[indexB[k] + 1] = 1;
    } else if (off2 === lim2) {
      for (let k = off1; k < lim1; k++) changedA[indexA[k] + 1] = 1;
    } else {
      split(search, off1, lim1, off2, lim2, needMin);
      const { i1, i2, minLow, minHigh } = search;
      // The second half goes first so the first half is compared first, as xdiff's recursion does.
      stack.push(i1, lim1, i2, lim2, minHigh ? 1 : 0);
      stack.push(off1, i1, off2, i2, minLow ? 1 : 0);
    }
  }
}

interface Search {
  a: Int32Array;
  b: Int32Array;
  /** Forward and backward furthest-reaching x per diagonal, at offsets `fwd` and `bwd` of one array. */
  kv: Int32Array;
  fwd: number;
  bwd: number;
  maxCost: number;
  // The split found.
  i1: number;
  i2: number;
  minLow: boolean;
  minHigh: boolean;
}

function split(s: Search, off1: number, lim1: number, off2: number, lim2: number, needMin: boolean): void {
  const { a, b, kv, fwd, bwd } = s;
  const dmin = off1 - lim2;
  const dmax = lim1 - off2;
  const fmid = off1 - off2;
  const bmid = lim1 - lim2;
  const odd = ((fmid - bmid) & 1) !== 0;
  let fmin = fmid;
  let fmax = fmid;
  let bmin = bmid;
  let bmax = bmid;
  kv[fwd + fmid] = off1;
  kv[bwd + bmid] = lim1;

  for (let ec = 1; ; ec++) {
    let gotSnake = false;
    // Widen the forward diagonals by one each way, or narrow where the box ends.
    if (fmin > dmin) kv[fwd + --fmin - 1] = -1;
    else ++fmin;
    if (fmax < dmax) kv[fwd + ++fmax + 1] = -1;
    else --fmax;
    for (let d = fmax; d >= fmin; d -= 2) {
      let i1 = kv[fwd + d - 1] >= kv[fwd + d + 1] ? kv[fwd + d - 1] + 1 : kv[fwd + d + 1];
      const prev1 = i1;
      let i2 = i1 - d;
      while (i1 < lim1 && i2 < lim2 && a[i1] === b[i2]) {
        i1++;
        i2++;
      }
      if (i1 - prev1 > SNAKE_COUNT) gotSnake = true;
      kv[fwd + d] = i1;
      if (odd && bmin <= d && d <= bmax && kv[bwd + d] <= i1) {
        setSplit(s, i1, i2, true, true);
        return;
      }
    }

    if (bmin > dmin) kv[bwd + --bmin - 1] = LINE_MAX;
    else ++bmin;
    if (bmax < dmax) kv[bwd + ++bmax + 1] = LINE_MAX;
    else --bmax;
    for (let d = bmax; d >= bmin; d -= 2) {
      let i1 = kv[bwd + d - 1] < kv[bwd + d + 1] ? kv[bwd + d - 1] : kv[bwd + d + 1] - 1;
      const prev1 = i1;
      let i2 = i1 - d;
      while (i1 > off1 && i2 > off2 && a[i1 - 1] === b[i2 - 1]) {
        i1--;
        i2--;
      }
      if (prev1 - i1 > SNAKE_COUNT) gotSnake = true;
      kv[bwd + d] = i1;
      if (!odd && fmin <= d && d <= fmax && i1 <= kv[fwd + d]) {
        setSplit(s, i1, i2, true, true);
        return;
      }
    }

    if (needMin) continue;

    // Past the cost trigger with a good snake seen: take a diagonal that got far from its corner.
    if (gotSnake && ec > HEURISTIC_MIN_COST) {
      let best = 0;
      for (let d = fmax; d >= fmin; d -= 2) {
        const dd = d > fmid ? d - fmid : fmid - d;
        const i1 = kv[fwd + d];
        const i2 = i1 - d;
        const v = i1 - off1 + (i2 - off2) - dd;
        if (
          v > K_HEURISTIC * ec &&
          v > best &&
          off1 + SNAKE_COUNT <= i1 &&
          i1 < lim1 &&
          off2 + SNAKE_COUNT <= i2 &&
          i2 < lim2
        ) {
          for (let k = 1; a[i1 - k] === b[i2 - k]; k++) {
            if (k === SNAKE_COUNT) {
              best = v;
              s.i1 = i1;
              s.i2 = i2;
              break;
            }
          }
        }
      }
      if (best > 0) {
        s.minLow = true;
        s.minHigh = false;
        return;
      }
      for (let d = bmax; d >= bmin; d -= 2) {
        const dd = d > bmid ? d - bmid : bmid - d;
        const i1 = kv[bwd + d];
        const i2 = i1 - d;
        const v = lim1 - i1 + (lim2 - i2) - dd;
        if (
          v > K_HEURISTIC * ec &&
          v > best &&
          off1 < i1 &&
          i1 <= lim1 - SNAKE_COUNT &&
          off2 < i2 &&
          i2 <= lim2 - SNAKE_COUNT
        ) {
          for (let k = 0; a[i1 + k] === b[i2 + k]; k++) {
            if (k === SNAKE_COUNT - 1) {
              best = v;
              s.i1 = i1;
              s.i2 = i2;
              break;
            }
          }
        }
      }
      if (best > 0) {
        s.minLow = false;
        s.minHigh = true;
        return;
      }
    }

    // Too expensive: split at the furthest-reaching point of either direction.
    if (ec >= s.maxCost) {
      let fbest = -1;
      let fbest1 = -1;
      for (let d = fmax; d >= fmin; d -= 2) {
        let i1 = Math.min(kv[fwd + d], lim1);
        let i2 = i1 - d;
        if (lim2 < i2) {
          i1 = lim2 + d;
          i2 = lim2;
        }
        if (fbest < i1 + i2) {
          fbest = i1 + i2;
          fbest1 = i1;
        }
      }
      let bbest = LINE_MAX;
      let bbest1 = LINE_MAX;
      for (let d = bmax; d >= bmin; d -= 2) {
        let i1 = Math.max(off1, kv[bwd + d]);
        let i2 = i1 - d;
        if (i2 < off2) {
          i1 = off2 + d;
          i2 = off2;
        }
        if (i1 + i2 < bbest) {
          bbest = i1 + i2;
          bbest1 = i1;
        }
      }
      if (lim1 + lim2 - bbest < fbest - (off1 + off2)) setSplit(s, fbest1, fbest - fbest1, true, false);
      else setSplit(s, bbest1, bbest - bbest1, false, true);
      return;
    }
  }
}

function setSplit(s: Search, i1: number, i2: number, minLow: boolean, minHigh: boolean): void {
  s.i1 = i1;
  s.i2 = i2;
  s.minLow = minLow;
  s.minHigh = minHigh;
}
