import { useEffect, useRef, useState } from 'preact/hooks';
import type { RepoSummary } from '../../workers/engine/index.ts';
import { cloneAndCheckout, type FlowProgress } from '../cloneFlow.ts';
import { type BloblessError, gitClient } from '../gitClient.ts';
import { CloneError } from './CloneError.tsx';
import { CloneProgress } from './CloneProgress.tsx';

/** A deep link to a repo this browser does not have yet: clone it (without blobs), then show the place. */
export function OpenFromLink({
  url,
  gitRef,
  onReady,
}: {
  url: string;
  gitRef: string | null;
  onReady: (repo: RepoSummary) => void;
}) {
  const [progress, setProgress] = useState<FlowProgress | null>({ phase: 'connecting' });
  const [error, setError] = useState<{ message: string; code: string } | null>(null);
  const abort = useRef(new AbortController());

  useEffect(() => {
    const controller = new AbortController();
    abort.current = controller;
    cloneAndCheckout({ url, ref: gitRef ?? undefined }, setProgress, controller.signal)
      .then(async (result) => {
        const repo = (await gitClient.listRepos()).find((r) => r.id === result.repoId);
        if (repo) onReady(repo);
      })
      .catch((err: BloblessError) => setError({ message: err.message, code: err.code }))
      .finally(() => setProgress(null));
    return () => controller.abort();
  }, [url, gitRef]);

  return (
    <section class="card" aria-label="Opening a linked repository">
      <h1 class="opening-title">Opening {url}</h1>
      <p class="muted">This repository is not in this browser yet; cloning it without file contents first.</p>
      {progress && (
        <div class="status-bar clone-status" data-testid="status-bar">
          <CloneProgress progress={progress} />
          <button type="button" class="secondary small" onClick={() => abort.current.abort()}>
            Cancel
          </button>
        </div>
      )}
      {error && <CloneError error={error} />}
    </section>
  );
}
