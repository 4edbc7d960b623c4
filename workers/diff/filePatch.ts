// One file's part of `git diff` output (diff.c: builtin_diff, fill_metainfo): the `diff --git` header, mode,
// rename and index lines, then either "Binary files … differ" or the `---`/`+++` labels and the hunks.

import { isBinary } from './binaryContent.ts';
import { diffLines, type LineDiffOptions } from './lineDiff.ts';
import { ByteWriter, formatHunks, type HunkOptions, unifiedHunks } from './unifiedDiff.ts';

export interface FileSide {
  path: string;
  /** Octal, as in trees: `100644`, `100755`, `120000`, `160000`. */
  mode: string;
  oid: string;
  /** The blob (a symlink's target, a submodule's "Subproject commit <id>\n"). */
  content: Uint8Array;
}

export interface FilePatchInput {
  /** Null for an added file. */
  old: FileSide | null;
  /** Null for a deleted file. */
  new: FileSide | null;
  /** A rename or copy found by similarity: its score in percent, as `similarity index` prints it. */
  similarity?: number;
  copy?: boolean;
}

export interface FilePatchOptions extends HunkOptions, LineDiffOptions {
  /** Hex digits of the ids on the index line (`--full-index`: 40); default 7. */
  abbrev?: number;
  /** `core.quotePath`: quote bytes above 0x7f in paths (git's default, true). */
  quotePath?: boolean;
}

const NULL_OID = '0'.repeat(40);

/**
 * The patch text of one changed file. A change between kinds of entry (file, symlink, submodule) comes out
 * as a deletion and an addition, as git prints it.
 */
export function formatFilePatch(input: FilePatchInput, opts: FilePatchOptions = {}): Uint8Array {
  const { old, new: now } = input;
  if (old && now && kindOf(old.mode) !== kindOf(now.mode)) {
    const out = new ByteWriter();
    out.bytes(formatFilePatch({ old, new: null }, opts));
    out.bytes(formatFilePatch({ old: null, new: now }, opts));
    return out.finish();
  }
  const quote = opts.quotePath ?? true;
  const abbrev = opts.abbrev ?? 7;
  const aName = quotedPath('a/', (old ?? now)!.path, quote);
  const bName = quotedPath('b/', (now ?? old)!.path, quote);
  const aLabel = old ? aName : '/dev/null';
  const bLabel = now ? bName : '/dev/null';

  const header = new ByteWriter();
  let mustShowHeader = false;
  header.text(`diff --git ${aName} ${bName}\n`);
  if (!old) {
    header.text(`new file mode ${now!.mode}\n`);
    mustShowHeader = true;
  } else if (!now) {
    header.text(`deleted file mode ${old.mode}\n`);
    mustShowHeader = true;
  } else if (old.mode !== now.mode) {
    header.text(`old mode ${old.mode}\nnew mode ${now.mode}\n`);
    mustShowHeader = true;
  }
  if (old && now && input.similarity !== undefined) {
    const verb = input.copy ? 'copy' : 'rename';
    header.text(`similarity index ${input.similarity}%\n`);
    header.text(
      `${verb} from ${quotedPath('', old.path, quote)}\n${verb} to ${quotedPath('', now.path, quote)}\n`,
    );
    mustShowHeader = true;
  }
  const oldOid = old?.oid ?? NULL_OID;
  const newOid = now?.oid ?? NULL_OID;
  if (oldOid !== newOid) {
    header.text(`index ${oldOid.slice(0, abbrev)}..${newOid.slice(0, abbrev)}`);
    header.text(old && now && old.mode === now.mode ? ` ${old.mode}\n` : '\n');
  }

  const empty = new Uint8Array(0);
  const oldBytes = old?.content ?? empty;
  const newBytes = now?.content ?? empty;
  const out = new ByteWriter();
  if (isBinary(oldBytes) || isBinary(newBytes)) {
    if (oldOid === newOid) {
      if (mustShowHeader) out.bytes(header.finish());
      return out.finish();
    }
    out.bytes(header.finish());
    out.text(`Binary files ${aLabel} and ${bLabel} differ\n`);
    return out.finish();
  }
  const diff = diffLines(oldBytes, newBytes, opts);
  const hunks = unifiedHunks(diff, opts);
  if (mustShowHeader || hunks.length) out.bytes(header.finish());
  if (hunks.length) {
    out.text(`--- ${aLabel}${aLabel.includes(' ') ? '\t' : ''}\n`);
    out.text(`+++ ${bLabel}${bLabel.includes(' ') ? '\t' : ''}\n`);
    out.bytes(formatHunks(diff, hunks));
  }
  return out.finish();
}

/** Regular files (644 and 755) are one kind; symlinks and submodules are others (S_IFMT). */
function kindOf(mode: string): string {
  return mode === '100755' ? '100644' : mode;
}

// quote.c cq_lookup: the C escape letter, 1 for an octal escape, 0 for no quoting.
const C_ESCAPES: Readonly<Record<number, string>> = {
  7: 'a',
  8: 'b',
  9: 't',
  10: 'n',
  11: 'v',
  12: 'f',
  13: 'r',
  34: '"',
  92: '\\',
};

/**
 * `prefix + path`, in double quotes with C escapes when the path holds a control character, `"`, `\`, or
 * (with `quoteNonAscii`, core.quotePath) a byte above 0x7f (quote.c quote_two).
 */
export function quotedPath(prefix: string, path: string, quoteNonAscii: boolean): string {
  const bytes = new TextEncoder().encode(path);
  const needs = (c: number) =>
    c < 0x20 || c === 0x22 || c === 0x5c || c === 0x7f || (c >= 0x80 && quoteNonAscii);
  if (!bytes.some(needs)) return prefix + path;
  let out = `"${prefix}`;
  let plain: number[] = [];
  const flush = () => {
    out += new TextDecoder().decode(new Uint8Array(plain));
    plain = [];
  };
  for (const c of bytes) {
    if (!needs(c)) {
      plain.push(c);
      continue;
    }
    flush();
    const letter = C_ESCAPES[c];
    out += letter ? `\\${letter}` : `\\${c.toString(8).padStart(3, '0')}`;
  }
  flush();
  return `${out}"`;
}
