import { clone, type CloneOptions, type CloneProgress, type CloneResult } from './ops/clone.ts';
import { type LogPage, log } from './ops/history.ts';
import { forgetRepo } from './ops/repoAccess.ts';
import { readTree, type TreeListing } from './ops/tree.ts';
import { listRepoRecords, type RepoRecord, removeRepo } from './store/registry.ts';
import { deleteRepoFs } from './store/repoFs.ts';

export type { CloneOptions, CloneProgress, CloneResult, LogPage, RepoRecord, TreeListing };
export type { CommitSummary } from './ops/history.ts';
export type { TreeEntry } from './ops/tree.ts';

/**
 * Everything the UI may ask of the git worker. Long operations take a progress callback and an
 * AbortSignal; failures are typed errors with a stable `code`.
 */
export const api = {
  clone(options: CloneOptions, onProgress?: (p: CloneProgress) => void, signal?: AbortSignal): Promise<CloneResult> {
    return clone(options, { onProgress, signal });
  },

  listRepos(): Promise<RepoRecord[]> {
    return listRepoRecords();
  },

  async deleteRepo(repoId: string): Promise<void> {
    forgetRepo(repoId);
    await deleteRepoFs(repoId);
    await removeRepo(repoId);
  },

  log(repoId: string, ref: string, page?: { limit?: number; skip?: number }): Promise<LogPage> {
    return log(repoId, ref, page);
  },

  readTree(repoId: string, commit: string, path?: string): Promise<TreeListing> {
    return readTree(repoId, commit, path);
  },
};

export type GitApi = typeof api;
