// Tree objects as `git fsck` checks them, before anything is written from them. A server controls every
// byte of a tree, and a checkout turns names into paths and symlink blobs into links: an entry named ""
// or ".git", or a link to "/.git", would write into the git directory (CVE-2014-9390 and its kin). Pure:
// bytes in, entries and the first problem out. The checks and their codes follow git's fsck.c
// (FSCK_MSG_*), path.c (is_ntfs_dotgit, is_ntfs_dotgitmodules) and utf8.c (is_hfs_dotgit); the codes
// git has no name for are marked "ours". Every check is linear in its input and bounded by TreeLimits
// (packLimits.ts): a server chooses the input, and the worker that checks it is the tab's only git worker.

import { DEFAULT_TREE_LIMITS, type TreeLimits } from './packLimits.ts';

import { show } from './showName.ts';

export { show };

/** Why a tree was refused; a reader can hold this list against git's fsck-msgids. */
export type TreeCheck =
  /** The bytes are not a tree: a mode that is not octal digits, a missing NUL, a truncated object id. */
  | 'BAD_TREE'
  | 'EMPTY_NAME'
  /** A name holding "/": git's FULL_PATHNAME. */
  | 'FULL_PATHNAME'
  /** Ours: a name holding "\", a folder separator on Windows (git checks it for ".git" only). */
  | 'HAS_BACKSLASH'
  | 'HAS_DOT'
  | 'HAS_DOTDOT'
  /** Ours: a name of dots and spaces only ("...", ". "), which Windows reads as "." or "..". */
  | 'NTFS_DOT_ALIAS'
  /** ".git" in any case, with HFS+ ignorable code points, or an NTFS alias (".git.", "git~1", ".git::$DATA"). */
  | 'HAS_DOTGIT'
  | 'DUPLICATE_ENTRIES'
  | 'TREE_NOT_SORTED'
  /** A mode other than 40000, 100644, 100755, 120000, 160000 (git fsck --strict's rule; 100664 included). */
  | 'BAD_FILEMODE'
  | 'GITMODULES_SYMLINK'
  /** Ours: a symlink whose target starts at the root of a file system ("/x", "\\x", "C:x"). */
  | 'SYMLINK_ABSOLUTE'
  /** Ours: a symlink that, resolved from its folder (through the tree's other links), climbs above the root. */
  | 'SYMLINK_LEAVES_WORKTREE'
  | 'SYMLINK_POINTS_TO_GIT_DIR'
  /** Ours: a symlink that does not resolve within 40 links (SYMLOOP_MAX); lightning-fs would recurse forever. */
  | 'SYMLINK_LOOP'
  /** Ours: a symlink whose target is longer than PATH_MAX allows (maxSymlinkTargetBytes, 4,095 bytes). */
  | 'SYMLINK_TOO_LONG'
  /** Ours: a tree of more entries than maxTreeEntries. */
  | 'TREE_TOO_WIDE'
  /** A tree more folders below the root than maxTreeDepth (git's core.maxTreeDepth, 4,096). */
  | 'TREE_TOO_DEEP';

export const MODE_TREE = '40000';
/** How old git and some tools wrote a tree's mode; git fsck only warns (ZERO_PADDED_FILEMODE) and so do we. */
export const MODE_TREE_PADDED = '040000';
export const MODE_FILE = '100644';
export const MODE_EXECUTABLE = '100755';
export const MODE_SYMLINK = '120000';
export const MODE_GITLINK = '160000';

const VALID_MODES: ReadonlySet<string> = new Set([
  MODE_TREE,
  MODE_TREE_PADDED,
  MODE_FILE,
  MODE_EXECUTABLE,
  MODE_SYMLINK,
  MODE_GITLINK,
]);

export interface ParsedTreeEntry {
  /** As stored, except that a tree is always "040000" (isomorphic-git's spelling, which the ops layer uses). */
  mode: string;
  /** The name's bytes decoded as UTF-8 (invalid sequences become U+FFFD, as isomorphic-git decodes them). */
  name: string;
  oid: string;
}

export interface TreeProblem {
  check: TreeCheck;
  /** The offending entry's name, or "" for a problem of the whole tree (BAD_TREE). */
  name: string;
  /** A sentence saying what was found, for people. */
  detail: string;
}

