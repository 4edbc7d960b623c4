import { useEffect, useState } from 'preact/hooks';
import type { RepoRecord } from '../../workers/api.ts';
import { formatBytes } from '../format.ts';
import { gitClient } from '../gitClient.ts';
import { navigate } from '../route.ts';
import { CommitList } from './CommitList.tsx';
import { FileTree } from './FileTree.tsx';

export function RepoView({ repoId, path }: { repoId: string; path: string }) {
  const [repo, setRepo] = useState<RepoRecord | null | undefined>(undefined);
  useEffect(() => {
    gitClient.listRepos().then((all) => setRepo(all.find((r) => r.id === repoId) ?? null));
  }, [repoId]);

  if (repo === undefined) return <p class="muted">Opening…</p>;
  if (repo === null) {
    return (
      <section class="card">
        <p class="error">This repository is not stored in this browser (it may have been deleted).</p>
        <button type="button" onClick={() => navigate({ repo: null, path: '' })}>
          Back to your repositories
        </button>
      </section>
    );
  }
  const ref = repo.branch ?? repo.headOid;
  return (
    <div class="repo-view">
      <section class="card repo-header">
        <h2>{repo.name}</h2>
        <p class="muted">{repo.url}</p>
        <p class="repo-meta muted">
          <span>
            On <strong>{repo.branch ?? `detached ${repo.headOid.slice(0, 10)}`}</strong>
          </span>
          <span>{repo.filter ? `partial clone (${repo.filter})` : 'full clone'}</span>
          {repo.shallow && <span>shallow</span>}
          <span>{formatBytes(repo.sizeBytes)} in this browser</span>
        </p>
      </section>
      <div class="repo-columns">
        <FileTree repoId={repoId} gitRef={ref} path={path} />
        <CommitList repoId={repoId} gitRef={ref} />
      </div>
    </div>
  );
}
