import { useEffect, useRef, useState } from 'preact/hooks';
import type { RepoRecord } from '../../workers/engine/index.ts';
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
  onReady: (repo: RepoRecord) => void;
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
      <h2>Opening {url}</h2>
      <p class="muted">This repository is not in this browser yet; cloning it without file contents first.</p>
      {progress && (
        <>
          <CloneProgress progress={progress} />
          <button type="button" class="secondary" onClick={() => abort.current.abort()}>
            Cancel
          </button>
        </>
      )}
      {error && <CloneError error={error} />}
    </section>
  );
}
