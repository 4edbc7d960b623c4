import { useContext, useEffect, useRef, useState } from 'preact/hooks';
import { gitClient } from '../gitClient.ts';
import { loadHighlighter } from '../highlight.ts';
import { decodedHash, renderMarkdown, resolveRepoPath } from '../markdown/renderMarkdown.ts';
import { ANCHOR_PREFIX, HELD_ATTRIBUTE, inPageAnchor, loadHeldResources } from '../markdown/userContent.ts';
import { navigate, routeHref } from '../route.ts';
import { CurrentRepo } from './currentRepo.ts';
import { imageType } from './imageTypes.ts';

/**
 * A Markdown file of the repo, rendered and sanitized. Relative links open inside the app at the same
 * commit; relative images are read from the repo (fetching their blobs if needed) and shown as blob
 * URLs, revoked when the view goes. In a repo that needed a token, images from other sites wait for
 * "Load external images": loading them would tell those sites who reads a private README, and when.
 */
export function MarkdownView({
  repoId,
  gitRef,
  path,
  text,
}: {
  repoId: string;
  gitRef: string;
  path: string;
  text: string;
}) {
  const [html, setHtml] = useState<string | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [held, setHeld] = useState(false);
  const body = useRef<HTMLDivElement>(null);
  // Unknown (no stored repo around this view) counts as private: holding is the safe side.
  const holdExternal = useContext(CurrentRepo)?.needsToken ?? true;

  useEffect(() => {
    let cancelled = false;
    setHtml(null);
    setError(null);
    renderMarkdown(text, {
      link: (href) => {
        const target = resolveRepoPath(path, href);
        if (!target) return null;
        const hash = target.hash ? inPageAnchor(target.hash) : '';
        return routeHref({ path: target.path, commit: null, view: null }) + hash;
      },
      holdExternal,
      // The page's h1 names the repository: the document's headings sit one level below it.
      headingShift: 1,
    })
      .then((h) => !cancelled && setHtml(h))
      .catch((err: Error) => !cancelled && setError(err.message));
    return () => {
      cancelled = true;
    };
  }, [text, path, holdExternal]);

  useEffect(() => {
    const root = body.current;
    if (!root || html === null) return;
    const urls: string[] = [];
    const abort = new AbortController();
    for (const img of root.querySelectorAll<HTMLImageElement>('img[data-repo-src]')) {
      const target = resolveRepoPath(path, img.dataset.repoSrc ?? '');
      const type = target && imageType(target.path);
      if (!target || !type) continue;
      gitClient
        .repo(repoId)
        .readFile({ ref: gitRef, path: target.path }, { signal: abort.signal })
        .then((file) => {
          const url = URL.createObjectURL(new Blob([file.bytes as BlobPart], { type }));
          urls.push(url);
          // Revoked once drawn, so the URL cannot be opened as a document of this origin.
          const revoke = () => URL.revokeObjectURL(url);
          img.addEventListener('load', revoke, { once: true });
          img.addEventListener('error', revoke, { once: true });
          img.src = url;
        })
        .catch(() => img.setAttribute('data-missing', 'true'));
    }
    const blocks = root.querySelectorAll<HTMLElement>('pre code[class*="language-"]');
    if (blocks.length) {
      loadHighlighter().then((hljs) => {
        for (const block of blocks) {
          const lang = /language-(\S+)/.exec(block.className)?.[1];
          if (lang && hljs.getLanguage(lang)) hljs.highlightElement(block);
        }
      });
    }
    setHeld(root.querySelector(`[${HELD_ATTRIBUTE}]`) !== null);
    // Only the README's own anchors: an address's hash may name one of the app's ids, or not decode at all.
    const hash = decodedHash(location.hash);
    if (hash?.startsWith(ANCHOR_PREFIX)) document.getElementById(hash)?.scrollIntoView();
    return () => {
      abort.abort();
      for (const url of urls) URL.revokeObjectURL(url);
    };
  }, [html, repoId, gitRef, path]);

  // Links inside the repo stay in the app: a history entry, not a page load. Only the renderer marks them
  // (a README's own data-* attributes are dropped), and only an address of this app is followed so.
  function onClick(e: MouseEvent) {
    const a = (e.target as HTMLElement).closest?.('a[data-repo-link]') as HTMLAnchorElement | null;
    if (!a || e.button !== 0 || e.metaKey || e.ctrlKey || e.shiftKey) return;
    const url = new URL(a.href);
    if (url.origin !== location.origin || url.pathname !== location.pathname) return;
    e.preventDefault();
    history.pushState(null, '', url.pathname + url.search + url.hash);
    navigate({}, { replace: true, hash: url.hash });
  }

  function loadExternal() {
    if (body.current) loadHeldResources(body.current);
    setHeld(false);
  }

  if (error) return <p class="error">Could not render this Markdown: {error}</p>;
  if (html === null) return <p class="muted">Rendering…</p>;
  return (
    <>
      {held && (
        <p class="muted held-notice" data-testid="external-held">
          This repository needed a token, so images from other sites are not loaded: they would learn who
          reads it.{' '}
          <button type="button" class="link" data-testid="load-external" onClick={loadExternal}>
            Load external images
          </button>
        </p>
      )}
      {/* biome-ignore lint/a11y/useKeyWithClickEvents: the click only intercepts links, which keep their own keys */}
      {/* biome-ignore lint/a11y/noStaticElementInteractions: one delegated handler for the links inside */}
      <div
        class="markdown-body"
        data-testid="markdown"
        ref={body}
        onClick={onClick}
        // Sanitized by DOMPurify in renderMarkdown.
        dangerouslySetInnerHTML={{ __html: html }}
      />
    </>
  );
}
