import { useEffect, useState } from 'preact/hooks';
import type { RepoRecord } from '../../workers/api.ts';
import { gitClient } from '../gitClient.ts';
import { navigate, type Route } from '../route.ts';
import { CommitList } from './CommitList.tsx';
import { CommitView } from './CommitView.tsx';
import { FileTree } from './FileTree.tsx';
import { FileView } from './FileView.tsx';
import { OpenFromLink } from './OpenFromLink.tsx';
import { RefSwitcher } from './RefSwitcher.tsx';
import { StatusLine } from './StatusLine.tsx';

/** `?repo=` holds a stored repo's id or a repository URL (a deep link): a URL is cloned first if needed. */
export function RepoView({ route }: { route: Route }) {
  const [repo, setRepo] = useState<RepoRecord | null | undefined>(undefined);
  const key = route.repo!;
  useEffect(() => {
    setRepo(undefined);
    gitClient
      .listRepos()
      .then((all) => setRepo(all.find((r) => r.id === key) ?? all.find((r) => r.url === key) ?? null));
  }, [key]);

  if (repo === undefined) return <p class="muted">Opening…</p>;
  if (repo === null) {
    if (/^https?:\/\//.test(key)) return <OpenFromLink url={key} gitRef={route.ref} onReady={setRepo} />;
    return (
      <section class="card">
        <p class="error">This repository is not stored in this browser (it may have been deleted).</p>
        <button type="button" onClick={() => navigate({ repo: null, path: '' })}>
          Back to your repositories
        </button>
      </section>
    );
  }
  const ref = route.ref ?? repo.branch ?? repo.headOid;
  return (
    <div class="repo-view">
      <section class="card repo-header">
        <div class="repo-title">
          <h2>{repo.name}</h2>
          <RefSwitcher repoId={repo.id} current={ref} />
        </div>
        <p class="muted repo-url">{repo.url}</p>
        <p class="repo-meta muted">
          <span>{repo.filter ? `partial clone (${repo.filter})` : 'full clone'}</span>
          {repo.shallow && <span>shallow</span>}
        </p>
      </section>
      <div class="repo-columns">
        {route.commit ? (
          <CommitView repoId={repo.id} oid={route.commit} />
        ) : (
          <PathView repoId={repo.id} gitRef={ref} path={route.path} />
        )}
        <CommitList repoId={repo.id} gitRef={ref} selected={route.commit} />
      </div>
      <StatusLine repoId={repo.id} gitRef={ref} tick={`${route.path}|${route.commit ?? ''}`} />
    </div>
  );
}

/** A path is a folder or a file; which one is known only from the tree, so try the folder first. */
function PathView({ repoId, gitRef, path }: { repoId: string; gitRef: string; path: string }) {
  const [kind, setKind] = useState<'dir' | 'file' | null>(path ? null : 'dir');
  useEffect(() => {
    if (!path) {
      setKind('dir');
      return;
    }
    setKind(null);
    gitClient
      .readTree(repoId, gitRef, path)
      .then(() => setKind('dir'))
      .catch(() => setKind('file'));
  }, [repoId, gitRef, path]);
  if (kind === null) return <section class="card muted">Opening {path}…</section>;
  return kind === 'dir' ? (
    <FileTree repoId={repoId} gitRef={gitRef} path={path} />
  ) : (
    <FileView repoId={repoId} gitRef={gitRef} path={path} />
  );
}
