import git from 'isomorphic-git';
import type { OpsContext } from '../common/engineContext.ts';
import { openRepo, peelTags } from '../common/repoAccess.ts';

/** The repo's branches and tags, for a branch/tag switcher. */
export interface RefList {
  /** The branch HEAD names, or null when detached. */
  current: string | null;
  /** The commit HEAD points at. */
  head: string;
  /** Local branches and the remote's branches, by short name, each once. */
  branches: string[];
  /** Tag names (without `refs/tags/`), sorted. */
  tags: string[];
  /** The remote's default branch (`refs/remotes/origin/HEAD`), or null when unknown. */
  defaultBranch: string | null;
  /** Each tag's commit (annotated tags peeled): how a header names a commit a tag points at. */
  tagCommits: Record<string, string>;
}

/** The names a branch/tag switcher offers: local and remote-tracking branches merged, and tags. */
export async function listRefs(ctx: OpsContext, repoId: string): Promise<RefList> {
  const repo = await openRepo(ctx, repoId);
  const { fs, gitdir } = repo;
  const [local, remote, tags, current, head, originHead] = await Promise.all([
    git.listBranches({ fs, gitdir }),
    git.listBranches({ fs, gitdir, remote: 'origin' }),
    git.listTags({ fs, gitdir }),
    git.currentBranch({ fs, gitdir }),
    git.resolveRef({ fs, gitdir, ref: 'HEAD' }),
    git.resolveRef({ fs, gitdir, ref: 'refs/remotes/origin/HEAD', depth: 2 }).catch(() => null),
  ]);
  const branches = [...new Set([...local, ...remote.filter((b) => b !== 'HEAD')])].sort();
  const tagCommits: Record<string, string> = {};
  for (const tag of tags) {
    try {
      const oid = await git.resolveRef({ fs, gitdir, ref: `refs/tags/${tag}` });
      const commit = await peelTags(repo, oid);
      if (commit) tagCommits[tag] = commit;
    } catch {
      // A tag whose object is not stored (it arrives with the history): named without its commit.
    }
  }
  const defaultBranch = originHead?.startsWith('refs/remotes/origin/')
    ? originHead.slice('refs/remotes/origin/'.length)
    : null;
  return { current: current ?? null, head, branches, tags: tags.sort(), defaultBranch, tagCommits };
}
