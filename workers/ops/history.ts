import git from 'isomorphic-git';
import { openRepo, resolveCommit } from './repoAccess.ts';

export interface CommitSummary {
  oid: string;
  parents: string[];
  message: string;
  author: { name: string; email: string; timestamp: number; timezoneOffset: number };
  committer: { name: string; email: string; timestamp: number; timezoneOffset: number };
}

export interface LogPage {
  commits: CommitSummary[];
  /** False once the walk reached the root (or a shallow boundary). */
  more: boolean;
}

/** One page of history, newest first, as `git log <ref>` orders it. */
export async function log(
  repoId: string,
  ref: string,
  page: { limit?: number; skip?: number } = {},
): Promise<LogPage> {
  const limit = page.limit ?? 50;
  const skip = page.skip ?? 0;
  const repo = await openRepo(repoId);
  const oid = await resolveCommit(repo, ref);
  const entries = await git.log({ fs: repo.fs, gitdir: repo.gitdir, ref: oid, depth: skip + limit + 1, cache: repo.cache });
  const commits = entries.slice(skip, skip + limit).map((e) => ({
    oid: e.oid,
    parents: e.commit.parent,
    message: e.commit.message,
    author: e.commit.author,
    committer: e.commit.committer,
  }));
  return { commits, more: entries.length > skip + limit };
}
