// The Markdown renderer proper, its own chunk with marked and DOMPurify: see renderMarkdown.ts, which
// loads it with the first Markdown file shown.

import DOMPurify from 'dompurify';
import { Marked } from 'marked';
import { ANCHOR_PREFIX, HELD_ATTRIBUTE, inPageAnchor } from './userContent.ts';

const marked = new Marked({ gfm: true, breaks: false });

export interface MarkdownLinks {
  /** A relative link's target inside the repo, as an address of the app; null makes it plain text. */
  link(href: string): string | null;
  /**
   * Hold what would load from other sites (absolute images, videos, backgrounds, SVG images) until the
   * reader asks (`loadHeldResources`): a private repository's README must not tell a third party who reads it.
   */
  holdExternal?: boolean;
  /**
   * Levels the page's own headings take above the document: its `#` becomes an h2 under a page whose h1
   * names the repository, so the page keeps one h1 in every browser and tool (an `aria-level` on an h1 is
   * not honoured by all of them). The look follows the Markdown level (`md-h1`…), not the tag.
   */
  headingShift?: number;
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

const SVG_NS = 'http://www.w3.org/2000/svg';
const XLINK_NS = 'http://www.w3.org/1999/xlink';

/** Attributes that name ids of the document: prefixed as the ids are, so they still meet. */
const ID_REFERENCES = [
  'for',
  'headers',
  'list',
  'aria-activedescendant',
  'aria-controls',
  'aria-describedby',
  'aria-details',
  'aria-errormessage',
  'aria-flowto',
  'aria-labelledby',
  'aria-owns',
];

/** Attributes whose URL loads as the page renders. */
const LOADING_ATTRIBUTES = ['src', 'poster', 'background'];

/**
 * Sanitized HTML for `source`. Relative links go through `links.link`; relative images keep their path in
 * `data-repo-src` (with no `src`), for the caller to load from the repo as a blob. Every `data-*`, `id`,
 * link and loading attribute a README may set is rewritten here, after DOMPurify: author `data-*` are
 * dropped, so the only `data-repo-link` is ours; ids and names get GitHub's `user-content-` prefix (and
 * the attributes naming them follow), so none meets one of the app's; `<area>` is dropped and an SVG `<a>`
 * unwrapped, since only an HTML `a[href]` is a link we rewrite; popovers and commands are forbidden.
 */
export async function markdownHtml(source: string, links: MarkdownLinks): Promise<string> {
  const raw = await marked.parse(source, { async: true });
  const slug = slugger();
  const fragment = DOMPurify.sanitize(raw, {
    RETURN_DOM_FRAGMENT: true,
    FORBID_TAGS: [
      'style',
      'form',
      'iframe',
      'object',
      'embed',
      'frame',
      'frameset',
      'base',
      'meta',
      'link',
      'area',
    ],
    FORBID_ATTR: [
      'style',
      'formaction',
      'srcset',
      'popover',
      'popovertarget',
      'popovertargetaction',
      'command',
      'commandfor',
    ],
    ALLOW_DATA_ATTR: false,
    SANITIZE_NAMED_PROPS: true,
  }) as DocumentFragment;

  for (const a of fragment.querySelectorAll('a'))
    if (a.namespaceURI === SVG_NS) a.replaceWith(...a.childNodes);
  for (const el of fragment.querySelectorAll('*')) rewriteAttributes(el, !!links.holdExternal);

  for (const found of fragment.querySelectorAll('h1, h2, h3, h4, h5, h6')) {
    const h = shiftHeading(found, links.headingShift ?? 0);
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
      a.setAttribute('href', inPageAnchor(href));
    } else if (isAbsolute(href)) {
      a.target = '_blank';
      a.rel = 'noopener noreferrer nofollow';
    } else {
      const target = links.link(href);
      if (target) {
        a.setAttribute('href', target);
        a.dataset.repoLink = 'true';
      } else {
        // Out of the repository: nothing of ours to open, and a relative href would be one of the app's pages.
        a.removeAttribute('href');
      }
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
    // A task list's box is named by its item's text.
    input.setAttribute('aria-label', input.parentElement?.textContent?.trim() || 'Task');
  }
  const holder = document.createElement('div');
  holder.append(fragment);
  return holder.innerHTML;
}

/** `heading` as the heading `shift` levels below it (h6 at most), marked with its Markdown level for the look. */
function shiftHeading(heading: Element, shift: number): Element {
  const level = Number(heading.tagName[1]);
  if (shift === 0) return heading;
  const shifted = heading.ownerDocument.createElement(`h${Math.min(6, level + shift)}`);
  for (const attr of heading.attributes) shifted.setAttribute(attr.name, attr.value);
  shifted.classList.add(`md-h${level}`);
  shifted.append(...heading.childNodes);
  heading.replaceWith(shifted);
  return shifted;
}

function prefixed(id: string): string {
  return id.startsWith(ANCHOR_PREFIX) ? id : ANCHOR_PREFIX + id;
}

/** References to the README's ids follow them; what would load from elsewhere is held or dropped. */
function rewriteAttributes(el: Element, holdExternal: boolean): void {
  for (const name of ID_REFERENCES) {
    const value = el.getAttribute(name);
    if (value !== null) el.setAttribute(name, value.split(/\s+/).filter(Boolean).map(prefixed).join(' '));
  }
  const usemap = el.getAttribute('usemap');
  if (usemap?.startsWith('#')) el.setAttribute('usemap', inPageAnchor(usemap));
  const htmlLink = el.localName === 'a' && el.namespaceURI !== SVG_NS;
  const held: [string | null, string, string][] = [];
  for (const attr of [...el.attributes]) {
    const { namespaceURI, name } = attr;
    // An SVG paint, filter or marker names another element as url(#id), which must follow its prefix.
    const value = attr.value.replace(/url\(\s*(['"]?)#/g, `url($1#${ANCHOR_PREFIX}`);
    const isHref = name === 'href' || (namespaceURI === XLINK_NS && attr.localName === 'href');
    let loads = LOADING_ATTRIBUTES.includes(name) && isExternal(value);
    if (isHref && !htmlLink) {
      // Only an HTML a is a link here. Elsewhere an href names an element (SVG's #id), or an image to load.
      if (value.startsWith('#')) {
        attr.value = inPageAnchor(value);
        continue;
      }
      if (!isImageElement(el) && !isDataUrl(value)) {
        el.removeAttributeNode(attr);
        continue;
      }
      loads = isExternal(value);
    }
    if (holdExternal && (loads || cssUrls(value).some(isExternal))) {
      held.push([namespaceURI, name, value]);
      el.removeAttributeNode(attr);
    } else if (value !== attr.value) {
      attr.value = value;
    }
  }
  if (held.length > 0) el.setAttribute(HELD_ATTRIBUTE, JSON.stringify(held));
}

/** The URLs of `url(…)` in an attribute's value. */
function cssUrls(value: string): string[] {
  return [...value.matchAll(/url\(\s*['"]?\s*([^'")\s]+)/gi)].map((m) => m[1]);
}

function isImageElement(el: Element): boolean {
  return el.namespaceURI === SVG_NS && (el.localName === 'image' || el.localName === 'feImage');
}

function isDataUrl(url: string): boolean {
  return /^\s*data:/i.test(url);
}

/** A URL that would be fetched from another site: absolute (as the browser reads it), and not data:. */
function isExternal(url: string): boolean {
  return isAbsolute(url) && !isDataUrl(url);
}

const RELATIVE_BASE = new URL('https://relative.invalid/repo/');

/**
 * Whether `url` leaves the page it is written in, read as the browser reads it (which drops tabs and
 * newlines anywhere and takes "\\" for "/": "/\\evil.example" and "h\ttps://evil.example" are absolute).
 */
function isAbsolute(url: string): boolean {
  try {
    return new URL(url, RELATIVE_BASE).origin !== RELATIVE_BASE.origin;
  } catch {
    return false;
  }
}
