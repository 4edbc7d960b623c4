// GitHub-flavoured Markdown from a repository, made safe to show: marked (GFM: tables, task lists,
// autolinks, strikethrough) then DOMPurify, so no script, inline handler, `javascript:` URL, frame or form
// from a repository runs or submits. Those and the rewrite after them (markdownHtml.ts) are loaded with the
// first Markdown file shown, never up front; what the views need before that is here.

import type { MarkdownLinks } from './markdownHtml.ts';

let loading: Promise<typeof import('./markdownHtml.ts')> | null = null;

/** Sanitized HTML for `source`: markdownHtml, loaded on first use. */
export async function renderMarkdown(source: string, links: MarkdownLinks): Promise<string> {
  loading ??= import('./markdownHtml.ts');
  return (await loading).markdownHtml(source, links);
}

/** What `#…` of the page's address names, decoded; null when it does not decode (a stray `%`). */
export function decodedHash(hash: string): string | null {
  try {
    return decodeURIComponent(hash.replace(/^#/, ''));
  } catch {
    return null;
  }
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
