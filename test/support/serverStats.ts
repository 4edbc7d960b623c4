import { inject } from 'vitest';
import { emptyRepoStats, type RepoStats, STATS_PATH, STATS_RESET_PATH } from '../../server/repoStats.ts';

export type { RepoStats };

export function gitServerUrl(): string {
  return inject('gitServerUrl');
}

export async function resetStats(): Promise<void> {
  await fetch(`${gitServerUrl()}${STATS_RESET_PATH}`, { method: 'POST' });
}

export async function repoStats(repo: string): Promise<RepoStats> {
  const res = await fetch(`${gitServerUrl()}${STATS_PATH}`);
  const body = (await res.json()) as { repos: Record<string, RepoStats> };
  return body.repos[repo] ?? emptyRepoStats();
}
