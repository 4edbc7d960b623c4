// A line diff's hunks as `git diff -U<n>` prints them (xdiff's xemit.c): changes closer than twice the
// context joined into one hunk, the hunk header with the nearest function line before it (git's default
// rule: a line starting with a letter, `_` or `$`, cut to 80 bytes), and "\ No newline at end of file".

import type { LineDiff } from './lineDiff.ts';
import type { LineRecords } from './lineRecords.ts';

export interface HunkLine {
  kind: ' ' | '-' | '+';
  /** The record: of the old file for ' ' and '-', of the new file for '+'. */
  record: number;
}

export interface Hunk {
  /** The numbers the header prints: 1-based, or the line before when the count is 0. */
  oldStart: number;
  oldCount: number;
  newStart: number;
  newCount: number;
  /** The function line after the second `@@`, as bytes (empty when there is none). */
  funcName: Uint8Array;
  lines: HunkLine[];
}

export interface HunkOptions {
  /** Context lines (`-U`), git's default 3. */
  context?: number;
  /** `--inter-hunk-context`: hunks this much closer than twice the context are joined too. */
  interHunkContext?: number;
  /** Function lines in hunk headers, as `git diff` prints them (on unless false). */
  funcNames?: boolean;
}

/** The bytes of a function line git keeps (FUNC_LINE_BUF, the size of xemit's buffer). */
const FUNC_NAME_MAX = 80;
const EMPTY: Uint8Array = new Uint8Array(0);

export function unifiedHunks(diff: LineDiff, opts: HunkOptions = {}): Hunk[] {
  const context = opts.context ?? 3;
  const maxCommon = 2 * context + (opts.interHunkContext ?? 0);
  const { changes } = diff;
  const n1 = diff.old.count;
  const n2 = diff.new.count;
  const hunks: Hunk[] = [];
  let funcScan = 0;
  let funcLine = -1;
  for (let first = 0; first < changes.length; ) {
    let last = first;
    while (
      last + 1 < changes.length &&
      changes[last + 1].oldStart - (changes[last].oldStart + changes[last].oldCount) <= maxCommon
    )
      last++;
    const x = changes[first];
    const xe = changes[last];
    const s1 = Math.max(x.oldStart - context, 0);
    const s2 = Math.max(x.newStart - context, 0);
    const after = Math.min(context, n1 - (xe.oldStart + xe.oldCount), n2 - (xe.newStart + xe.newCount));
    const e1 = xe.oldStart + xe.oldCount + after;
    const e2 = xe.newStart + xe.newCount + after;

    let funcName = EMPTY;
    if (opts.funcNames !== false) {
      // The nearest function line before the hunk; hunks come in order, so each line is looked at once.
      for (; funcScan < s1; funcScan++) if (isFuncLine(diff.old, funcScan)) funcLine = funcScan;
      if (funcLine >= 0) funcName = funcNameOf(diff.old, funcLine);
    }

    const lines: HunkLine[] = [];
    for (let r = s1; r < x.oldStart; r++) lines.push({ kind: ' ', record: r });
    let o = x.oldStart;
    for (let k = first; k <= last; k++) {
      const c = changes[k];
      for (; o < c.oldStart; o++) lines.push({ kind: ' ', record: o });
      for (let r = c.oldStart; r < c.oldStart + c.oldCount; r++) lines.push({ kind: '-', record: r });
      for (let r = c.newStart; r < c.newStart + c.newCount; r++) lines.push({ kind: '+', record: r });
      o = c.oldStart + c.oldCount;
    }
    for (let r = o; r < e1; r++) lines.push({ kind: ' ', record: r });

    const c1 = e1 - s1;
    const c2 = e2 - s2;
    hunks.push({
      oldStart: c1 ? s1 + 1 : s1,
      oldCount: c1,
      newStart: c2 ? s2 + 1 : s2,
      newCount: c2,
      funcName,
      lines,
    });
    first = last + 1;
  }
  return hunks;
}

/** xemit.c def_ff: a line whose first byte is an ASCII letter, `_` or `$`. */
function isFuncLine(file: LineRecords, r: number): boolean {
  const from = file.starts[r];
  if (from >= file.starts[r + 1]) return false;
  const c = file.bytes[from];
  return (c >= 0x41 && c <= 0x5a) || (c >= 0x61 && c <= 0x7a) || c === 0x5f || c === 0x24;
}

