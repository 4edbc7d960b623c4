import { useEffect, useMemo, useState } from 'preact/hooks';
import type { FileContent } from '../../workers/api.ts';
import { formatBytes } from '../format.ts';
import { gitClient, type RemoteOperationError } from '../gitClient.ts';
import { escapeHtml, languageFor, loadHighlighter, splitHighlightedLines } from '../highlight.ts';
import { parseLineAnchor } from '../route.ts';
import { Breadcrumbs } from './Breadcrumbs.tsx';

const IMAGE_TYPES: Record<string, string> = {
  png: 'image/png',
  jpg: 'image/jpeg',
  jpeg: 'image/jpeg',
  gif: 'image/gif',
  webp: 'image/webp',
  svg: 'image/svg+xml',
  ico: 'image/x-icon',
  avif: 'image/avif',
};
// Above this, highlighting and rendering every line would stall the page: offer a download instead.
const LARGE_FILE = 1024 * 1024;

export function FileView({ repoId, gitRef, path }: { repoId: string; gitRef: string; path: string }) {
  const [file, setFile] = useState<FileContent | null>(null);
  const [error, setError] = useState<{ message: string; code: string } | null>(null);
  const [showLarge, setShowLarge] = useState(false);

  useEffect(() => {
    setFile(null);
    setError(null);
    setShowLarge(false);
    const abort = new AbortController();
    gitClient
      .readFile(repoId, gitRef, path, undefined, abort.signal)
      .then(setFile)
      .catch((err: RemoteOperationError) => setError({ message: err.message, code: err.code }));
    return () => abort.abort();
  }, [repoId, gitRef, path]);

  const name = path.slice(path.lastIndexOf('/') + 1);
  const ext = name.includes('.') ? name.slice(name.lastIndexOf('.') + 1).toLowerCase() : '';
  const download = useMemo(
    () => (file ? URL.createObjectURL(new Blob([file.bytes as BlobPart])) : null),
    [file],
  );
  useEffect(() => () => void (download && URL.revokeObjectURL(download)), [download]);

  return (
    <section class="card file-view" aria-label={`File ${path}`}>
      <Breadcrumbs path={path} />
      {error && (
        <div class="error" role="alert" data-testid="file-error">
          <strong>{error.message}</strong>
          <p class="muted">Error code: {error.code}</p>
        </div>
      )}
      {!file && !error && <p class="muted">Reading {name}…</p>}
      {file && (
        <>
          <div class="file-meta muted">
            <span>{formatBytes(file.size)}</span>
            {file.mode === '100755' && <span class="badge">exec</span>}
            {file.mode === '120000' && <span class="badge">symlink</span>}
            <code>{file.oid.slice(0, 10)}</code>
            {download && (
              <a href={download} download={name}>
                Download
              </a>
            )}
          </div>
          {file.binary ? (
            IMAGE_TYPES[ext] ? (
              <img
                class="preview"
                alt={name}
                src={URL.createObjectURL(new Blob([file.bytes as BlobPart], { type: IMAGE_TYPES[ext] }))}
              />
            ) : (
              <p class="muted">Binary file, not shown. Use Download to save it.</p>
            )
          ) : file.size > LARGE_FILE && !showLarge ? (
            <p class="muted">
              This file is {formatBytes(file.size)}.{' '}
              <button type="button" class="link" onClick={() => setShowLarge(true)}>
                Show it anyway
              </button>
            </p>
          ) : (
            <CodeLines text={new TextDecoder().decode(file.bytes)} path={path} />
          )}
        </>
      )}
    </section>
  );
}

function CodeLines({ text, path }: { text: string; path: string }) {
  const [lines, setLines] = useState<string[]>(() => escapeHtml(text).split('\n'));
  const [range, setRange] = useState(() => parseLineAnchor(location.hash));

  useEffect(() => {
    setLines(escapeHtml(text).split('\n'));
    const lang = languageFor(path);
    let cancelled = false;
    loadHighlighter().then((hljs) => {
      if (cancelled) return;
      const html = lang
        ? hljs.highlight(text, { language: lang, ignoreIllegals: true }).value
        : escapeHtml(text);
      setLines(splitHighlightedLines(html));
    });
    return () => {
      cancelled = true;
    };
  }, [text, path]);

  useEffect(() => {
    const onHash = () => setRange(parseLineAnchor(location.hash));
    window.addEventListener('hashchange', onHash);
    return () => window.removeEventListener('hashchange', onHash);
  }, []);

  useEffect(() => {
    if (range) document.getElementById(`L${range.from}`)?.scrollIntoView({ block: 'center' });
  }, [range === null, lines.length]);

  // A trailing newline ends the last line; it does not start an empty one.
  const shown = text.endsWith('\n') ? lines.slice(0, -1) : lines;

  function select(e: MouseEvent, n: number) {
    e.preventDefault();
    const next =
      e.shiftKey && range
        ? { from: Math.min(range.from, n), to: Math.max(range.from, n) }
        : { from: n, to: n };
    const hash = next.from === next.to ? `#L${next.from}` : `#L${next.from}-L${next.to}`;
    history.replaceState(null, '', `${location.pathname}${location.search}${hash}`);
    setRange(next);
  }

  return (
    <pre class="code" data-testid="file-content">
      {shown.map((html, i) => {
        const n = i + 1;
        const selected = range && n >= range.from && n <= range.to;
        return (
          <span key={n} id={`L${n}`} class={selected ? 'line selected' : 'line'}>
            {/* biome-ignore lint/a11y/useAnchorContent: the number is drawn by CSS (attr) so copied text stays code; aria-label names it */}
            <a
              class="ln"
              href={`#L${n}`}
              data-line={n}
              aria-label={`Line ${n}`}
              onClick={(e) => select(e, n)}
            />
            <span class="lc" dangerouslySetInnerHTML={{ __html: html }} />
            {'\n'}
          </span>
        );
      })}
    </pre>
  );
}
