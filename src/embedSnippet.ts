/**
 * The `<iframe>` that embeds one file with the widget, as the app's Embed button offers it and
 * docs/EMBED.md describes it. Pure: the caller says where the app is served.
 */
export interface EmbedTarget {
  /** Where embed.html is served, e.g. `https://blobless.example/embed.html`. */
  embedUrl: string;
  repo: string;
  /** A full commit id makes the snippet a permalink: what it shows never changes. */
  ref: string;
  path: string;
  lines?: { from: number; to: number } | null;
  theme?: 'light' | 'dark' | 'auto';
  allowedOrigins?: string[];
}

export function embedSrc(t: EmbedTarget): string {
  const url = new URL(t.embedUrl);
  url.search = '';
  url.searchParams.set('repo', t.repo);
  if (t.ref) url.searchParams.set('ref', t.ref);
  if (t.path) url.searchParams.set('path', t.path);
  if (t.lines) {
    url.searchParams.set(
      'lines',
      t.lines.from === t.lines.to ? `${t.lines.from}` : `${t.lines.from}-${t.lines.to}`,
    );
  }
  if (t.theme && t.theme !== 'auto') url.searchParams.set('theme', t.theme);
  if (t.allowedOrigins?.length) url.searchParams.set('allowedOrigins', t.allowedOrigins.join(','));
  return url.href;
}

export function embedSnippet(t: EmbedTarget): string {
  const name = t.path ? t.path.slice(t.path.lastIndexOf('/') + 1) : 'repository';
  const attr = (s: string) => s.replace(/&/g, '&amp;').replace(/"/g, '&quot;').replace(/</g, '&lt;');
  return `<iframe src="${attr(embedSrc(t))}" title="${attr(name)}" width="100%" height="400" style="border:0" loading="lazy" allow="clipboard-write"></iframe>`;
}
