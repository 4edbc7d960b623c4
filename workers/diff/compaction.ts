// xdiff's hunk sliding (xdiffi.c: xdl_change_compact) and the indent heuristic git turns on by default
// since 2.14. A group of added (or removed) lines that could sit one line higher or lower with the same
// meaning is slid as far down as it goes, merging with groups it meets; then it is moved back up to line
// up with a change in the other file if it can, else to the position the indent heuristic scores best.
// This is what decides whether an inserted `/** … */` block is shown before or after the `/**` it starts
// like, so blame and the diff view follow it to the letter.

import type { LineRecords } from './lineRecords.ts';

/** Lines indented more than this count as this much (MAX_INDENT). */
const MAX_INDENT = 200;
/** Blank lines counted at most around a split (MAX_BLANKS). */
const MAX_BLANKS = 20;
/** How far a group is slid at most while scoring (INDENT_HEURISTIC_MAX_SLIDING). */
const MAX_SLIDING = 100;

// The heuristic's weights, chosen by git's authors on a corpus of human-rated diffs (diff-slider-tools).
const START_OF_FILE_PENALTY = 1;
const END_OF_FILE_PENALTY = 21;
const TOTAL_BLANK_WEIGHT = -30;
const POST_BLANK_WEIGHT = 6;
const RELATIVE_INDENT_PENALTY = -4;
const RELATIVE_INDENT_WITH_BLANK_PENALTY = 10;
const RELATIVE_OUTDENT_PENALTY = 24;
const RELATIVE_OUTDENT_WITH_BLANK_PENALTY = 17;
const RELATIVE_DEDENT_PENALTY = 23;
const RELATIVE_DEDENT_WITH_BLANK_PENALTY = 17;
const INDENT_WEIGHT = 60;

interface Group {
  /** First changed record, or the unchanged record an empty group sits above. */
  start: number;
  /** First unchanged record after the group. */
  end: number;
}

/** A file's side of the compaction: change marks offset by one (index 0 is record -1, n + 1 is record n). */
interface Side {
  classes: Int32Array;
  changed: Uint8Array;
  count: number;
}

function groupInit(s: Side, g: Group): void {
  g.start = 0;
  g.end = 0;
  while (s.changed[g.end + 1]) g.end++;
}

function groupNext(s: Side, g: Group): boolean {
  if (g.end === s.count) return false;
  g.start = g.end + 1;
  g.end = g.start;
  while (s.changed[g.end + 1]) g.end++;
  return true;
}

function groupPrevious(s: Side, g: Group): boolean {
  if (g.start === 0) return false;
  g.end = g.start - 1;
  g.start = g.end;
  while (s.changed[g.start]) g.start--;
  return true;
}

function slideDown(s: Side, g: Group): boolean {
  if (g.end < s.count && s.classes[g.start] === s.classes[g.end]) {
    s.changed[g.start + 1] = 0;
    g.start++;
    s.changed[g.end + 1] = 1;
    g.end++;
    while (s.changed[g.end + 1]) g.end++;
    return true;
  }
  return false;
}

function slideUp(s: Side, g: Group): boolean {
  if (g.start > 0 && s.classes[g.start - 1] === s.classes[g.end - 1]) {
    g.start--;
    s.changed[g.start + 1] = 1;
    g.end--;
    s.changed[g.end + 1] = 0;
    while (s.changed[g.start]) g.start--;
    return true;
  }
  return false;
}

function broken(what: string): never {
  throw new Error(`line diff: group sync broken ${what}`);
}

/**
 * Slides the change groups of one file (`changed`, offset by one) against the other's (`otherChanged`).
 * `records` turns the indent heuristic on; xdiff runs this once per file, the old one first.
 */
export function compactChanges(
  classes: Int32Array,
  changed: Uint8Array,
  otherClasses: Int32Array,
  otherChanged: Uint8Array,
  records: LineRecords | null,
): void {
  const s: Side = { classes, changed, count: classes.length };
  const o: Side = { classes: otherClasses, changed: otherChanged, count: otherClasses.length };
  const indents = records ? new IndentReader(records) : null;
  const g: Group = { start: 0, end: 0 };
  const go: Group = { start: 0, end: 0 };
  groupInit(s, g);
  groupInit(o, go);

  for (;;) {
    if (g.end !== g.start) {
      let groupSize: number;
      let earliestEnd: number;
      let endMatchingOther: number;
      // Slide up as far as possible, then down as far as possible, merging with groups met, until the
      // group stops growing.
      do {
        groupSize = g.end - g.start;
        endMatchingOther = -1;
        while (slideUp(s, g)) if (!groupPrevious(o, go)) broken('sliding up');
        earliestEnd = g.end;
        if (go.end > go.start) endMatchingOther = g.end;
        for (;;) {
          if (!slideDown(s, g)) break;
          if (!groupNext(o, go)) broken('sliding down');
          if (go.end > go.start) endMatchingOther = g.end;
        }
      } while (groupSize !== g.end - g.start);

      if (g.end === earliestEnd) {
        // It cannot move.
      } else if (endMatchingOther !== -1) {
        // Back up to the last place where it lines up with a change in the other file.
        while (go.end === go.start) {
          if (!slideUp(s, g)) broken('matching');
          if (!groupPrevious(o, go)) broken('sliding to match');
        }
      } else if (indents) {
        let shift = Math.max(earliestEnd, g.end - groupSize - 1, g.end - MAX_SLIDING);
        let bestShift = -1;
        let bestIndent = 0;
        let bestPenalty = 0;
        for (; shift <= g.end; shift++) {
          const score: Score = { effectiveIndent: 0, penalty: 0 };
          scoreSplit(indents, shift, score);
          scoreSplit(indents, shift - groupSize, score);
          if (bestShift === -1 || compareScores(score, bestIndent, bestPenalty) <= 0) {
            bestIndent = score.effectiveIndent;
            bestPenalty = score.penalty;
            bestShift = shift;
          }
        }
        while (g.end > bestShift) {
          if (!slideUp(s, g)) broken('to the best shift');
          if (!groupPrevious(o, go)) broken('sliding to the best shift');
        }
      }
    }
    if (!groupNext(s, g)) break;
    if (!groupNext(o, go)) broken('moving to the next group');
  }
  if (groupNext(o, go)) broken('at the end of the file');
}

