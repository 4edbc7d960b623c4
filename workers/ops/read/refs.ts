import git from 'isomorphic-git';
import type { OpsContext } from '../common/engineContext.ts';
import { openRepo } from '../common/repoAccess.ts';

export interface RefList {
  /** The branch HEAD names, or null when detached. */
  current: string | null;
  head: string;
  /** Local branches and the remote's branches, by short name, each once. */
  branches: string[];
  tags: string[];
}

/** The names a branch/tag switcher offers: local and remote-tracking branches merged, and tags. */
export async function listRefs(ctx: OpsContext, repoId: string): Promise<RefList> {
  const { fs, gitdir } = await openRepo(ctx, repoId);
  const [local, remote, tags, current, head] = await Promise.all([
    git.listBranches({ fs, gitdir }),
    git.listBranches({ fs, gitdir, remote: 'origin' }),
    git.listTags({ fs, gitdir }),
    git.currentBranch({ fs, gitdir }),
    git.resolveRef({ fs, gitdir, ref: 'HEAD' }),
  ]);
  const branches = [...new Set([...local, ...remote.filter((b) => b !== 'HEAD')])].sort();
  return { current: current ?? null, head, branches, tags: tags.sort() };
}