function funcNameOf(file: LineRecords, r: number): Uint8Array {
  const from = file.starts[r];
  let to = Math.min(file.starts[r + 1], from + FUNC_NAME_MAX);
  while (to > from && isGitSpace(file.bytes[to - 1])) to--;
  return validUtf8Prefix(file.bytes.subarray(from, to));
}

/**
 * diff.c cuts the hunk header before its first byte sequence that is not UTF-8 (sane_truncate_line, with
 * utf8.c's pick_one_utf8_char rules), which is where the 80-byte cut split a character, if anywhere.
 */
export function validUtf8Prefix(s: Uint8Array): Uint8Array {
  let i = 0;
  const n = s.length;
  while (i < n) {
    const c = s[i];
    const left = n - i;
    const cont = (k: number) => (s[i + k] & 0xc0) === 0x80;
    let len = 0;
    if (c < 0x80) len = 1;
    else if ((c & 0xe0) === 0xc0) {
      if (left >= 2 && cont(1) && (c & 0xfe) !== 0xc0) len = 2;
    } else if ((c & 0xf0) === 0xe0) {
      const c1 = s[i + 1];
      const overlong = c === 0xe0 && (c1 & 0xe0) === 0x80;
      const surrogate = c === 0xed && (c1 & 0xe0) === 0xa0;
      const nonCharacter = c === 0xef && c1 === 0xbf && (s[i + 2] & 0xfe) === 0xbe;
      if (left >= 3 && cont(1) && cont(2) && !overlong && !surrogate && !nonCharacter) len = 3;
    } else if ((c & 0xf8) === 0xf0) {
      const c1 = s[i + 1];
      const overlong = c === 0xf0 && (c1 & 0xf0) === 0x80;
      const tooLarge = (c === 0xf4 && c1 > 0x8f) || c > 0xf4;
      if (left >= 4 && cont(1) && cont(2) && cont(3) && !overlong && !tooLarge) len = 4;
    }
    if (len === 0) return s.subarray(0, i);
    i += len;
  }
  return s;
}

/** git's isspace (sane_ctype): space, TAB, LF and CR, not VT or FF. */
function isGitSpace(c: number): boolean {
  return c === 0x20 || c === 0x09 || c === 0x0a || c === 0x0d;
}

const UTF8 = new TextEncoder();
const NO_NEWLINE = UTF8.encode('\n\\ No newline at end of file\n');

/** The hunks as `git diff` prints them after the file header: `@@ … @@` lines and prefixed records. */
export function formatHunks(diff: LineDiff, hunks: Hunk[]): Uint8Array {
  const out = new ByteWriter();
  for (const h of hunks) {
    out.ascii(`@@ -${h.oldStart}${h.oldCount === 1 ? '' : `,${h.oldCount}`} +${h.newStart}`);
    out.ascii(`${h.newCount === 1 ? '' : `,${h.newCount}`} @@`);
    if (h.funcName.length) {
      out.ascii(' ');
      out.bytes(h.funcName);
    }
    out.ascii('\n');
    for (const line of h.lines) {
      const file = line.kind === '+' ? diff.new : diff.old;
      out.ascii(line.kind);
      const from = file.starts[line.record];
      const to = file.starts[line.record + 1];
      out.bytes(file.bytes.subarray(from, to));
      if (to === from || file.bytes[to - 1] !== 0x0a) out.bytes(NO_NEWLINE);
    }
  }
  return out.finish();
}

/** Appends bytes and ASCII text into one growing buffer. */
export class ByteWriter {
  private buf = new Uint8Array(1024);
  private length = 0;

  private room(n: number): void {
    if (this.length + n <= this.buf.length) return;
    let size = this.buf.length * 2;
    while (size < this.length + n) size *= 2;
    const next = new Uint8Array(size);
    next.set(this.buf.subarray(0, this.length));
    this.buf = next;
  }

  bytes(b: Uint8Array): void {
    this.room(b.length);
    this.buf.set(b, this.length);
    this.length += b.length;
  }

  /** Text of code points below 128 only (numbers, prefixes, fixed words). */
  ascii(text: string): void {
    this.room(text.length);
    for (let i = 0; i < text.length; i++) this.buf[this.length++] = text.charCodeAt(i);
  }

  text(text: string): void {
    this.bytes(UTF8.encode(text));
  }

  finish(): Uint8Array {
    return this.buf.slice(0, this.length);
  }
}