/** Indentation per record, read once: TAB to the next multiple of 8, -1 for a blank line (get_indent). */
class IndentReader {
  private readonly cache: Int16Array;
  readonly count: number;

  constructor(private readonly records: LineRecords) {
    this.count = records.count;
    this.cache = new Int16Array(records.count).fill(-2);
  }

  indent(r: number): number {
    const known = this.cache[r];
    if (known !== -2) return known;
    const { bytes, starts } = this.records;
    let ret = -1;
    let width = 0;
    for (let i = starts[r]; i < starts[r + 1]; i++) {
      const c = bytes[i];
      // git's isspace: space, TAB, LF and CR only.
      if (c !== 0x20 && c !== 0x09 && c !== 0x0a && c !== 0x0d) {
        ret = width;
        break;
      }
      if (c === 0x20) width += 1;
      else if (c === 0x09) width += 8 - (width % 8);
      if (width >= MAX_INDENT) {
        ret = MAX_INDENT;
        break;
      }
    }
    this.cache[r] = ret;
    return ret;
  }
}

interface Score {
  effectiveIndent: number;
  penalty: number;
}

/** measure_split then score_add_split: the badness of splitting the file just above record `split`. */
function scoreSplit(lines: IndentReader, split: number, s: Score): void {
  const endOfFile = split >= lines.count;
  const indent = endOfFile ? -1 : lines.indent(split);
  let preBlank = 0;
  let preIndent = -1;
  for (let i = split - 1; i >= 0; i--) {
    preIndent = lines.indent(i);
    if (preIndent !== -1) break;
    preBlank++;
    if (preBlank === MAX_BLANKS) {
      preIndent = 0;
      break;
    }
  }
  let postBlank = 0;
  let postIndent = -1;
  for (let i = split + 1; i < lines.count; i++) {
    postIndent = lines.indent(i);
    if (postIndent !== -1) break;
    postBlank++;
    if (postBlank === MAX_BLANKS) {
      postIndent = 0;
      break;
    }
  }

  if (preIndent === -1 && preBlank === 0) s.penalty += START_OF_FILE_PENALTY;
  if (endOfFile) s.penalty += END_OF_FILE_PENALTY;
  // Blank lines after the split, the line just after it included.
  const after = indent === -1 ? 1 + postBlank : 0;
  const totalBlank = preBlank + after;
  s.penalty += TOTAL_BLANK_WEIGHT * totalBlank;
  s.penalty += POST_BLANK_WEIGHT * after;
  const effective = indent !== -1 ? indent : postIndent;
  const anyBlanks = totalBlank !== 0;
  s.effectiveIndent += effective;
  if (effective === -1 || preIndent === -1) {
    // Nothing more to weigh.
  } else if (effective > preIndent) {
    s.penalty += anyBlanks ? RELATIVE_INDENT_WITH_BLANK_PENALTY : RELATIVE_INDENT_PENALTY;
  } else if (effective < preIndent) {
    // Less indented than the line before: a block's end, or the start of a new block if what follows is
    // indented more.
    if (postIndent !== -1 && postIndent > effective) {
      s.penalty += anyBlanks ? RELATIVE_OUTDENT_WITH_BLANK_PENALTY : RELATIVE_OUTDENT_PENALTY;
    } else {
      s.penalty += anyBlanks ? RELATIVE_DEDENT_WITH_BLANK_PENALTY : RELATIVE_DEDENT_PENALTY;
    }
  }
}

function compareScores(s: Score, bestIndent: number, bestPenalty: number): number {
  const indents = (s.effectiveIndent > bestIndent ? 1 : 0) - (s.effectiveIndent < bestIndent ? 1 : 0);
  return INDENT_WEIGHT * indents + (s.penalty - bestPenalty);
}