export interface CheckedTree {
  entries: ParsedTreeEntry[];
  /** The first problem in entry order, or null: a tree with a problem must not be written. */
  problem: TreeProblem | null;
}

const SPACE = 0x20;
const NUL = 0;
const decoder = new TextDecoder('utf-8');
// windows-1252 under this name (WHATWG Encoding), which reads bytes below 0x80 as ASCII: only those are used.
const latin1 = new TextDecoder('latin1');

/**
 * Parses a tree object's content (no "tree <size>\0" header) and checks it as git fsck does. `verify`
 * false parses only (a tree that passed before): a malformed tree is still BAD_TREE, and one of more than
 * `maxEntries` entries TREE_TOO_WIDE, found at entry `maxEntries + 1` with nothing parsed past it.
 */
export function checkTree(
  bytes: Uint8Array,
  verify = true,
  maxEntries = DEFAULT_TREE_LIMITS.maxTreeEntries,
): CheckedTree {
  const entries: ParsedTreeEntry[] = [];
  // Ids are written as hex into one buffer and decoded once at the end: twenty string joins an entry cost
  // more than the rest of the parse. ASCII names and modes are slices of the tree read as Latin-1.
  const text = latin1.decode(bytes);
  const ids: number[] = [];
  let previous: { mode: string; name: Uint8Array } | null = null;
  const seen = new Set<string>();
  let problem: TreeProblem | null = null;
  const report = (check: TreeCheck, name: string, detail: string) => {
    problem ??= { check, name, detail };
  };
  const done = (): CheckedTree => {
    const hexText = hexOf(bytes, ids);
    for (let i = 0; i < entries.length; i++) entries[i].oid = hexText.slice(i * 40, i * 40 + 40);
    return { entries, problem };
  };
  let at = 0;
  while (at < bytes.length) {
    if (entries.length === maxEntries) {
      report(
        'TREE_TOO_WIDE',
        '',
        `The tree holds more than ${maxEntries.toLocaleString('en')} entries (maxTreeEntries).`,
      );
      return done();
    }
    const space = bytes.indexOf(SPACE, at);
    const nul = bytes.indexOf(NUL, space + 1);
    if (space === -1 || nul === -1 || nul + 21 > bytes.length) {
      report('BAD_TREE', '', `The tree ends inside an entry (at byte ${at} of ${bytes.length}).`);
      return done();
    }
    const mode = octal(bytes, text, at, space);
    if (mode === null) {
      const shown = printable(text.slice(at, Math.min(space, at + 32)));
      report('BAD_TREE', '', `An entry's mode "${shown}" is not octal digits.`);
      return done();
    }
    const name = isAscii(bytes, space + 1, nul)
      ? text.slice(space + 1, nul)
      : decoder.decode(bytes.subarray(space + 1, nul));
    ids.push(nul + 1);
    at = nul + 21;
    entries.push({ mode: isTreeMode(mode) ? MODE_TREE_PADDED : mode, name, oid: '' });
    if (!verify) continue;

    const nameBytes = bytes.subarray(space + 1, nul);
    if (!VALID_MODES.has(mode))
      report('BAD_FILEMODE', name, `${show(name)} has mode ${mode}, which git does not write.`);
    const nameProblem = checkName(name, nameBytes);
    if (nameProblem) report(nameProblem[0], name, nameProblem[1]);
    if (mode === MODE_SYMLINK && mayAliasGit(nameBytes) && isDotGitmodules(name, nameBytes)) {
      report(
        'GITMODULES_SYMLINK',
        name,
        `${show(name)} is a symbolic link; git refuses a linked .gitmodules.`,
      );
    }
    // Raw duplicates, and names that only decode alike: both would be one path on disk.
    if (seen.has(name)) report('DUPLICATE_ENTRIES', name, `${show(name)} appears twice in the tree.`);
    seen.add(name);
    if (previous && !inTreeOrder(previous.mode, previous.name, mode, nameBytes)) {
      report('TREE_NOT_SORTED', name, `${show(name)} is out of git's tree order.`);
    }
    previous = { mode, name: nameBytes };
  }
  return done();
}

