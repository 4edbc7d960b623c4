import type { FileDiff } from '../../workers/api.ts';

type DiffHunk = FileDiff['hunks'][number];

/** The hunk header as git prints it: a count of 1 left out, the function line after the second `@@`. */
function hunkHeader(h: DiffHunk): string {
  const range = (start: number, count: number) => (count === 1 ? `${start}` : `${start},${count}`);
  const head = `@@ -${range(h.oldStart, h.oldLines)} +${range(h.newStart, h.newLines)} @@`;
  return h.funcName ? `${head} ${h.funcName}` : head;
}

/** One file's hunks, as `git diff` prints them. */
export function DiffHunks({ diff }: { diff: FileDiff }) {
  return (
    <div class="diff" data-testid="diff">
      {diff.binary ? (
        <p class="muted">Binary files differ.</p>
      ) : (
        diff.hunks.map((h) => (
          <div class="hunk" key={`${h.oldStart},${h.newStart}`}>
            <div class="hunk-head muted">{hunkHeader(h)}</div>
            {h.lines.map((l, i) => (
              <div key={i} class={l.kind === '+' ? 'add' : l.kind === '-' ? 'del' : 'ctx'}>
                <span class="sign" aria-hidden="true">
                  {l.kind}
                </span>
                {l.text}
              </div>
            ))}
          </div>
        ))
      )}
    </div>
  );
}
