import { useEffect, useMemo, useRef, useState } from 'preact/hooks';
import { formatBytes } from '../format.ts';
import { escapeHtml, languageFor, loadHighlighter, splitHighlightedLines } from '../highlight.ts';
import { renderMarkdown, resolveRepoPath } from '../markdown/renderMarkdown.ts';
import { type BloblessError, type MinimalEntry, type MinimalRead, readMinimal } from './embedClient.ts';
import type { HostChannel } from './hostChannel.ts';
import { type EmbedParams, formatLines, type LineRange } from './params.ts';

// Above this, highlighting every line would stall the host page's frame: the raw link is offered instead.
const LARGE_FILE = 1024 * 1024;

type Place = Pick<EmbedParams, 'repo' | 'ref' | 'path' | 'lines'>;

function isMarkdown(path: string): boolean {
  return /\.(md|markdown|mdown|mkd)$/i.test(path);
}

export function Widget({ initial, channel }: { initial: EmbedParams; channel: HostChannel }) {
  const [place, setPlace] = useState<Place>(initial);
  const [read, setRead] = useState<MinimalRead | null>(null);
  const [error, setError] = useState<{ code: string; message: string } | null>(null);
  const root = useRef<HTMLDivElement>(null);

  useEffect(
    () =>
      channel.onNavigate((request) =>
        setPlace((p) => ({
          ...p,
          ref: request.ref ?? p.ref,
          path: request.path ?? p.path,
          // A new file starts without the old file's range unless one is given.
          lines: request.lines !== undefined ? request.lines : request.path !== undefined ? null : p.lines,
        })),
      ),
    [channel],
  );

  useEffect(() => {
    if (!place.repo) {
      const missing = {
        code: 'INVALID_URL',
        message: 'No repository given: add ?repo=<git URL> to the address.',
      };
      setError(missing);
      channel.post({ type: 'error', ...missing });
      return;
    }
    setRead(null);
    setError(null);
    const abort = new AbortController();
    readMinimal(place.repo, place.ref, place.path, abort.signal)
      .then((result) => {
        setRead(result);
        channel.post({
          type: 'loaded',
          repo: result.url,
          ref: place.ref || result.refName || 'HEAD',
          commit: result.commit,
          path: result.path,
        });
      })
      .catch((err: unknown) => {
        if (abort.signal.aborted) return;
        // What the worker throws always has a code; anything else is a bug here.
        const known = err as Partial<BloblessError> | undefined;
        const e =
          typeof known?.code === 'string'
            ? { code: known.code, message: String(known.message) }
            : { code: 'INTERNAL', message: String((err as Error)?.message ?? err) };
        setError(e);
        channel.post({ type: 'error', ...e });
      });
    return () => abort.abort();
  }, [place.repo, place.ref, place.path]);

  // The host sizes the iframe to the content: report the content's height whenever it changes.
  useEffect(() => {
    const el = root.current;
    if (!el) return;
    let last = -1;
    const report = () => {
      const height = Math.ceil(el.getBoundingClientRect().height);
      if (height === last) return;
      last = height;
      channel.post({ type: 'resize', height });
    };
    const observer = new ResizeObserver(report);
    observer.observe(el);
    report();
    return () => observer.disconnect();
  }, [channel]);

  const open = (path: string) => setPlace((p) => ({ ...p, path, lines: null }));

  return (
    <div class="widget" ref={root} data-testid="embed-root">
      <Header place={place} read={read} />
      {error && (
        <div class="embed-error" role="alert" data-testid="embed-error">
          <strong>{error.message}</strong>
          <span class="muted">Error code: {error.code}</span>
        </div>
      )}
      {!read && !error && (
        <p class="muted loading" data-testid="embed-loading">
          Reading {place.path || 'the repository'} from {hostOf(place.repo)}…
        </p>
      )}
      {read?.kind === 'folder' && <Listing read={read} onOpen={open} />}
      {read?.kind === 'file' && read.file && (
        <FileBody key={`${read.commit}:${read.path}`} read={read} lines={place.lines} />
      )}
    </div>
  );
}

function hostOf(url: string): string {
  try {
    return new URL(url).host;
  } catch {
    return url;
  }
}

function repoLabel(url: string): string {
  try {
    const u = new URL(url);
    return `${u.host}${u.pathname.replace(/\.git\/?$/, '').replace(/\/$/, '')}`;
  } catch {
    return url;
  }
}