export function isTreeMode(mode: string): boolean {
  return mode === MODE_TREE || mode === MODE_TREE_PADDED;
}

/** git's tree order (fsck.c verify_ordered): bytes compared, a tree's name as if it ended in "/". */
function inTreeOrder(modeA: string, a: Uint8Array, modeB: string, b: Uint8Array): boolean {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) if (a[i] !== b[i]) return a[i] < b[i];
  const endA = a.length > n ? a[n] : isTreeMode(modeA) ? 0x2f : 0;
  const endB = b.length > n ? b[n] : isTreeMode(modeB) ? 0x2f : 0;
  return endA < endB;
}

function checkName(name: string, bytes: Uint8Array): [TreeCheck, string] | null {
  if (bytes.length === 0) return ['EMPTY_NAME', 'An entry has an empty name.'];
  if (bytes.includes(0x2f)) return ['FULL_PATHNAME', `${show(name)} holds "/".`];
  if (bytes.includes(0x5c))
    return ['HAS_BACKSLASH', `${show(name)} holds "\\", a folder separator on Windows.`];
  if (!mayAliasGit(bytes)) return null;
  if (name === '.') return ['HAS_DOT', 'An entry is named ".".'];
  if (name === '..') return ['HAS_DOTDOT', 'An entry is named "..".'];
  if (/^[. ]+$/.test(name)) return ['NTFS_DOT_ALIAS', `${show(name)} is read as "." or ".." by Windows.`];
  if (isDotGit(name)) return ['HAS_DOTGIT', `${show(name)} names the git directory on some file system.`];
  return null;
}

/**
 * Whether a name can be any of the dot names below: every one starts with ".", " ", "g", "G" or "~"
 * (".git", "git~1", ". ", git's 8.3 fallback "~1234567"), or with a non-ASCII byte (an HFS+ ignorable
 * code point in front). Most names do not,
 * and skip the rest.
 */
function mayAliasGit(bytes: Uint8Array): boolean {
  const c = bytes[0];
  return c === 0x2e || c === 0x20 || c === 0x67 || c === 0x47 || c === 0x7e || c >= 0x80;
}

// utf8.c next_hfs_char: code points HFS+ drops from names, so ".g\u200cit" is ".git" there.
const HFS_IGNORABLE = /[\u200c-\u200f\u202a-\u202e\u206a-\u206f\ufeff]/g;

/**
 * git's is_hfs_dotgit and is_ntfs_dotgit, and isomorphic-git's own test (which also refuses "git~2" to
 * "git~9" and ".g\u200cit."): the union, so no name isomorphic-git would throw on gets past.
 */
export function isDotGit(name: string): boolean {
  const cut = name.replace(HFS_IGNORABLE, '').split(':')[0].toLowerCase();
  const trimmed = trimDotsAndSpaces(cut);
  return trimmed === '.git' || /^\.?git~[1-9]$/.test(trimmed);
}

/** git's is_hfs_dotgitmodules or is_ntfs_dotgitmodules (with its 8.3 short names "gitmod~1", "gi7eba~1"). */
export function isDotGitmodules(name: string, bytes: Uint8Array): boolean {
  if (name.replace(HFS_IGNORABLE, '').toLowerCase() === '.gitmodules') return true;
  return isNtfsDotGeneric(bytes, 'gitmodules', 'gi7eba');
}

