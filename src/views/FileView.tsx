import { useEffect, useRef, useState } from 'preact/hooks';
import type { FileContent } from '../../workers/engine/index.ts';
import { askConfirm, askText } from '../ask.ts';
import { withToken } from '../auth/withToken.ts';
import { focusIfLost } from '../focus.ts';
import { formatBytes } from '../format.ts';
import { type BloblessError, gitClient } from '../gitClient.ts';
import { escapeHtml, languageFor, loadHighlighter, splitHighlightedLines } from '../highlight.ts';
import { navigate, parseLineAnchor, parseRoute, routeHref } from '../route.ts';
import { Breadcrumbs } from './Breadcrumbs.tsx';
import { CopyButton } from './CopyButton.tsx';
import { EmbedButton } from './EmbedButton.tsx';
import { imageType, isMarkdown } from './imageTypes.ts';
import { MarkdownView } from './MarkdownView.tsx';

// Above this, highlighting and rendering every line would stall the page: offer a download instead.
const LARGE_FILE = 1024 * 1024;
// Long lines scroll sideways by default (as code is written); wrapping is asked for, and remembered.
const WRAP_KEY = 'blobless.wrap';

/** Renames a file of the working tree (asked in a dialog), then shows the working tree's changes. */
async function renameFile(repoId: string, path: string): Promise<void> {
  const to = await askText({
    title: `Rename ${path}`,
    label: 'New path, from the repository root',
    initial: path,
    confirm: 'Rename',
    check: (v) => (v === path ? 'That is its name already.' : null),
  });
  if (!to) return;
  await gitClient.repo(repoId).renameWorktreeFile({ from: path, to: to });
  navigate({ path: '', view: 'changes' });
}

/** Deletes a file from the working tree, after asking; the deletion is a change to stage and commit. */
async function deleteFile(repoId: string, path: string): Promise<void> {
  const sure = await askConfirm({
    title: `Delete ${path}?`,
    message: 'It is removed from the working tree; the deletion is committed when you stage and commit it.',
    confirm: 'Delete',
    danger: true,
  });
  if (!sure) return;
  await gitClient.repo(repoId).deleteWorktreeFile({ path: path });
  navigate({ path: '', view: 'changes' });
}

export function FileView({
  repoId,
  repoUrl,
  gitRef,
  path,
  commit,
}: {
  repoId: string;
  /** For the Embed snippet, which reads the file from its remote. */
  repoUrl: string;
  gitRef: string;
  path: string;
  /** The commit `gitRef` names now, for permalinks; absent until it is known. */
  commit?: string;
}) {
  // What was read is kept with the file it was read for: when the path changes, the first render (before
  // the effect asks for the new file) must not show the previous file's bytes under the new name, where
  // Download would save them as the new file and a reader would take them for it.
  const shown = `${repoId}\0${gitRef}\0${path}`;
  const [read, setRead] = useState<
    { of: string; file: FileContent } | { of: string; error: { message: string; code: string } } | null
  >(null);
  const file = read?.of === shown && 'file' in read ? read.file : null;
  const error = read?.of === shown && 'error' in read ? read.error : null;
  const [showLarge, setShowLarge] = useState(false);
  const [source, setSource] = useState(false);
  const [wrap, setWrap] = useState(() => !!localStorage.getItem(WRAP_KEY));
  const heading = useRef<HTMLElement>(null);

  useEffect(() => {
    setShowLarge(false);
    const abort = new AbortController();
    withToken(() => gitClient.repo(repoId).readFile({ ref: gitRef, path }, { signal: abort.signal }))
      // A read answered after the view moved on must not replace the newer one's answer.
      .then((f) => {
        if (!abort.signal.aborted) setRead({ of: shown, file: f });
      })
      .catch((err: BloblessError) => {
        if (!abort.signal.aborted) setRead({ of: shown, error: { message: err.message, code: err.code } });
      });
    return () => abort.abort();
  }, [shown]);

  const name = path.slice(path.lastIndexOf('/') + 1);
  const markdown = isMarkdown(path);
  // A file opened from a row of its folder (which is gone now) takes focus: its view is announced.
  useEffect(() => focusIfLost(heading.current), [shown]);
  const image = imageType(path);

  return (
    <section class="card file-view" aria-label={`File ${path}`} ref={heading} tabIndex={-1}>
      <Breadcrumbs path={path} />
      <div class="file-actions" role="toolbar" aria-label="File actions">
        {markdown && file && !file.binary && (
          <fieldset class="toggle" aria-label="Show as">
            <button
              type="button"
              class={source ? 'secondary small' : 'small'}
              aria-pressed={!source}
              onClick={() => setSource(false)}
            >
              Preview
            </button>
            <button
              type="button"
              class={source ? 'small' : 'secondary small'}
              aria-pressed={source}
              onClick={() => setSource(true)}
            >
              Code
            </button>
          </fieldset>
        )}
        <button
          type="button"
          class="small"
          data-testid="edit-file"
          title="Edit this file in the working tree"
          onClick={() => navigate({ view: 'edit' })}
        >
          Edit
        </button>
        <button type="button" class="secondary small" onClick={() => navigate({ view: 'history' })}>
          History
        </button>
        <button type="button" class="secondary small" onClick={() => navigate({ view: 'blame' })}>
          Blame
        </button>
        <CopyButton text={path} label="Copy path" />
        {commit && <PermalinkButton commit={commit} repoUrl={repoUrl} />}
        <EmbedButton repoId={repoId} repoUrl={repoUrl} gitRef={gitRef} commit={commit} path={path} />
        {file && !file.binary && (
          <button
            type="button"
            class="secondary small"
            aria-pressed={wrap}
            data-testid="wrap-lines"
            onClick={() => {
              localStorage.setItem(WRAP_KEY, wrap ? '' : '1');
              setWrap(!wrap);
            }}
          >
            Wrap lines
          </button>
        )}
        <details class="menu" data-testid="file-menu">
          <summary class="secondary small">More</summary>
          <div class="menu-items">
            <button type="button" class="link" onClick={() => void renameFile(repoId, path)}>
              Rename…
            </button>
            <button type="button" class="link danger-text" onClick={() => void deleteFile(repoId, path)}>
              Delete…
            </button>
          </div>
        </details>
      </div>
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
            <code data-testid="file-oid">{file.oid.slice(0, 10)}</code>
            <button
              type="button"
              class="link"
              data-testid="file-download"
              onClick={() => downloadBytes(file.bytes, name)}
            >
              Download
            </button>
          </div>
          {image && file.mode !== '120000' && <ImagePreview bytes={file.bytes} type={image} name={name} />}
          {file.binary ? (
            !image && <p class="muted">Binary file, not shown. Use Download to save it.</p>
          ) : file.size > LARGE_FILE && !showLarge ? (
            <p class="muted">
              This file is {formatBytes(file.size)}.{' '}
              <button type="button" class="link" onClick={() => setShowLarge(true)}>
                Show it anyway
              </button>
            </p>
          ) : markdown && !source ? (
            <MarkdownView
              repoId={repoId}
              gitRef={gitRef}
              path={path}
              text={new TextDecoder().decode(file.bytes)}
            />
          ) : (
            <CodeLines text={new TextDecoder().decode(file.bytes)} path={path} wrap={wrap} />
          )}
        </>
      )}
    </section>
  );
}

