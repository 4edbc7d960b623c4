/**
 * Test support: a registry record of repository `id` with every field set, `over` replacing any of them.
 * Never imported by runtime code.
 */

import type { RepoRecord } from '../registry.ts';

export function repoRecord(id: string, over: Partial<RepoRecord> = {}): RepoRecord {
  return {
    id,
    url: `https://example.com/${id}.git`,
    name: id,
    branch: 'main',
    headOid: 'a'.repeat(40),
    filter: 'blob:none',
    shallow: false,
    sizeBytes: 1,
    createdAt: 1,
    lastFetchedAt: 1,
    ...over,
  };
}
