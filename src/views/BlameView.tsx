import { useEffect, useRef, useState } from 'preact/hooks';
import type { BlameLine, BlameProgress, BlameResult, CommitSummary } from '../../workers/engine/index.ts';
import { withToken } from '../auth/withToken.ts';
import { focusIfLost } from '../focus.ts';
import { firstLine, formatCommitDate } from '../format.ts';
import { type BloblessError, gitClient } from '../gitClient.ts';
import { escapeHtml, languageFor, loadHighlighter, splitHighlightedLines } from '../highlight.ts';
import { navigate, routeHref } from '../route.ts';
import { Breadcrumbs } from './Breadcrumbs.tsx';

/**
 * The lines attributed so far, from blame's progress reports (a line not attributed yet has a null
 * `commit`), and the commits they name. Shown as they come, then replaced by the result.
 */
type PartialBlame = {
  lines: (Omit<BlameLine, 'commit'> & { commit: string | null })[];
  commits: Record<string, CommitSummary>;
};

/** A progress report folded into what is shown: the file's lines once, then each report's attributions. */
function withReport(partial: PartialBlame | null, p: BlameProgress): PartialBlame | null {
  if (!partial && !p.fileLines) return null;
  const lines = p.fileLines
    ? p.fileLines.map((text) => ({ text, commit: null, origLine: 0, origPath: '' }))
    : partial!.lines;
  if (!p.found?.length && !p.fileLines) return partial;
  const next = p.found?.length ? [...lines] : lines;
  for (const f of p.found ?? []) next[f.line] = { ...next[f.line], ...f };
  return { lines: next, commits: { ...partial?.commits, ...p.commits } };
}

/** git blame for one file, the full width; the old versions' blobs arrive in a few batches, with progress and cancel. */
export function BlameView({ repoId, gitRef, path }: { repoId: string; gitRef: string; path: string }) {
  const [result, setResult] = useState<BlameResult | null>(null);
  const [progress, setProgress] = useState<BlameProgress | null>(null);
  const [partial, setPartial] = useState<PartialBlame | null>(null);
  const [error, setError] = useState<{ message: string; code: string } | null>(null);
  const [controller, setController] = useState<AbortController | null>(null);
  const [html, setHtml] = useState<string[] | null>(null);
  const heading = useRef<HTMLHeadingElement>(null);

  function start() {
    const abort = new AbortController();
    setController(abort);
    setResult(null);
    setError(null);
    setProgress(null);
    setPartial(null);
    const onProgress = (p: BlameProgress) => {
      if (abort.signal.aborted) return;
      setProgress(p);
      setPartial((shown) => withReport(shown, p));
    };
    withToken(() => gitClient.repo(repoId).blame({ ref: gitRef, path }, { onProgress, signal: abort.signal }))
      .then(setResult)
      .catch(
        (err: BloblessError) => !abort.signal.aborted && setError({ message: err.message, code: err.code }),
      )
      .finally(() => setController(null));
    return abort;
  }

  useEffect(() => {
    const abort = start();
    focusIfLost(heading.current);
    return () => abort.abort();
  }, [repoId, gitRef, path]);

  const lines = result?.lines ?? partial?.lines ?? null;
  const commits = result?.commits ?? partial?.commits ?? {};
  const text = lines ? lines.map((l) => l.text).join('\n') : null;

  useEffect(() => {
    if (text === null) return;
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
  }, [text]);

  return (
    <section class="card blame-view" aria-labelledby="blame-title">
      <Breadcrumbs path={path} />
      <div class="view-tabs">
        <a
          href={routeHref({ view: null })}
          onClick={(e) => {
            e.preventDefault();
            navigate({ view: null });
          }}
        >
          ← File
        </a>
        <h2 class="view-title" id="blame-title" ref={heading} tabIndex={-1}>
          Blame of {path.slice(path.lastIndexOf('/') + 1)}
        </h2>
      </div>
      {controller && (
        <div class="progress" data-testid="blame-progress" role="status">
          <span class="muted">
            {progress
              ? `${progress.linesDone} of ${progress.totalLines} lines attributed · ${progress.versionsFetched} old versions fetched in ${progress.requests} requests`
              : 'Reading the file’s history…'}
          </span>
          <button type="button" class="secondary small" onClick={() => controller.abort()}>
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
      {result && (
        <p class="muted" data-testid="blame-summary">
          {Object.keys(result.commits).length} commits · {result.versionsFetched} old versions fetched in{' '}
          {result.requests} requests
        </p>
      )}
      {lines && html && (
        <section
          class="blame-scroll"
          // biome-ignore lint/a11y/noNoninteractiveTabindex: a scrolling region is reached and scrolled from the keyboard (WCAG 2.1.1)
          tabIndex={0}
          aria-label={`Blame of ${path}`}
        >
          <table class="blame" data-testid={result ? 'blame' : 'blame-partial'}>
            <tbody>
              {lines.map((line, i) => {
                const c = line.commit ? commits[line.commit] : undefined;
                const first = i === 0 || lines[i - 1].commit !== line.commit;
                return (
                  <tr
                    key={i}
                    class={first ? 'blame-first' : undefined}
                    data-commit={line.commit ?? ''}
                    data-orig-line={line.origLine}
                  >
                    <td class="blame-commit">
                      {first && line.commit && (
                        <a
                          href={routeHref({ commit: line.commit })}
                          title={
                            c ? `${c.author.name}, ${formatCommitDate(c.author.timestamp)}` : line.commit
                          }
                          onClick={(e) => {
                            e.preventDefault();
                            navigate({ commit: line.commit! });
                          }}
                        >
                          <code>{line.commit.slice(0, 8)}</code> {c ? firstLine(c.message) : ''}
                        </a>
                      )}
                      {first && !line.commit && <span class="muted">…</span>}
                    </td>
                    <td class="blame-date muted">{first && c ? formatCommitDate(c.author.timestamp) : ''}</td>
                    <td class="blame-ln muted" data-line={i + 1} />
                    <td class="blame-code" dangerouslySetInnerHTML={{ __html: html[i] ?? '' }} />
                  </tr>
                );
              })}
            </tbody>
          </table>
        </section>
      )}
    </section>
  );
}
