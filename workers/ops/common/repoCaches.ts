import type { CommitGraph } from '../../commitgraph/commitGraph.ts';
import type { RepoFileSystems } from '../../store/repoFs.ts';

/** What one repo keeps between operations at the ops layer (repoAccess.ts reads through it). */
export interface RepoCache {
  /** isomorphic-git's object cache: reused so a pack is loaded once, not once per call. */
  readonly cache: object;
  /** Tree ids that passed pack/treeCheck.ts in this repo: checked once, then read without checking. */
  readonly checkedTrees: Set<string>;
  /** The commit-graph as last read, and the chain file it was read from (commitGraphAccess.ts). */
  commitGraph?: { chain: string; graph: CommitGraph | null };
}

/**
 * Each repo's isomorphic-git cache and checked trees, for one engine. Forgotten when the repo is disposed
 * or deleted, and when another tab changed its files (isomorphic-git caches packs it read; another tab
 * may have merged them away).
 */
export class RepoCaches {
  private readonly byRepo = new Map<string, RepoCache>();

  constructor(repoFs: RepoFileSystems) {
    repoFs.onReloaded((repoId) => this.forget(repoId));
  }

  for(repoId: string): RepoCache {
    let entry = this.byRepo.get(repoId);
    if (!entry) {
      entry = { cache: {}, checkedTrees: new Set() };
      this.byRepo.set(repoId, entry);
    }
    return entry;
  }

  /** The repo's isomorphic-git cache if it has one, without making it. */
  existing(repoId: string): RepoCache | undefined {
    return this.byRepo.get(repoId);
  }

  forget(repoId: string): void {
    this.byRepo.delete(repoId);
  }

  clear(): void {
    this.byRepo.clear();
  }
}
