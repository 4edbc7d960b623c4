// Records the index as a commit on the current branch (or amends HEAD), with isomorphic-git: it writes
// the index's trees as loose objects and moves the branch. The blobs are already stored: staging wrote them.

import git from 'isomorphic-git';
import { OperationError, throwIfAborted } from '../common/errors.ts';
import type { BlobContext } from '../sync/lazyBlobs.ts';
import { WORKTREE_DIR } from './checkout.ts';
import { clearMergeState, readMergeState } from './mergeState.ts';
import { classify, ensureWorktree, type WorktreeHooks } from './workingTree.ts';

/** Who made a commit: its author and committer lines (the time is the commit's, in the local zone). */
export interface Author {
  /** A name git accepts: not empty, without `<`, `>` or a line feed. */
  name: string;
  /** An email git accepts: without `<`, `>` or white space. */
  email: string;
}

/** What commit records. */
export interface CommitOptions {
  /** The commit message; trimmed, and refused (INVALID_INPUT) when empty. */
  message: string;
  /** Author and committer. */
  author: Author;
  /** Replace HEAD's commit (same parents) instead of adding one on top, as `git commit --amend`. */
  amend?: boolean;
}

/** What commit made. */
export interface CommitResult {
  /** The new commit's id. */
  oid: string;
  /** The branch it was made on (`main`), or null when HEAD is detached. */
  branch: string | null;
}

/**
 * Commits what is staged. Throws INVALID_INPUT for an empty message or an author git would refuse,
 * NOTHING_TO_COMMIT when the index equals HEAD's tree (unless amending, which may only reword). During a
 * merge (MERGE_HEAD) the commit is the merge commit, with HEAD and MERGE_HEAD as its parents, once every
 * conflict is resolved (UNRESOLVED_CONFLICTS before); its tree may equal HEAD's (all of ours kept).
 */
export async function commit(
  ctx: BlobContext,
  repoId: string,
  opts: CommitOptions,
  hooks: WorktreeHooks = {},
): Promise<CommitResult> {
  const message = opts.message.trim();
  if (!message)
    throw new OperationError('INVALID_INPUT', 'Write a commit message: git refuses an empty one.');
  const name = opts.author.name.trim();
  const email = opts.author.email.trim();
  // git's ident rules (ident.c): no angle brackets or line breaks in either part; a name is required.
  if (!name || /[<>\n]/.test(name) || /[<>\n\s]/.test(email)) {
    throw new OperationError(
      'INVALID_INPUT',
      'Give an author name and an e-mail without <, > or line breaks (Settings).',
    );
  }
  const repo = await ensureWorktree(ctx, repoId, hooks);
  const { fs, gitdir, cache } = repo;
  const branch = (await git.currentBranch({ fs, gitdir })) ?? null;
  const merging = await readMergeState(repo);
  if (merging && opts.amend)
    throw new OperationError(
      'INVALID_INPUT',
      'A merge is in progress: commit it (or abort it) before amending.',
    );
  if (merging && merging.conflicts.length > 0) {
    throw new OperationError(
      'UNRESOLVED_CONFLICTS',
      `Resolve ${merging.conflicts.join(', ')} first: edit out the conflict markers, then stage ${merging.conflicts.length === 1 ? 'it' : 'them'}.`,
    );
  }
  if (!opts.amend && !merging) {
    const matrix = await git.statusMatrix({ fs, dir: WORKTREE_DIR, gitdir, cache });
    const staged = matrix.some(([, head, workdir, stage]) => classify(head, workdir, stage).staged !== null);
    if (!staged)
      throw new OperationError('NOTHING_TO_COMMIT', 'Nothing is staged. Stage the changes to commit first.');
  }
  throwIfAborted(hooks.signal);
  const now = Math.floor(Date.now() / 1000);
  const ident = { name, email, timestamp: now, timezoneOffset: new Date().getTimezoneOffset() };
  const head = merging ? await git.resolveRef({ fs, gitdir, ref: 'HEAD' }) : null;
  const oid = await ctx.store.repoFs.writeAllOrNothing(repoId, async () => {
    const made = await git.commit({
      fs,
      dir: WORKTREE_DIR,
      gitdir,
      cache,
      message: `${message}\n`,
      author: ident,
      committer: ident,
      amend: opts.amend ?? false,
      ...(merging && head ? { parent: [head, merging.head] } : {}),
    });
    if (merging) await clearMergeState(repo);
    await ctx.store.crash.at('commit:files-written');
    return made;
  });
  // The record follows the files: a crash in between leaves it behind HEAD, which startup repair mends.
  await ctx.store.crash.at('commit:files-committed');
  await ctx.store.registry.update(repoId, (r) => ({ ...r, headOid: oid, branch }));
  return { oid, branch };
}
