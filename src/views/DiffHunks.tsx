import type { FileDiff } from '../../workers/engine/index.ts';

/** One file's hunks, as `git diff` prints them. */
export function DiffHunks({ diff }: { diff: FileDiff }) {
  return (
    <div class="diff" data-testid="diff">
      {diff.binary ? (
        <p class="muted">Binary files differ.</p>
      ) : (
        diff.hunks.map((h) => (
          <div class="hunk" key={`${h.oldStart},${h.newStart}`}>
            <div class="hunk-head muted">
              @@ -{h.oldStart},{h.oldLines} +{h.newStart},{h.newLines} @@
            </div>
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
