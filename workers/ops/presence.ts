import git from 'isomorphic-git';
import { packSetFor } from '../store/packSet.ts';
import { openRepo, resolveCommit } from './repoAccess.ts';

export interface Presence {
  commit: string;
  /** Distinct file contents (blobs) the commit's tree names: what a full checkout would need. */
  blobs: number;
  /** Of those, the ones stored in this browser; the rest the server has promised to send when asked. */
  present: number;
  packs: number;
}

/** How much of a commit's content is here: walks its trees (all local), asks the pack indexes. */
export async function presence(repoId: string, ref: string): Promise<Presence> {
  const repo = await openRepo(repoId);
  const commit = await resolveCommit(repo, ref);
  const { commit: c } = await git.readCommit({
    fs: repo.fs,
    gitdir: repo.gitdir,
    oid: commit,
    cache: repo.cache,
  });
  const blobs = new Set<string>();
  const seenTrees = new Set<string>();
  const stack = [c.tree];
  while (stack.length) {
    const oid = stack.pop()!;
    if (seenTrees.has(oid)) continue;
    seenTrees.add(oid);
    const { tree } = await git.readTree({ fs: repo.fs, gitdir: repo.gitdir, oid, cache: repo.cache });
    for (const e of tree) {
      if (e.type === 'tree') stack.push(e.oid);
      else if (e.type === 'blob') blobs.add(e.oid);
    }
  }
  const packSet = await packSetFor(repoId);
  const missing = packSet.missing(blobs).length;
  return { commit, blobs: blobs.size, present: blobs.size - missing, packs: packSet.packs.length };
}
