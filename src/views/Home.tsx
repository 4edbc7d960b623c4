import { useCallback, useEffect, useState } from 'preact/hooks';
import type { RepoSummary } from '../../workers/engine/index.ts';
import { formatBytes } from '../format.ts';
import { gitClient } from '../gitClient.ts';
import { useRepoActivity } from '../repoActivity.ts';
import { askPersistence, readStorage, type StorageState } from '../storage.ts';
import { CloneForm } from './CloneForm.tsx';
import { RepoList } from './RepoList.tsx';

export function Home() {
  const [repos, setRepos] = useState<RepoSummary[] | null>(null);
  const [storage, setStorage] = useState<StorageState | null>(null);
  const [loadError, setLoadError] = useState<string | null>(null);

  const refresh = useCallback(async () => {
    try {
      setRepos(await gitClient.listRepos());
      setStorage(await readStorage());
    } catch (err) {
      setLoadError((err as Error).message);
    }
  }, []);

  useEffect(() => {
    void refresh();
  }, [refresh]);

  // Another tab cloned, deleted or changed a repo: the list follows without a reload.
  const { anyChange } = useRepoActivity();
  useEffect(() => {
    if (anyChange) void refresh();
  }, [anyChange, refresh]);

  return (
    <div class="home">
      <CloneForm onCloned={refresh} />
      <section aria-labelledby="repos-title" class="card">
        <h2 id="repos-title">Your repositories</h2>
        {loadError && <p class="error">{loadError}</p>}
        {repos === null ? <p class="muted">Loading…</p> : <RepoList repos={repos} onChanged={refresh} />}
        {storage && <StorageLine storage={storage} hasRepos={!!repos?.length} onAsked={refresh} />}
      </section>
    </div>
  );
}

/** Used and available storage, and whether the browser may evict it. */
function StorageLine({
  storage,
  hasRepos,
  onAsked,
}: {
  storage: StorageState;
  hasRepos: boolean;
  onAsked: () => void;
}) {
  const { usage, quota, persisted, asked } = storage;
  return (
    <>
      {quota ? (
        <p class="muted storage" data-testid="storage-estimate">
          Storage: {formatBytes(usage ?? 0)} used, {formatBytes(Math.max(0, quota - (usage ?? 0)))} more
          available to this site.
        </p>
      ) : null}
      {persisted !== null && (
        <p class="muted storage-persist" data-testid="storage-persistence" data-persisted={String(persisted)}>
          {persisted
            ? 'Persistent storage: granted. The browser will not clear your repositories to free space.'
            : asked === 'denied'
              ? 'Persistent storage: not granted. The browser may clear your repositories when space runs low; installing Blobless or using it often makes a grant likelier.'
              : hasRepos
                ? 'Persistent storage: not asked yet. The browser may clear your repositories when space runs low.'
                : 'Persistent storage is asked for after your first clone, so the browser keeps your repositories.'}
          {!persisted && hasRepos && (
            <button
              type="button"
              class="link"
              onClick={async () => {
                await askPersistence();
                onAsked();
              }}
            >
              {asked === 'denied' ? 'Ask again' : 'Ask now'}
            </button>
          )}
        </p>
      )}
    </>
  );
}