/** The full app's deep link: it clones the repository (without file contents) and opens the place. */
function appLink(place: Place, read: MinimalRead | null): string {
  const url = new URL('./', location.href);
  url.searchParams.set('repo', read?.url ?? place.repo);
  const ref = place.ref || read?.refName?.replace(/^refs\/(heads|tags)\//, '');
  if (ref) url.searchParams.set('ref', ref);
  if (place.path) url.searchParams.set('path', place.path);
  if (place.lines) url.hash = `#L${place.lines.from}-L${place.lines.to}`;
  return url.href;
}

function Header({ place, read }: { place: Place; read: MinimalRead | null }) {
  const name = place.path ? place.path.slice(place.path.lastIndexOf('/') + 1) : repoLabel(place.repo);
  return (
    <header class="embed-header">
      <div class="embed-title">
        <span class="embed-name" data-testid="embed-name" title={place.path || '/'}>
          {name}
          {read?.kind === 'folder' && place.path ? '/' : ''}
        </span>
        <span class="muted embed-repo" title={place.repo}>
          {repoLabel(read?.url ?? place.repo)}
          {read && (
            <>
              {' @ '}
              <code data-testid="embed-commit" title={read.commit}>
                {read.commit.slice(0, 7)}
              </code>
            </>
          )}
        </span>
      </div>
      <nav class="embed-actions">
        <a href={appLink(place, read)} target="_blank" rel="noopener noreferrer" data-testid="embed-open">
          Open in Blobless
        </a>
      </nav>
    </header>
  );
}

function Listing({ read, onOpen }: { read: MinimalRead; onOpen: (path: string) => void }) {
  const entries = [...(read.entries ?? [])].sort(
    (a, b) => Number(b.type === 'tree') - Number(a.type === 'tree') || (a.name < b.name ? -1 : 1),
  );
  const parent = read.path.includes('/') ? read.path.slice(0, read.path.lastIndexOf('/')) : '';
  const icon = (e: MinimalEntry) => (e.type === 'tree' ? '▸' : e.type === 'commit' ? '⎘' : '·');
  return (
    <ul class="embed-listing" data-testid="embed-listing">
      {read.path && (
        <li>
          <button type="button" class="link" onClick={() => onOpen(parent)}>
            ..
          </button>
        </li>
      )}
      {entries.map((e) => (
        <li key={e.name}>
          {e.type === 'commit' ? (
            <span class="muted">
              {icon(e)} {e.name} <small>(submodule)</small>
            </span>
          ) : (
            <button
              type="button"
              class="link"
              data-name={e.name}
              onClick={() => onOpen(read.path ? `${read.path}/${e.name}` : e.name)}
            >
              {icon(e)} {e.name}
              {e.type === 'tree' ? '/' : ''}
            </button>
          )}
        </li>
      ))}
    </ul>
  );
}

function FileBody({ read, lines }: { read: MinimalRead; lines: LineRange | null }) {
  const file = read.file!;
  const [showAll, setShowAll] = useState(false);
  const [showLarge, setShowLarge] = useState(false);
  const [rendered, setRendered] = useState(isMarkdown(read.path) && !lines);
  const [copied, setCopied] = useState(false);
  // A range the host asks for is shown alone again, whatever the reader toggled before.
  useEffect(() => setShowAll(false), [lines?.from, lines?.to]);
  const text = useMemo(() => (file.binary ? '' : new TextDecoder().decode(file.bytes)), [file]);
  const raw = useMemo(
    () => URL.createObjectURL(new Blob([file.bytes as BlobPart], { type: 'text/plain;charset=utf-8' })),
    [file],
  );
  useEffect(() => () => URL.revokeObjectURL(raw), [raw]);

  const all = text.endsWith('\n') ? text.slice(0, -1).split('\n') : text.split('\n');
  const range =
    lines && lines.from <= all.length ? { from: lines.from, to: Math.min(lines.to, all.length) } : null;
  const only = range && !showAll;
  const shownText = only ? `${all.slice(range.from - 1, range.to).join('\n')}\n` : text;

  async function copy() {
    try {
      await navigator.clipboard.writeText(shownText);
    } catch {
      // A host that did not grant clipboard-write: the older way, through a selection.
      const area = document.createElement('textarea');
      area.value = shownText;
      document.body.append(area);
      area.select();
      document.execCommand('copy');
      area.remove();
    }
    setCopied(true);
    setTimeout(() => setCopied(false), 1500);
  }

  const tooLarge = file.size > LARGE_FILE && !showLarge;
  return (
    <>
      <div class="embed-toolbar">
        <span class="muted">
          {formatBytes(file.size)}
          {!file.binary && ` · ${all.length} lines`}
          {lines && !range && ` · lines ${formatLines(lines)} are past the end`}
        </span>
        <span class="embed-buttons">
          {range && !rendered && (
            <button
              type="button"
              class="link"
              data-testid="embed-toggle-range"
              onClick={() => setShowAll(!showAll)}
            >
              {showAll ? `Only lines ${formatLines(range)}` : 'Whole file'}
            </button>
          )}
          {isMarkdown(read.path) && (
            <button
              type="button"
              class="link"
              data-testid="embed-toggle-markdown"
              onClick={() => setRendered(!rendered)}
            >
              {rendered ? 'Source' : 'Rendered'}
            </button>
          )}
          {!file.binary && (
            <button type="button" class="link" data-testid="embed-copy" onClick={copy}>
              {copied ? 'Copied' : 'Copy'}
            </button>
          )}
          <a href={raw} target="_blank" rel="noopener noreferrer" data-testid="embed-raw">
            Raw
          </a>
        </span>
      </div>
      {file.binary ? (
        <p class="muted note">Binary file, not shown. Use Raw to see its bytes.</p>
      ) : tooLarge ? (
        <p class="muted note">
          This file is {formatBytes(file.size)}.{' '}
          <button type="button" class="link" onClick={() => setShowLarge(true)}>
            Show it anyway
          </button>
        </p>
      ) : rendered ? (
        <Markdown read={read} text={text} />
      ) : (
        <Code text={text} path={read.path} range={range} only={!!only} />
      )}
    </>
  );
}

/** Rendered and sanitized by the app's renderer; links into the repository open the app at this commit. */
function Markdown({ read, text }: { read: MinimalRead; text: string }) {
  const [html, setHtml] = useState<string | null>(null);
  const body = useRef<HTMLElement>(null);
  useEffect(() => {
    let live = true;
    renderMarkdown(text, {
      link: (href) => {
        const target = resolveRepoPath(read.path, href);
        if (!target) return null;
        const url = new URL('./', location.href);
        url.searchParams.set('repo', read.url);
        url.searchParams.set('ref', read.commit);
        if (target.path) url.searchParams.set('path', target.path);
        return url.href;
      },
    }).then((h) => live && setHtml(h));
    return () => {
      live = false;
    };
  }, [text, read.url, read.commit, read.path]);
  useEffect(() => {
    // Inside a frame a link would replace the widget: every link but one to an anchor of the file opens a new
    // tab. The renderer leaves no other kind of link (no area, no SVG a).
    for (const a of body.current?.querySelectorAll<HTMLAnchorElement>('a[href]') ?? []) {
      if (a.getAttribute('href')?.startsWith('#')) continue;
      a.target = '_blank';
      a.rel = 'noopener noreferrer';
    }
  }, [html]);
  if (html === null) return <p class="muted note">Rendering…</p>;
  return (
    <article
      class="markdown"
      ref={body}
      data-testid="embed-markdown"
      dangerouslySetInnerHTML={{ __html: html }}
    />
  );
}

function Code({
  text,
  path,
  range,
  only,
}: {
  text: string;
  path: string;
  range: LineRange | null;
  only: boolean;
}) {
  const [lines, setLines] = useState<string[]>(() => escapeHtml(text).split('\n'));
  useEffect(() => {
    setLines(escapeHtml(text).split('\n'));
    const lang = languageFor(path);
    if (!lang) return;
    let live = true;
    loadHighlighter().then((hljs) => {
      if (live)
        setLines(splitHighlightedLines(hljs.highlight(text, { language: lang, ignoreIllegals: true }).value));
    });
    return () => {
      live = false;
    };
  }, [text, path]);

  const count = text.endsWith('\n') ? lines.length - 1 : lines.length;
  const from = only && range ? range.from : 1;
  const to = only && range ? range.to : count;
  const numbered: { n: number; html: string }[] = [];
  for (let n = from; n <= to; n++) numbered.push({ n, html: lines[n - 1] ?? '' });
  return (
    <pre class="code" data-testid="embed-content">
      {numbered.map(({ n, html }) => {
        const marked = range && n >= range.from && n <= range.to && !only;
        return (
          <span key={n} class={marked ? 'line marked' : 'line'}>
            <span class="ln" data-line={n} aria-hidden="true" />
            <span class="lc" dangerouslySetInnerHTML={{ __html: html }} />
            {'\n'}
          </span>
        );
      })}
    </pre>
  );
}