// path.c is_ntfs_dot_generic, over bytes: ".<name>" or a short name, then only dots and spaces up to the
// end or an alternate data stream (":").
function isNtfsDotGeneric(name: Uint8Array, dotless: string, shortPrefix: string): boolean {
  const at = (i: number) => (i < name.length ? name[i] : 0);
  const lower = (c: number) => (c >= 0x41 && c <= 0x5a ? c + 0x20 : c);
  const onlyDotsAndSpaces = (from: number) => {
    for (let i = from; ; i++) {
      const c = at(i);
      if (c === 0 || c === 0x3a) return true;
      if (c !== 0x20 && c !== 0x2e) return false;
    }
  };
  if (at(0) === 0x2e && [...dotless].every((ch, i) => lower(at(i + 1)) === ch.charCodeAt(0))) {
    return onlyDotsAndSpaces(dotless.length + 1);
  }
  const six = dotless.slice(0, 6);
  if ([...six].every((ch, i) => lower(at(i)) === ch.charCodeAt(0)) && at(6) === 0x7e) {
    if (at(7) >= 0x31 && at(7) <= 0x34) return onlyDotsAndSpaces(8);
  }
  let sawTilde = false;
  for (let i = 0; i < 8; i++) {
    const c = at(i);
    if (c === 0) return false;
    if (sawTilde) {
      if (c < 0x30 || c > 0x39) return false;
    } else if (c === 0x7e) {
      i++;
      if (at(i) < 0x31 || at(i) > 0x39) return false;
      sawTilde = true;
    } else if (i >= 6 || c & 0x80 || lower(c) !== shortPrefix.charCodeAt(i)) {
      return false;
    }
  }
  return onlyDotsAndSpaces(8);
}

function trimDotsAndSpaces(s: string): string {
  let end = s.length;
  while (end > 0 && (s[end - 1] === '.' || s[end - 1] === ' ')) end--;
  return s.slice(0, end);
}

/** A POSIX system's limit on links followed in one lookup (SYMLOOP_MAX); Linux uses 40. */
const MAX_LINK_HOPS = 40;

/** The links of a tree as a trie of path components: a step of the walk is one lookup, whatever the depth. */
interface LinkNode {
  name: string;
  children: Map<string, LinkNode>;
  /** Set when this path is a link. */
  target?: string;
}

/**
 * Checks where symlinks lead, resolved as a file system would: from the link's folder, through the other
 * links of the set (path from the root to target), "/" and "\\" both separators. A target must stay inside
 * the working tree and out of the git directory. Each link costs at most MAX_LINK_HOPS + 1 targets of at most
 * `maxSymlinkTargetBytes` (every target's length is checked first), one map lookup per component: linear.
 */
export class SymlinkChecker {
  private readonly root: LinkNode = { name: '', children: new Map() };
  private readonly maxBytes: number;

  constructor(
    private readonly links: ReadonlyMap<string, string>,
    limits: Pick<TreeLimits, 'maxSymlinkTargetBytes'> = DEFAULT_TREE_LIMITS,
  ) {
    this.maxBytes = limits.maxSymlinkTargetBytes;
    for (const [path, target] of links) {
      let node = this.root;
      for (const part of path.split('/')) {
        let child = node.children.get(part);
        if (!child) {
          child = { name: part, children: new Map() };
          node.children.set(part, child);
        }
        node = child;
      }
      node.target = target;
    }
  }

  /** The first link whose target is too long, or null: checked before any walk, which it bounds. */
  tooLong(): SymlinkProblem | null {
    for (const [path, target] of this.links) {
      if (longerThanUtf8(target, this.maxBytes)) {
        return {
          path,
          check: 'SYMLINK_TOO_LONG',
          detail: `points at a path of more than ${this.maxBytes.toLocaleString('en')} bytes (maxSymlinkTargetBytes); no file system holds one.`,
        };
      }
    }
    return null;
  }

  /** Where the link at `path` leads, or its problem. */
  check(path: string): SymlinkProblem | null {
    const target = this.links.get(path);
    if (target === undefined) return null;
    const problem = this.resolve(path, target);
    return problem ? { path, ...problem } : null;
  }

