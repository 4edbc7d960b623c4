import { TimeSlice } from '../../pack/timeSlice.ts';
import { MODE_GITLINK, MODE_TREE_PADDED as MODE_TREE } from '../../pack/treeCheck.ts';
import { commitTree, readCheckedTree } from '../common/checkedTrees.ts';
import type { OpsContext } from '../common/engineContext.ts';
import { openRepo, resolveCommit } from '../common/repoAccess.ts';

/** How much of a commit's content is stored here, and how much the server still holds. */
export interface Presence {
  /** The commit the ref resolved to. */
  commit: string;
  /** Distinct file contents (blobs) the commit's tree names: what a full checkout would need. */
  blobs: number;
  /** Of those, the ones stored in this browser; the rest the server has promised to send when asked. */
  present: number;
  /** Packs the repo's objects are kept in (a clone's, then one per fetch or blob batch until merged). */
  packs: number;
}

/** How much of a commit's content is here: walks its trees (all local), asks the pack indexes. */
export async function presence(ctx: OpsContext, repoId: string, ref: string): Promise<Presence> {
  const repo = await openRepo(ctx, repoId);
  const commit = await resolveCommit(repo, ref);
  const blobs = new Set<string>();
  const seenTrees = new Set<string>();
  const slice = new TimeSlice();
  // Each tree once (blobs are counted, not paths), at the depth it is first met.
  const stack = [{ oid: await commitTree(repo, commit), path: '', depth: 0 }];
  while (stack.length) {
    const { oid, path, depth } = stack.pop()!;
    if (seenTrees.has(oid)) continue;
    seenTrees.add(oid);
    await slice.pause();
    for (const e of await readCheckedTree(repo, oid, path, depth)) {
      if (e.mode === MODE_TREE) stack.push({ oid: e.oid, path: `${path}${e.name}/`, depth: depth + 1 });
      else if (e.mode !== MODE_GITLINK) blobs.add(e.oid);
    }
  }
  const packSet = await ctx.store.packs.for(repoId);
  const missing = packSet.missing(blobs).length;
  return { commit, blobs: blobs.size, present: blobs.size - missing, packs: packSet.packs.length };
}
