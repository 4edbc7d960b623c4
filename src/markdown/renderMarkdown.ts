// GitHub-flavoured Markdown from a repository, made safe to show: marked (GFM: tables, task lists,
// autolinks, strikethrough) then DOMPurify, so no script, inline handler, `javascript:` URL, frame or form
// from a repository runs or submits. Both are loaded with the first Markdown file shown, never up front.

import type { Marked } from 'marked';

type Purify = typeof import('dompurify').default;

let loading: Promise<{ marked: Marked; purify: Purify }> | null = null;

function load() {
  loading ??= Promise.all([import('marked'), import('dompurify')]).then(([m, d]) => {
    const marked = new m.Marked({ gfm: true, breaks: false });
    const purify = d.default;
    return { marked, purify };
  });
  return loading;
}

/**
 * GitHub's heading anchors: lower case, spaces to dashes, punctuation dropped, and -1, -2… for repeats.
 * Prefixed as GitHub does (`user-content-`), so a heading named like one of the app's ids cannot shadow it.
 */
export function slugger(): (text: string) => string {
  const seen = new Map<string, number>();
  return (text) => {
    const base = text
      .trim()
      .toLowerCase()
      .replace(/[^\p{L}\p{N}\p{M}\p{Pc} -]/gu, '')
      .replace(/ /g, '-');
    const n = seen.get(base) ?? 0;
    seen.set(base, n + 1);
    return n === 0 ? base : `${base}-${n}`;
  };
}

export const ANCHOR_PREFIX = 'user-content-';

export interface MarkdownLinks {
  /** A relative link's target inside the repo, as an address of the app; null leaves the link as written. */
  link(href: string): string | null;
}

/**
 * Sanitized HTML for `source`. Relative links go through `links.link`; relative images keep their path in
 * `data-repo-src` (with no `src`), for the caller to load from the repo as a blob.
 */
export async function renderMarkdown(source: string, links: MarkdownLinks): Promise<string> {
  const { marked, purify } = await load();
  const raw = await marked.parse(source, { async: true });
  const slug = slugger();
  const fragment = purify.sanitize(raw, {
    RETURN_DOM_FRAGMENT: true,
    FORBID_TAGS: ['style', 'form', 'iframe', 'object', 'embed', 'frame', 'frameset', 'base', 'meta', 'link'],
    FORBID_ATTR: ['style', 'formaction', 'srcset'],
  }) as DocumentFragment;

  for (const h of fragment.querySelectorAll('h1, h2, h3, h4, h5, h6')) {
    const id = ANCHOR_PREFIX + slug(h.textContent ?? '');
    h.id = id;
    const anchor = document.createElement('a');
    anchor.className = 'heading-anchor';
    anchor.href = `#${id}`;
    anchor.setAttribute('aria-label', `Link to ${h.textContent ?? 'this heading'}`);
    anchor.textContent = '#';
    h.prepend(anchor);
  }
  for (const a of fragment.querySelectorAll<HTMLAnchorElement>('a[href]')) {
    const href = a.getAttribute('href') ?? '';
    if (a.classList.contains('heading-anchor')) continue;
    if (href.startsWith('#')) {
      a.setAttribute('href', `#${ANCHOR_PREFIX}${href.slice(1)}`);
    } else if (isAbsolute(href)) {
      a.target = '_blank';
      a.rel = 'noopener noreferrer nofollow';
    } else {
      const target = links.link(href);
      if (target) a.setAttribute('href', target);
      a.dataset.repoLink = 'true';
    }
  }
  for (const img of fragment.querySelectorAll<HTMLImageElement>('img[src]')) {
    const src = img.getAttribute('src') ?? '';
    if (isAbsolute(src)) continue;
    img.removeAttribute('src');
    img.dataset.repoSrc = src;
  }
  for (const input of fragment.querySelectorAll<HTMLInputElement>('input[type="checkbox"]')) {
    input.disabled = true;
  }
  const holder = document.createElement('div');
  holder.append(fragment);
  return holder.innerHTML;
}

function isAbsolute(url: string): boolean {
  return /^[a-z][a-z0-9+.-]*:/i.test(url) || url.startsWith('//');
}

/** `target` (a link or image in a file at `fromPath`) as a path in the repo, or null when it leaves it. */
export function resolveRepoPath(fromPath: string, target: string): { path: string; hash: string } | null {
  const hashAt = target.indexOf('#');
  const hash = hashAt >= 0 ? target.slice(hashAt) : '';
  let rel = hashAt >= 0 ? target.slice(0, hashAt) : target;
  const queryAt = rel.indexOf('?');
  if (queryAt >= 0) rel = rel.slice(0, queryAt);
  try {
    rel = decodeURIComponent(rel);
  } catch {
    return null;
  }
  const parts = rel.startsWith('/') ? [] : fromPath.split('/').slice(0, -1);
  for (const part of rel.split('/')) {
    if (part === '' || part === '.') continue;
    if (part === '..') {
      if (parts.length === 0) return null;
      parts.pop();
    } else parts.push(part);
  }
  return { path: parts.join('/'), hash };
}
