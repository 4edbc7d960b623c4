import { useEffect, useState } from 'preact/hooks';
import type { FileDiff } from '../../workers/engine/index.ts';
import { escapeHtml, languageFor, loadHighlighter, splitHighlightedLines } from '../highlight.ts';

type DiffHunk = FileDiff['hunks'][number];

/** The hunk header as git prints it: a count of 1 left out, the function line after the second `@@`. */
function hunkHeader(h: DiffHunk): string {
  const range = (start: number, count: number) => (count === 1 ? `${start}` : `${start},${count}`);
  const head = `@@ -${range(h.oldStart, h.oldLines)} +${range(h.newStart, h.newLines)} @@`;
  return h.funcName ? `${head} ${h.funcName}` : head;
}

/** Each line's HTML, highlighted as the file's language: each side's lines are highlighted together. */
function useHighlightedLines(diff: FileDiff, path: string): string[] | null {
  const [html, setHtml] = useState<string[] | null>(null);
  useEffect(() => {
    setHtml(null);
    const lang = languageFor(path);
    if (!lang || diff.binary) return;
    let cancelled = false;
    loadHighlighter().then(
      (hljs) => {
        if (cancelled) return;
        const out: string[] = [];
        for (const h of diff.hunks) {
          const side = (keep: string) => {
            const picked = h.lines.filter((l) => l.kind === ' ' || l.kind === keep);
            const lines = splitHighlightedLines(
              hljs.highlight(picked.map((l) => l.text).join('\n'), { language: lang, ignoreIllegals: true })
                .value,
            );
            return new Map(picked.map((l, i) => [l, lines[i] ?? escapeHtml(l.text)]));
          };
          const [before, after] = [side('-'), side('+')];
          for (const l of h.lines)
            out.push((l.kind === '-' ? before.get(l) : after.get(l)) ?? escapeHtml(l.text));
        }
        setHtml(out);
      },
      () => undefined,
    );
    return () => {
      cancelled = true;
    };
  }, [diff, path]);
  return html;
}

/**
 * One file's hunks as a code host shows them: old and new line numbers, the sign, the line highlighted as
 * its language. The numbers are the hunks' own (`@@ -a,b +c,d @@`), counted down each side.
 */
export function DiffHunks({ diff, path = '' }: { diff: FileDiff; path?: string }) {
  const html = useHighlightedLines(diff, path);
  if (diff.binary) return <p class="muted diff-note">Binary files differ.</p>;
  let at = 0;
  return (
    <div class="diff" data-testid="diff">
      <table class="diff-table">
        {diff.hunks.map((h) => {
          let oldNo = h.oldStart;
          let newNo = h.newStart;
          return (
            <tbody key={`${h.oldStart},${h.newStart}`}>
              <tr class="hunk-head">
                <td class="dn" colSpan={2} />
                <td class="muted hunk-text">{hunkHeader(h)}</td>
              </tr>
              {h.lines.map((l, i) => {
                const kind = l.kind === '+' ? 'add' : l.kind === '-' ? 'del' : 'ctx';
                const o = l.kind === '+' ? '' : oldNo++;
                const n = l.kind === '-' ? '' : newNo++;
                const line = html?.[at++];
                return (
                  <tr key={i} class={kind}>
                    <td class="dn" data-line={o} />
                    <td class="dn" data-line={n} />
                    <td class="dc">
                      {/* Read out too ("plus", "minus"): the colour alone says nothing to a screen reader. */}
                      <span class="sign">{l.kind}</span>
                      {line !== undefined ? <span dangerouslySetInnerHTML={{ __html: line }} /> : l.text}
                    </td>
                  </tr>
                );
              })}
            </tbody>
          );
        })}
      </table>
    </div>
  );
}
