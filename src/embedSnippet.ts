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

/**
 * The iframe, and the few lines of script that size it to the widget's content from its `resize`
 * messages (docs/EMBED.md), so no empty block is left below a short file. `color-scheme: normal` on the
 * frame keeps the widget's page in the host's default scheme: a frame whose scheme differs from its
 * host's gets an opaque background from the browser; the widget draws its dark colours on its own box.
 */
export function embedSnippet(t: EmbedTarget): string {
  const name = t.path ? t.path.slice(t.path.lastIndexOf('/') + 1) : 'repository';
  const attr = (s: string) => s.replace(/&/g, '&amp;').replace(/"/g, '&quot;').replace(/</g, '&lt;');
  const src = embedSrc(t);
  const id = `blobless-${hash(src)}`;
  return [
    `<iframe id="${id}" src="${attr(src)}" title="${attr(name)}" width="100%" height="160" style="border:0;color-scheme:normal" loading="lazy" allow="clipboard-write"></iframe>`,
    `<script>addEventListener('message', (e) => { const f = document.getElementById('${id}'); if (f && e.source === f.contentWindow && e.data?.source === 'blobless-embed' && e.data.type === 'resize') f.style.height = e.data.height + 'px'; });</script>`,
  ].join('\n');
}

/** A short stable name for one snippet's iframe (FNV-1a of its address), so two snippets on a page differ. */
function hash(text: string): string {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), 0x01000193);
  return (h >>> 0).toString(36);
}
