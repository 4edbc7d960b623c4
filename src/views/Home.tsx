import { useCallback, useEffect, useState } from 'preact/hooks';
import type { RepoRecord } from '../../workers/api.ts';
import { formatBytes } from '../format.ts';
import { gitClient } from '../gitClient.ts';
import { CloneForm } from './CloneForm.tsx';
import { RepoList } from './RepoList.tsx';

export function Home() {
  const [repos, setRepos] = useState<RepoRecord[] | null>(null);
  const [storage, setStorage] = useState<StorageEstimate | null>(null);
  const [loadError, setLoadError] = useState<string | null>(null);

  const refresh = useCallback(async () => {
    try {
      setRepos(await gitClient.listRepos());
      setStorage(await navigator.storage?.estimate?.());
    } catch (err) {
      setLoadError((err as Error).message);
    }
  }, []);

  useEffect(() => {
    void refresh();
  }, [refresh]);

  return (
    <div class="home">
      <CloneForm onCloned={refresh} />
      <section aria-labelledby="repos-title" class="card">
        <h2 id="repos-title">Your repositories</h2>
        {loadError && <p class="error">{loadError}</p>}
        {repos === null ? <p class="muted">Loading…</p> : <RepoList repos={repos} onChanged={refresh} />}
        {storage?.quota ? (
          <p class="muted storage">
            Storage: {formatBytes(storage.usage ?? 0)} used of {formatBytes(storage.quota)} available to this
            site.
          </p>
        ) : null}
      </section>
    </div>
  );
}
