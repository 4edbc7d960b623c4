// Local branches: create and delete. Switching is a checkout (checkout.ts), which fetches what it lacks.

import git from 'isomorphic-git';
import { isValidRefName } from '../../model/refName.ts';
import type { OpsContext } from '../common/engineContext.ts';
import { OperationError } from '../common/errors.ts';
import { openRepo, resolveCommit } from '../common/repoAccess.ts';

/**
 * `git check-ref-format --branch`: `refs/heads/<name>` must be a valid ref name (model/refName.ts), and the
 * name may not be `HEAD` or begin with `-` (sha1-name.c strbuf_check_branch_ref). `@` is refused too, which
 * git accepts outside a repository but reads as HEAD within one.
 */
export function checkBranchName(name: string): string {
  const bad =
    name === '@' || name === 'HEAD' || name.startsWith('-') || !isValidRefName(`refs/heads/${name}`);
  if (bad) throw new OperationError('INVALID_INPUT', `"${name}" is not a valid branch name.`);
  return name;
}

/** Creates `name` at `start` (a branch, tag or commit; HEAD when omitted) without switching to it. */
export async function createBranch(
  ctx: OpsContext,
  repoId: string,
  name: string,
  start = 'HEAD',
): Promise<string> {
  const repo = await openRepo(ctx, repoId);
  const { fs, gitdir } = repo;
  checkBranchName(name);
  const exists = await git.resolveRef({ fs, gitdir, ref: `refs/heads/${name}` }).then(
    () => true,
    () => false,
  );
  if (exists) throw new OperationError('BRANCH_EXISTS', `A branch named "${name}" already exists.`);
  const oid = await resolveCommit(repo, start);
  await ctx.store.repoFs.writeAllOrNothing(repoId, () =>
    git.writeRef({ fs, gitdir, ref: `refs/heads/${name}`, value: oid }),
  );
  return oid;
}

/** Deletes a local branch (not the current one); its remote-tracking branch stays. */
export async function deleteBranch(ctx: OpsContext, repoId: string, name: string): Promise<void> {
  const { fs, gitdir } = await openRepo(ctx, repoId);
  const current = await git.currentBranch({ fs, gitdir });
  if (current === name) {
    throw new OperationError(
      'INVALID_INPUT',
      `"${name}" is checked out. Switch to another branch before deleting it.`,
    );
  }
  const exists = await git.resolveRef({ fs, gitdir, ref: `refs/heads/${name}` }).then(
    () => true,
    () => false,
  );
  if (!exists) throw new OperationError('REF_NOT_FOUND', `There is no local branch "${name}".`);
  await ctx.store.repoFs.writeAllOrNothing(repoId, () => git.deleteBranch({ fs, gitdir, ref: name }));
}