  private resolve(path: string, target: string): { check: TreeCheck; detail: string } | null {
    if (isAbsoluteTarget(target)) {
      return { check: 'SYMLINK_ABSOLUTE', detail: `points at the absolute path ${show(target)}.` };
    }
    // Where the walk is: the trie nodes from the root while the path is a prefix of some link's, then how
    // many components below the last of them (no link lies there, so their names no longer matter).
    const nodes: LinkNode[] = [this.root];
    const folders = path.split('/');
    folders.pop();
    for (const part of folders) nodes.push(nodes[nodes.length - 1].children.get(part) as LinkNode);
    let below = 0;
    // Components still to walk, as a stack of targets: a link met on the way puts its own on top.
    const pending: { parts: string[]; at: number }[] = [{ parts: target.split(/[/\\]/), at: 0 }];
    let hops = 0;
    while (pending.length > 0) {
      const top = pending[pending.length - 1];
      if (top.at === top.parts.length) {
        pending.pop();
        continue;
      }
      const part = top.parts[top.at++];
      if (part === '' || part === '.') continue;
      if (part === '..') {
        if (below > 0) below--;
        else if (nodes.length > 1) nodes.pop();
        else {
          return {
            check: 'SYMLINK_LEAVES_WORKTREE',
            detail: `points at ${show(target)}, outside the working tree.`,
          };
        }
        continue;
      }
      if (isDotGit(part)) {
        return {
          check: 'SYMLINK_POINTS_TO_GIT_DIR',
          detail: `points at ${show(target)}, into the git directory.`,
        };
      }
      const child = below > 0 ? undefined : nodes[nodes.length - 1].children.get(part);
      if (child === undefined) {
        below++;
        continue;
      }
      if (child.target === undefined) {
        nodes.push(child);
        continue;
      }
      if (++hops > MAX_LINK_HOPS) {
        return { check: 'SYMLINK_LOOP', detail: `does not resolve within ${MAX_LINK_HOPS} links.` };
      }
      // Another link on the way: what it points at replaces it, from its own folder.
      if (isAbsoluteTarget(child.target)) {
        const via = [...nodes.slice(1).map((n) => n.name), part].join('/');
        return {
          check: 'SYMLINK_ABSOLUTE',
          detail: `leads through ${show(via)} to ${show(child.target)}.`,
        };
      }
      pending.push({ parts: child.target.split(/[/\\]/), at: 0 });
    }
    return null;
  }
}

export interface SymlinkProblem {
  check: TreeCheck;
  /** The link's path from the root of the working tree. */
  path: string;
  detail: string;
}

/** The first problem of a set of links (path from the root to target): too long, then where each leads. */
export function checkSymlinkTargets(
  links: ReadonlyMap<string, string>,
  limits?: Pick<TreeLimits, 'maxSymlinkTargetBytes'>,
): SymlinkProblem | null {
  const checker = new SymlinkChecker(links, limits);
  const tooLong = checker.tooLong();
  if (tooLong) return tooLong;
  for (const path of links.keys()) {
    const problem = checker.check(path);
    if (problem) return problem;
  }
  return null;
}

function isAbsoluteTarget(target: string): boolean {
  return /^[/\\]/.test(target) || /^[A-Za-z]:/.test(target);
}

/** Whether `s` takes more than `max` bytes as UTF-8; counts no further than that. */
export function longerThanUtf8(s: string, max: number): boolean {
  // Three bytes per UTF-16 unit at most (a surrogate pair is four bytes for two units).
  if (s.length * 3 <= max) return false;
  if (s.length > max) return true;
  let bytes = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    bytes += c < 0x80 ? 1 : c < 0x800 || (c >= 0xd800 && c <= 0xdfff) ? 2 : 3;
    if (bytes > max) return true;
  }
  return false;
}

/** The mode's digits as text (a slice of `text`, the tree as Latin-1), or null when not all octal (or none). */
function octal(bytes: Uint8Array, text: string, from: number, to: number): string | null {
  if (to === from || to - from > 32) return null;
  for (let i = from; i < to; i++) if (bytes[i] < 0x30 || bytes[i] > 0x37) return null;
  return text.slice(from, to);
}

function isAscii(bytes: Uint8Array, from: number, to: number): boolean {
  for (let i = from; i < to; i++) if (bytes[i] >= 0x80) return false;
  return true;
}

function printable(s: string): string {
  return s.replace(/[^\x20-\x7e]/g, '?');
}

const HEX_DIGITS = new TextEncoder().encode('0123456789abcdef');

/** The 20-byte ids at `starts` in `bytes`, as one string of 40 hex digits each. */
function hexOf(bytes: Uint8Array, starts: number[]): string {
  const out = new Uint8Array(starts.length * 40);
  let o = 0;
  for (const start of starts) {
    for (let i = start; i < start + 20; i++) {
      out[o++] = HEX_DIGITS[bytes[i] >> 4];
      out[o++] = HEX_DIGITS[bytes[i] & 15];
    }
  }
  return latin1.decode(out);
}
