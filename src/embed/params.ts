/**
 * The widget's address: `embed.html?repo=<url>&ref=<branch|tag|commit>&path=<file or folder>&lines=<10-20>
 * &theme=<light|dark|auto>&allowedOrigins=<origin,origin>`. docs/EMBED.md documents each parameter.
 */
export type Theme = 'light' | 'dark' | 'auto';

export interface LineRange {
  from: number;
  to: number;
}

export interface EmbedParams {
  repo: string;
  /** Empty for the remote's HEAD. */
  ref: string;
  path: string;
  lines: LineRange | null;
  theme: Theme;
  /** Origins whose `navigate` messages are obeyed, and to which the widget reports. */
  allowedOrigins: string[];
}

/** `10-20`, `10`, `L10-L20` as a 1-based inclusive range; null for anything else. */
export function parseLines(value: string | null | undefined): LineRange | null {
  if (!value) return null;
  const m = /^L?(\d{1,7})(?:-L?(\d{1,7}))?$/.exec(value.trim());
  if (!m) return null;
  const a = Number(m[1]);
  const b = m[2] ? Number(m[2]) : a;
  if (a < 1 || b < 1) return null;
  return { from: Math.min(a, b), to: Math.max(a, b) };
}

export function formatLines(range: LineRange): string {
  return range.from === range.to ? `${range.from}` : `${range.from}-${range.to}`;
}

/** Each entry's origin (`https://docs.example.com`); entries that are not http(s) URLs are dropped. */
export function parseOrigins(value: string | null): string[] {
  if (!value) return [];
  const out = new Set<string>();
  for (const part of value.split(/[\s,]+/)) {
    if (!part) continue;
    try {
      const url = new URL(part);
      if (url.protocol === 'https:' || url.protocol === 'http:') out.add(url.origin);
    } catch {
      // not a URL: ignored, so a typo never widens the list
    }
  }
  return [...out];
}

export function parseEmbedParams(search: string): EmbedParams {
  const q = new URLSearchParams(search);
  const theme = q.get('theme');
  return {
    repo: (q.get('repo') ?? '').trim(),
    ref: (q.get('ref') ?? '').trim(),
    path: (q.get('path') ?? '').replace(/^\/+|\/+$/g, ''),
    lines: parseLines(q.get('lines')),
    theme: theme === 'light' || theme === 'dark' ? theme : 'auto',
    allowedOrigins: parseOrigins(q.get('allowedOrigins')),
  };
}
