// highlight.js is the heaviest part of the UI, so it is loaded on the first file view, never up front.
type Hljs = typeof import('highlight.js/lib/common').default;
let loading: Promise<Hljs> | null = null;

export function loadHighlighter(): Promise<Hljs> {
  // A failed load (offline, with a chunk of an older version no cache holds) is tried again next time.
  loading ??= import('highlight.js/lib/common')
    .then((m) => m.default)
    .catch((err: unknown) => {
      loading = null;
      throw err;
    });
  return loading;
}

const EXT_LANG: Record<string, string> = {
  ts: 'typescript',
  tsx: 'typescript',
  js: 'javascript',
  mjs: 'javascript',
  cjs: 'javascript',
  jsx: 'javascript',
  py: 'python',
  rb: 'ruby',
  rs: 'rust',
  go: 'go',
  c: 'c',
  h: 'c',
  cc: 'cpp',
  cpp: 'cpp',
  hpp: 'cpp',
  java: 'java',
  kt: 'kotlin',
  cs: 'csharp',
  sh: 'bash',
  bash: 'bash',
  json: 'json',
  yml: 'yaml',
  yaml: 'yaml',
  toml: 'ini',
  ini: 'ini',
  md: 'markdown',
  html: 'xml',
  xml: 'xml',
  svg: 'xml',
  css: 'css',
  scss: 'scss',
  sql: 'sql',
  php: 'php',
  pl: 'perl',
  swift: 'swift',
  diff: 'diff',
  patch: 'diff',
  mk: 'makefile',
};

export function languageFor(path: string): string | null {
  const name = path.slice(path.lastIndexOf('/') + 1);
  if (name === 'Makefile') return 'makefile';
  const ext = name.includes('.') ? name.slice(name.lastIndexOf('.') + 1).toLowerCase() : '';
  return EXT_LANG[ext] ?? null;
}

export function escapeHtml(text: string): string {
  return text.replace(/[&<>"]/g, (c) =>
    c === '&' ? '&amp;' : c === '<' ? '&lt;' : c === '>' ? '&gt;' : '&quot;',
  );
}

/**
 * Splits highlighted HTML into lines, closing the spans open at each line end and reopening them on the
 * next line, so every line is well-formed on its own and can carry its number and anchor.
 */
export function splitHighlightedLines(html: string): string[] {
  const lines: string[] = [];
  const open: string[] = [];
  let current = '';
  const re = /(<span[^>]*>)|(<\/span>)|(\n)|([^<\n]+|<)/g;
  for (let m = re.exec(html); m; m = re.exec(html)) {
    if (m[1]) {
      open.push(m[1]);
      current += m[1];
    } else if (m[2]) {
      open.pop();
      current += m[2];
    } else if (m[3]) {
      lines.push(current + '</span>'.repeat(open.length));
      current = open.join('');
    } else current += m[4];
  }
  lines.push(current + '</span>'.repeat(open.length));
  return lines;
}