/**
 * Repository bytes as an image. `<img>` never runs an SVG's script, and the blob URL is revoked as soon
 * as the image has loaded, so "open image in new tab" cannot turn it into a document of this origin (where
 * remembered tokens live); the page's CSP would refuse its script even then.
 */
function ImagePreview({ bytes, type, name }: { bytes: Uint8Array; type: string; name: string }) {
  const [src, setSrc] = useState<string | null>(null);
  useEffect(() => {
    const url = URL.createObjectURL(new Blob([bytes as BlobPart], { type }));
    setSrc(url);
    return () => URL.revokeObjectURL(url);
  }, [bytes, type]);
  if (!src) return null;
  const revoke = () => URL.revokeObjectURL(src);
  return (
    <img class="preview" data-testid="file-preview" alt={name} src={src} onLoad={revoke} onError={revoke} />
  );
}

/**
 * Saves a file through a short-lived link. The bytes go out as application/octet-stream, which a browser
 * downloads and never renders, so a repository's HTML or SVG cannot become a page of this origin.
 */
function downloadBytes(bytes: Uint8Array, name: string): void {
  const url = URL.createObjectURL(new Blob([bytes as BlobPart], { type: 'application/octet-stream' }));
  const link = document.createElement('a');
  link.href = url;
  link.download = name;
  link.click();
  // The navigation resolved the blob when click() parsed its URL (File API: blob URL entry), so the URL
  // may go now; the next task is enough to be safe in every engine.
  setTimeout(() => URL.revokeObjectURL(url));
}

function CodeLines({ text, path, wrap }: { text: string; path: string; wrap: boolean }) {
  const [lines, setLines] = useState<string[]>(() => escapeHtml(text).split('\n'));
  const [range, setRange] = useState(() => parseLineAnchor(location.hash));

  useEffect(() => {
    setLines(escapeHtml(text).split('\n'));
    const lang = languageFor(path);
    let cancelled = false;
    loadHighlighter().then(
      (hljs) => {
        if (cancelled) return;
        const html = lang
          ? hljs.highlight(text, { language: lang, ignoreIllegals: true }).value
          : escapeHtml(text);
        setLines(splitHighlightedLines(html));
      },
      // Without the highlighter, the plain escaped lines above stay.
      () => undefined,
    );
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
    // A region of its own: it scrolls both ways inside the window, so its horizontal scrollbar is always on
    // screen, and the keyboard scrolls it once focused (Tab); `l` selects lines from the keyboard.
    <section
      class="code-scroll"
      // biome-ignore lint/a11y/noNoninteractiveTabindex: a scrolling region is reached and scrolled from the keyboard (WCAG 2.1.1)
      tabIndex={0}
      aria-label={`Contents of ${path.slice(path.lastIndexOf('/') + 1)}. Press l to select lines.`}
    >
      <pre class={wrap ? 'code wrap' : 'code'} data-testid="file-content">
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
                tabIndex={-1}
                aria-label={`Line ${n}`}
                onClick={(e) => select(e, n)}
              />
              <span class="lc" dangerouslySetInnerHTML={{ __html: html }} />
              {'\n'}
            </span>
          );
        })}
      </pre>
    </section>
  );
}

/**
 * Copies this view's address with the commit id in place of the branch, and the selected lines: the
 * repository by its remote URL, so the link opens the same lines in any browser.
 */
function PermalinkButton({ commit, repoUrl }: { commit: string; repoUrl: string }) {
  return (
    <CopyButton
      text={() =>
        `${location.origin}${routeHref({ ...parseRoute(location.search), repo: repoUrl, ref: commit })}${location.hash}`
      }
      testId="copy-permalink"
      label="Copy permalink"
      title="Copy a link to this file at this commit, with the selected lines"
    />
  );
}
