import { render } from 'preact';
import { useEffect, useRef, useState } from 'preact/hooks';
import { Modal } from './Modal.tsx';

/** The questions src/ask.ts puts (its callers import them from there). */
export interface AskText {
  title: string;
  label: string;
  initial?: string;
  confirm: string;
  /** Why the answer cannot be used, or null when it can. */
  check?: (value: string) => string | null;
}

export interface AskConfirm {
  title: string;
  message: string;
  confirm: string;
  /** The action destroys something: the button says so in its colour. */
  danger?: boolean;
}

type Question = ({ kind: 'text' } & AskText) | ({ kind: 'confirm' } & AskConfirm);

/** Shows one question in a modal dialog; resolves with the answer (null or false when cancelled). */
export function showAsk(q: Question): Promise<string | boolean | null> {
  const opener = document.activeElement as HTMLElement | null;
  const host = document.createElement('div');
  document.body.append(host);
  return new Promise((resolve) => {
    let settled = false;
    const done = (answer: string | boolean | null) => {
      // The dialog's own close event (on unmount) answers too: only the first answer counts.
      if (settled) return;
      settled = true;
      render(null, host);
      host.remove();
      // Focus goes back where it was, when that is still on the page.
      if (opener?.isConnected) opener.focus();
      resolve(answer);
    };
    render(<Ask q={q} onDone={done} />, host);
  });
}

function Ask({ q, onDone }: { q: Question; onDone: (answer: string | boolean | null) => void }) {
  const [value, setValue] = useState(q.kind === 'text' ? (q.initial ?? '') : '');
  const [problem, setProblem] = useState<string | null>(null);
  const input = useRef<HTMLInputElement>(null);
  const confirm = useRef<HTMLButtonElement>(null);
  useEffect(() => {
    if (input.current) {
      input.current.focus();
      // A rename keeps the folder and the extension: select the name between them.
      const v = input.current.value;
      const start = v.lastIndexOf('/') + 1;
      const dot = v.lastIndexOf('.');
      input.current.setSelectionRange(start, dot > start ? dot : v.length);
    } else confirm.current?.focus();
  }, []);
  const cancel = () => onDone(q.kind === 'text' ? null : false);
  return (
    <Modal label={q.title} class="ask" onClose={cancel}>
      <form
        data-testid="ask-dialog"
        onSubmit={(e) => {
          e.preventDefault();
          if (q.kind === 'confirm') return onDone(true);
          const answer = value.trim();
          const why = answer ? (q.check?.(answer) ?? null) : 'Type a name first.';
          if (why) setProblem(why);
          else onDone(answer);
        }}
      >
        <h2 class="dialog-title">{q.title}</h2>
        {q.kind === 'confirm' ? (
          <p>{q.message}</p>
        ) : (
          <label>
            {q.label}
            <input
              ref={input}
              data-testid="ask-input"
              value={value}
              aria-invalid={problem !== null}
              aria-describedby={problem ? 'ask-problem' : undefined}
              onInput={(e) => {
                setValue(e.currentTarget.value);
                setProblem(null);
              }}
            />
          </label>
        )}
        {problem && (
          <p id="ask-problem" class="error" role="alert">
            {problem}
          </p>
        )}
        <div class="actions">
          <button
            ref={confirm}
            type="submit"
            data-testid="ask-confirm"
            class={q.kind === 'confirm' && q.danger ? 'danger-solid' : undefined}
          >
            {q.confirm}
          </button>
          <button type="button" class="secondary" onClick={cancel}>
            Cancel
          </button>
        </div>
      </form>
    </Modal>
  );
}
