import { useEffect, useRef, useState } from 'preact/hooks';
import { parseLineAnchor } from '../route.ts';
import { Modal } from './Modal.tsx';

/**
 * Selects lines of the file shown from the keyboard (`l`), as a click and a shift-click on line numbers do
 * with a mouse: "12" or "12-20" becomes `#L12-L20`, scrolled to and highlighted.
 */
export function LineDialog({ onClose }: { onClose: () => void }) {
  const current = parseLineAnchor(location.hash);
  const [value, setValue] = useState(
    current ? `${current.from}${current.to !== current.from ? `-${current.to}` : ''}` : '',
  );
  const [problem, setProblem] = useState<string | null>(null);
  const input = useRef<HTMLInputElement>(null);
  useEffect(() => {
    input.current?.focus();
    input.current?.select();
  }, []);
  return (
    <Modal label="Select lines" class="lines" onClose={onClose}>
      <form
        onSubmit={(e) => {
          e.preventDefault();
          const m = /^\s*(\d+)\s*(?:[-–:]\s*(\d+))?\s*$/.exec(value);
          if (!m || Number(m[1]) < 1) {
            setProblem('Write a line number, or two with a dash between them: 12-20.');
            return;
          }
          const from = Number(m[1]);
          const to = m[2] ? Number(m[2]) : from;
          const [a, b] = from <= to ? [from, to] : [to, from];
          onClose();
          // A hash change: the file view hears it, highlights the lines and scrolls to them.
          location.hash = a === b ? `L${a}` : `L${a}-L${b}`;
        }}
      >
        <h2 class="dialog-title">Select lines</h2>
        <label>
          Line or range (12 or 12-20)
          <input
            ref={input}
            data-testid="line-input"
            inputMode="numeric"
            value={value}
            aria-invalid={problem !== null}
            onInput={(e) => {
              setValue(e.currentTarget.value);
              setProblem(null);
            }}
          />
        </label>
        {problem && (
          <p class="error" role="alert">
            {problem}
          </p>
        )}
        <div class="actions">
          <button type="submit">Select</button>
          <button type="button" class="secondary" onClick={onClose}>
            Cancel
          </button>
        </div>
      </form>
    </Modal>
  );
}
