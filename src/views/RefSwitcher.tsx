import { useEffect, useState } from 'preact/hooks';
import type { CheckoutProgress as Progress, RefList } from '../../workers/engine/index.ts';
import { withToken } from '../auth/withToken.ts';
import { whileBusy } from '../busy.ts';
import { type BloblessError, gitClient } from '../gitClient.ts';
import { navigate } from '../route.ts';
import { CloneProgress } from './CloneProgress.tsx';

/** Switching runs the lazy checkout: only the blobs the new tree lacks are fetched. */
export function RefSwitcher({ repoId, current }: { repoId: string; current: string }) {
  const [refs, setRefs] = useState<RefList | null>(null);
  const [progress, setProgress] = useState<Progress | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [controller, setController] = useState<AbortController | null>(null);

  useEffect(() => {
    gitClient
      .repo(repoId)
      .listRefs()
      .then(setRefs, (err: Error) => setError(err.message));
  }, [repoId]);

  async function switchTo(ref: string) {
    setError(null);
    setProgress({ phase: 'fetching-blobs', objects: 0, totalObjects: 0, bytes: 0, requests: 0 });
    const abort = new AbortController();
    setController(abort);
    try {
      await whileBusy('checkout', () =>
        withToken(() =>
          gitClient
            .repo(repoId)
            .checkout(
              { ref, force: false },
              { onProgress: (p: Progress) => setProgress(p), signal: abort.signal },
            ),
        ),
      );
      navigate({ ref, commit: null });
    } catch (err) {
      // Cancelled (while waiting for another tab, say): the working tree is as it was; nothing to say.
      if ((err as BloblessError).code !== 'ABORTED') setError((err as BloblessError).message);
    } finally {
      setProgress(null);
      setController(null);
    }
  }

  const known = refs && (refs.branches.includes(current) || refs.tags.includes(current));
  return (
    <div class="ref-switcher">
      <label>
        <span class="sr-only">Branch or tag</span>
        <select
          data-testid="branch-select"
          value={current}
          disabled={!refs || progress !== null}
          onChange={(e) => switchTo(e.currentTarget.value)}
          aria-label="Branch or tag"
        >
          {!known && (
            <option value={current}>{current.length === 40 ? current.slice(0, 10) : current}</option>
          )}
          {refs && refs.branches.length > 0 && (
            <optgroup label="Branches">
              {refs.branches.map((b) => (
                <option key={`b:${b}`} value={b}>
                  {b}
                </option>
              ))}
            </optgroup>
          )}
          {refs && refs.tags.length > 0 && (
            <optgroup label="Tags">
              {refs.tags.map((t) => (
                <option key={`t:${t}`} value={t}>
                  {t}
                </option>
              ))}
            </optgroup>
          )}
        </select>
      </label>
      {progress && <CloneProgress progress={progress} />}
      {progress && controller && (
        <button
          type="button"
          class="secondary small"
          data-testid="checkout-cancel"
          onClick={() => controller.abort()}
        >
          Cancel
        </button>
      )}
      {error && (
        <p class="error" role="alert">
          {error}
        </p>
      )}
    </div>
  );
}
