import { useEffect, useState } from 'preact/hooks';
import type { BlameProgress, BlameResult } from '../../workers/engine/index.ts';
import { withToken } from '../auth/withToken.ts';
import { firstLine, formatCommitDate } from '../format.ts';
import { type BloblessError, gitClient } from '../gitClient.ts';
import { escapeHtml, languageFor, loadHighlighter, splitHighlightedLines } from '../highlight.ts';
import { navigate } from '../route.ts';
import { Breadcrumbs } from './Breadcrumbs.tsx';

/** git blame for one file; the old versions' blobs arrive in a few batches, with progress and cancel. */
export function BlameView({ repoId, gitRef, path }: { repoId: string; gitRef: string; path: string }) {
  const [result, setResult] = useState<BlameResult | null>(null);
  const [progress, setProgress] = useState<BlameProgress | null>(null);
  const [error, setError] = useState<{ message: string; code: string } | null>(null);
  const [controller, setController] = useState<AbortController | null>(null);
  const [html, setHtml] = useState<string[] | null>(null);

  function start() {
    const abort = new AbortController();
    setController(abort);
    setResult(null);
    setError(null);
    setProgress(null);
    withToken(() =>
      gitClient.repo(repoId).blame({ ref: gitRef, path }, { onProgress: setProgress, signal: abort.signal }),
    )
      .then(setResult)
      .catch((err: BloblessError) => setError({ message: err.message, code: err.code }))
      .finally(() => setController(null));
    return abort;
  }

  useEffect(() => {
    const abort = start();
    return () => abort.abort();
  }, [repoId, gitRef, path]);

  useEffect(() => {
    if (!result) return;
    const text = result.lines.map((l) => l.text).join('\n');
    setHtml(escapeHtml(text).split('\n'));
    const lang = languageFor(path);
    if (!lang) return;
    let cancelled = false;
    loadHighlighter().then((hljs) => {
      if (!cancelled)
        setHtml(splitHighlightedLines(hljs.highlight(text, { language: lang, ignoreIllegals: true }).value));
    });
    return () => {
      cancelled = true;
    };
  }, [result]);

  return (
    <section class="card blame-view" aria-label={`Blame of ${path}`}>
      <Breadcrumbs path={path} />
      <div class="view-tabs">
        <button type="button" class="link" onClick={() => navigate({ view: null })}>
          ← File
        </button>
        <h3 class="view-title">Blame</h3>
      </div>
      {controller && (
        <div class="progress" data-testid="blame-progress">
          <span class="muted">
            {progress
              ? `${progress.linesDone} of ${progress.totalLines} lines attributed · ${progress.versionsFetched} old versions fetched in ${progress.requests} requests`
              : 'Reading the file’s history…'}
          </span>
          <button type="button" class="secondary" onClick={() => controller.abort()}>
            Cancel
          </button>
        </div>
      )}
      {error && (
        <div class="error" role="alert">
          <strong>{error.message}</strong>
          <p class="muted">Error code: {error.code}</p>
          <button type="button" class="secondary" onClick={() => start()}>
            Try again
          </button>
        </div>
      )}
      {result && html && (
        <>
          <p class="muted" data-testid="blame-summary">
            {Object.keys(result.commits).length} commits · {result.versionsFetched} old versions fetched in{' '}
            {result.requests} requests
          </p>
          <table class="blame" data-testid="blame">
            <tbody>
              {result.lines.map((line, i) => {
                const c = result.commits[line.commit];
                const first = i === 0 || result.lines[i - 1].commit !== line.commit;
                return (
                  <tr
                    key={i}
                    class={first ? 'blame-first' : undefined}
                    data-commit={line.commit}
                    data-orig-line={line.origLine}
                  >
                    <td class="blame-commit">
                      {first && (
                        <button
                          type="button"
                          class="link"
                          title={`${c.author.name}, ${formatCommitDate(c.author.timestamp)}`}
                          onClick={() => navigate({ commit: line.commit })}
                        >
                          <code>{line.commit.slice(0, 8)}</code> {firstLine(c.message)}
                        </button>
                      )}
                    </td>
                    <td class="blame-ln muted">{i + 1}</td>
                    <td class="blame-code" dangerouslySetInnerHTML={{ __html: html[i] ?? '' }} />
                  </tr>
                );
              })}
            </tbody>
          </table>
        </>
      )}
    </section>
  );
}
