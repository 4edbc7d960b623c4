import { describe, expect, it } from 'vitest';
import { escapeHtml, languageFor, loadHighlighter, splitHighlightedLines } from './highlight.ts';

/** The text a line shows: tags dropped, entities decoded. */
const textOf = (html: string) =>
  html
    .replace(/<[^>]*>/g, '')
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&quot;/g, '"')
    .replace(/&#x27;/g, "'")
    .replace(/&amp;/g, '&');

/** Every span a line opens, it closes, never closing one it did not open. */
function balanced(html: string): boolean {
  let depth = 0;
  for (const m of html.matchAll(/<(\/?)span\b[^>]*>/g)) {
    depth += m[1] ? -1 : 1;
    if (depth < 0) return false;
  }
  return depth === 0;
}

describe('splitHighlightedLines', () => {
  const source = [
    'const a = 1; /* a comment',
    '   that spans <three> & lines',
    '   */ const t = `template $' + '{a}',
    'still the template`;',
    '',
    '"done"',
  ].join('\n');

  it('splits highlight.js output for tokens spanning lines into well-formed lines with the source text', async () => {
    const hljs = await loadHighlighter();
    const html = hljs.highlight(source, { language: 'javascript' }).value;
    // The fixture is worth its salt only if some span really runs across a line end.
    expect(html.split('\n').some((line) => !balanced(line))).toBe(true);
    const lines = splitHighlightedLines(html);
    expect(lines.map(textOf)).toEqual(source.split('\n'));
    for (const line of lines) expect(balanced(line), line).toBe(true);
    // The comment's second line is still inside the comment's span.
    expect(lines[1]).toMatch(/^<span class="hljs-comment">/);
    expect(lines[3]).toMatch(/^<span class="hljs-string">/);
  });

  it('reopens nested spans in order on the next line', () => {
    const html = '<span class="a">x<span class="b">y\nz</span>w</span>';
    expect(splitHighlightedLines(html)).toEqual([
      '<span class="a">x<span class="b">y</span></span>',
      '<span class="a"><span class="b">z</span>w</span>',
    ]);
  });

  it('keeps plain text and escaped angle brackets as they are; an empty input is one empty line', () => {
    expect(splitHighlightedLines(escapeHtml('a < b\n"c" & d'))).toEqual([
      'a &lt; b',
      '&quot;c&quot; &amp; d',
    ]);
    expect(splitHighlightedLines('')).toEqual(['']);
    expect(splitHighlightedLines('x\n')).toEqual(['x', '']);
  });
});

describe('languageFor', () => {
  it.each([
    ['src/App.tsx', 'typescript'],
    ['a/b/Makefile', 'makefile'],
    ['x.PY', 'python'],
    ['README', null],
    ['dir.d/file', null],
    ['archive.tar.gz', null],
  ])('%s is %s', (path, lang) => {
    expect(languageFor(path)).toBe(lang);
  });
});
