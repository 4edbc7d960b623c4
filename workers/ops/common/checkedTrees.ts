// Every tree an operation walks is read through here: parsed from its raw bytes and checked as git fsck
// checks it (pack/treeCheck.ts) before anyone lists, diffs or writes its entries, and held to the repo's
// tree limits (entries, depth). A tree id passes once per repo (RepoHandle.checkedTrees); after that,
// reading it costs the parse alone. Walks go through walkCheckedTree, one loop with its own stack.

import git from 'isomorphic-git';
import { parseCommitHeader } from '../../model/commitHeader.ts';
import type { TreeLimits } from '../../pack/packLimits.ts';
import { TimeSlice } from '../../pack/timeSlice.ts';
import { checkTree, type ParsedTreeEntry, SymlinkChecker } from '../../pack/treeCheck.ts';
import { type VisitEntry, walkTree } from '../../pack/treeWalk.ts';
import { HostileTreeError } from './errors.ts';
import type { RepoHandle } from './repoAccess.ts';
import { readObjectContent } from './storedPackReader.ts';

export type { ParsedTreeEntry } from '../../pack/treeCheck.ts';

export type TreeReader = Pick<
  RepoHandle,
  'objectFs' | 'gitdir' | 'cache' | 'checkedTrees' | 'treeLimits' | 'storedPacks'
>;

/**
 * The entries of tree `oid`, in the tree's order, modes as isomorphic-git spells them (trees "040000").
 * `path` is where the tree sits ("" for the root, else "dir/sub/"), to name an entry in the error; `depth`
 * how many folders below the root it is (the root 0). Throws HostileTreeError for a tree git would refuse,
 * one deeper than maxTreeDepth (unread), or one of more than maxTreeEntries entries.
 */
export async function readCheckedTree(
  repo: TreeReader,
  oid: string,
  path: string,
  depth: number,
): Promise<ParsedTreeEntry[]> {
  const folder = () => path.replace(/\/$/, '') || '/';
  const { maxTreeDepth, maxTreeEntries } = repo.treeLimits;
  if (depth > maxTreeDepth) {
    throw new HostileTreeError(
      folder(),
      'TREE_TOO_DEEP',
      `the tree sits more than ${maxTreeDepth.toLocaleString('en')} folders deep (maxTreeDepth, git's core.maxTreeDepth).`,
    );
  }
  const { type, object } = await readObjectContent(repo, oid);
  if (type !== 'tree')
    throw new HostileTreeError(folder(), 'BAD_TREE', `object ${oid} is a ${type}, not a tree.`);
  const { entries, problem } = checkTree(object, !repo.checkedTrees.has(oid), maxTreeEntries);
  if (problem) {
    const whole = problem.check === 'BAD_TREE' || problem.check === 'TREE_TOO_WIDE';
    throw new HostileTreeError(whole ? folder() : path + problem.name, problem.check, problem.detail);
  }
  repo.checkedTrees.add(oid);
  return entries;
}

/** Every entry under tree `root` in git's order, each tree checked on the way (pack/treeWalk.ts). */
export function walkCheckedTree(repo: TreeReader, root: string, visit: VisitEntry): Promise<void> {
  return walkTree(root, (oid, path, depth) => readCheckedTree(repo, oid, path, depth), visit);
}

/**
 * The parts of a path given to look up, which no tree may hold deeper than maxTreeDepth allows: a longer
 * one is refused before any tree is read (or fetched, for the widget).
 */
export function lookupParts(path: string, limits: Pick<TreeLimits, 'maxTreeDepth'>): string[] {
  const parts = path === '' ? [] : path.split('/');
  if (parts.length > limits.maxTreeDepth + 1) {
    throw new HostileTreeError(
      parts.slice(0, limits.maxTreeDepth + 1).join('/'),
      'TREE_TOO_DEEP',
      `the path is ${parts.length.toLocaleString('en')} names long; no tree is read more than ${limits.maxTreeDepth.toLocaleString('en')} folders deep (maxTreeDepth).`,
    );
  }
  return parts;
}

/** The root tree of a commit. */
export async function commitTree(repo: RepoHandle, commit: string): Promise<string> {
  // The stored packs' own reader spares isomorphic-git's whole-index parse; a header the model cannot read
  // is isomorphic-git's to judge.
  const own = await repo.storedPacks?.read(commit);
  const header = own?.type === 'commit' ? parseCommitHeader(own.object) : null;
  if (header) return header.tree;
  const { commit: parsed } = await git.readCommit({
    fs: repo.objectFs,
    gitdir: repo.gitdir,
    oid: commit,
    cache: repo.cache,
  });
  return parsed.tree;
}

/**
 * A symlink's target from its blob: SYMLINK_TOO_LONG past maxSymlinkTargetBytes, before it is decoded.
 */
export function linkTarget(
  path: string,
  bytes: Uint8Array,
  limits: Pick<TreeLimits, 'maxSymlinkTargetBytes'>,
) {
  if (bytes.length > limits.maxSymlinkTargetBytes) {
    throw new HostileTreeError(
      path,
      'SYMLINK_TOO_LONG',
      `the symbolic link points at a path of ${bytes.length.toLocaleString('en')} bytes; no file system holds one over ${limits.maxSymlinkTargetBytes.toLocaleString('en')} (maxSymlinkTargetBytes).`,
    );
  }
  return utf8.decode(bytes);
}

const utf8 = new TextDecoder();

/**
 * Throws HostileTreeError for the first symlink (path from the root to target) that leads out of the
 * working tree or into the git directory, followed through the others as a file system would. Lets other
 * calls in between links when a slice of time has run out: a tree may hold many.
 */
export async function assertSafeSymlinks(
  links: ReadonlyMap<string, string>,
  limits: Pick<TreeLimits, 'maxSymlinkTargetBytes'>,
): Promise<void> {
  const checker = new SymlinkChecker(links, limits);
  const slice = new TimeSlice();
  let problem = checker.tooLong();
  for (const path of links.keys()) {
    if (problem) break;
    problem = checker.check(path);
    await slice.pause();
  }
  if (problem) throw new HostileTreeError(problem.path, problem.check, `the symbolic link ${problem.detail}`);
}
