import { useEffect, useState } from 'preact/hooks';
import type { Comparison, RefList } from '../../workers/engine/index.ts';
import { firstLine, formatCommitDate } from '../format.ts';
import { type BloblessError, gitClient } from '../gitClient.ts';
import { sortBranches, sortTags } from '../refOrder.ts';
import { navigate, parseCompare, routeHref } from '../route.ts';
import { CommitDiffs } from './CommitDiffs.tsx';

/** A base for a comparison the address left open (`...head`): the default branch, or the latest tag. */
function pickBase(refs: RefList, head: string): string | null {
  if (refs.defaultBranch && refs.defaultBranch !== head) return refs.defaultBranch;
  return sortTags(refs.tags).find((t) => t !== head) ?? null;
}

/**
 * `?compare=a...b`: the commits on b that a lacks and the changes b made since they diverged, every file's
 * diff inline. `...b` (the Compare tab) starts from the default branch, or from the latest tag when b is
 * the default branch; the two fields suggest every branch and tag.
 */
export function CompareView({ repoId, spec }: { repoId: string; spec: string }) {
  const parsed = parseCompare(spec);
  const open = /^\.{2,3}(.+)$/.exec(spec)?.[1] ?? null;
  const [refs, setRefs] = useState<RefList | null>(null);
  const [base, setBase] = useState(parsed?.base ?? '');
  const [head, setHead] = useState(parsed?.head ?? open ?? '');
  const [result, setResult] = useState<Comparison | null>(null);
  const [error, setError] = useState<string | null>(null);

  useEffect(() => {
    gitClient
      .repo(repoId)
      .listRefs()
      .then(setRefs, () => undefined);
  }, [repoId]);

  // The open form: once the refs are known, the address is completed with the base picked.
  useEffect(() => {
    if (open === null || !refs) return;
    const picked = pickBase(refs, open);
    if (picked) navigate({ compare: `${picked}...${open}` }, { replace: true });
  }, [open, refs]);

  useEffect(() => {
    setResult(null);
    setError(null);
    if (!parsed) {
      if (open === null)
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
      // Leaving the view cancels its comparison: that is no error to show.
      .catch(
        (err: BloblessError) => !abort.signal.aborted && err.code !== 'ABORTED' && setError(err.message),
      );
    return () => abort.abort();
  }, [repoId, spec]);

  function submit(e: Event) {
    e.preventDefault();
    navigate({ compare: `${base.trim()}...${head.trim()}`, commit: null, path: '' });
  }

  const names = refs ? [...sortBranches(refs.branches, refs.defaultBranch), ...sortTags(refs.tags)] : [];
  return (
    <section class="card compare-view" aria-labelledby="compare-title">
      <h2 id="compare-title">Compare</h2>
      <form class="compare-form" onSubmit={submit}>
        <label>
          base
          <input list="compare-refs" value={base} onInput={(e) => setBase(e.currentTarget.value)} />
        </label>
        <span aria-hidden="true">...</span>
        <label>
          compare
          <input list="compare-refs" value={head} onInput={(e) => setHead(e.currentTarget.value)} />
        </label>
        <datalist id="compare-refs">
          {names.map((n) => (
            <option key={n} value={n} />
          ))}
        </datalist>
        <button type="submit">Compare</button>
      </form>
      {error && (
        <p class="error" role="alert">
          {error}
        </p>
      )}
      {open !== null && refs && !pickBase(refs, open) && (
        <p class="muted">Pick a base to compare {open} with.</p>
      )}
      {!result && !error && parsed && <p class="muted">Comparing…</p>}
      {result && (
        <>
          <p class="muted" data-testid="compare-summary">
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
                {parsed?.head} has no commit that {parsed?.base} lacks.
              </li>
            )}
            {result.commits.map((c) => (
              <li key={c.oid} data-oid={c.oid}>
                <a
                  class="subject"
                  href={routeHref({ commit: c.oid })}
                  onClick={(e) => {
                    e.preventDefault();
                    navigate({ commit: c.oid });
                  }}
                >
                  {firstLine(c.message)}
                </a>
                <span class="muted">
                  {c.author.name} · {formatCommitDate(c.author.timestamp)} · <code>{c.oid.slice(0, 10)}</code>
                </span>
              </li>
            ))}
          </ol>
          <h3 class="section-title">Files changed</h3>
          <CommitDiffs
            repoId={repoId}
            files={result.diff.files}
            gitRef={result.head}
            testId="compare-files"
          />
        </>
      )}
    </section>
  );
}
