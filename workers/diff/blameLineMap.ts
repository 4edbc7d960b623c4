// Which lines of a file blame passes to a parent's version: the lines its diff leaves unchanged. git's
// blame diffs with no context lines, so xdiff first drops the files' common tail in whole 1,024-byte blocks
// (trimCommonTail); that bounds how far a hunk can slide, and changes which of two equal lines is kept.

import { diffLines, trimCommonTail } from './lineDiff.ts';
import { countRecords } from './lineRecords.ts';

/** For each line of `target`, its 0-based line in `parent` when unchanged between them, else -1. */
export function blameLineMap(parent: Uint8Array, target: Uint8Array): Int32Array {
  const [p, t] = trimCommonTail(parent, target);
  const diff = diffLines(p, t);
  const total = countRecords(target);
  const map = new Int32Array(total).fill(-1);
  let from = 0;
  let offset = 0;
  for (const c of diff.changes) {
    for (let line = from; line < c.newStart; line++) map[line] = line + offset;
    from = c.newStart + c.newCount;
    offset = c.oldStart + c.oldCount - from;
  }
  // Past the last change, and through the trimmed tail, lines keep the last offset.
  for (let line = from; line < total; line++) map[line] = line + offset;
  return map;
}
