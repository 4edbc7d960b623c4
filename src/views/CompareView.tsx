import { useEffect, useState } from 'preact/hooks';
import type { Comparison } from '../../workers/engine/index.ts';
import { firstLine, formatCommitDate } from '../format.ts';
import { type BloblessError, gitClient } from '../gitClient.ts';
import { navigate, parseCompare } from '../route.ts';
import { ChangedFile } from './CommitView.tsx';

/** `?compare=a...b`: the commits on b that a lacks and the files b changed since they diverged. */
export function CompareView({ repoId, spec }: { repoId: string; spec: string }) {
  const parsed = parseCompare(spec);
  const [base, setBase] = useState(parsed?.base ?? '');
  const [head, setHead] = useState(parsed?.head ?? '');
  const [result, setResult] = useState<Comparison | null>(null);
  const [error, setError] = useState<string | null>(null);

  useEffect(() => {
    setResult(null);
    setError(null);
    if (!parsed) {
      setError(`"${spec}" is not a comparison: write it as base...head, for example main...feature.`);
      return;
    }
    setBase(parsed.base);
    setHead(parsed.head);
    const abort = new AbortController();
    gitClient
      .repo(repoId)
      .compare({ base: parsed.base, head: parsed.head }, { signal: abort.signal })
      .then(setResult)
      .catch((err: BloblessError) => setError(err.message));
    return () => abort.abort();
  }, [repoId, spec]);

  function submit(e: Event) {
    e.preventDefault();
    navigate({ compare: `${base}...${head}`, commit: null, path: '' });
  }

  return (
    <section class="card compare-view" aria-label="Compare">
      <form class="compare-form" onSubmit={submit}>
        <label>
          base
          <input value={base} onInput={(e) => setBase((e.target as HTMLInputElement).value)} />
        </label>
        <span aria-hidden="true">...</span>
        <label>
          compare
          <input value={head} onInput={(e) => setHead((e.target as HTMLInputElement).value)} />
        </label>
        <button type="submit">Compare</button>
      </form>
      {error && <p class="error">{error}</p>}
      {!result && !error && <p class="muted">Comparing…</p>}
      {result && (
        <>
          <p class="muted">
            {result.commits.length}
            {result.truncated ? '+' : ''} commits · {result.diff.files.length} files changed
            {result.mergeBase ? (
              <>
                {' '}
                since <code>{result.mergeBase.slice(0, 10)}</code>
              </>
            ) : (
              ' (no common history)'
            )}
          </p>
          <h3 class="section-title">Commits</h3>
          <ol class="history-entries" data-testid="compare-commits">
            {result.commits.length === 0 && (
              <li class="muted">
                {head} has no commit that {base} lacks.
              </li>
            )}
            {result.commits.map((c) => (
              <li key={c.oid} data-oid={c.oid}>
                <button type="button" class="link subject" onClick={() => navigate({ commit: c.oid })}>
                  {firstLine(c.message)}
                </button>
                <span class="muted">
                  {c.author.name} · {formatCommitDate(c.author.timestamp)} · <code>{c.oid.slice(0, 10)}</code>
                </span>
              </li>
            ))}
          </ol>
          <h3 class="section-title">Files changed</h3>
          <ul class="changed-files" data-testid="compare-files">
            {result.diff.files.map((f) => (
              <ChangedFile key={f.path} repoId={repoId} change={f} />
            ))}
          </ul>
        </>
      )}
    </section>
  );
}
