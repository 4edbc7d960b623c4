import { useState } from 'preact/hooks';

/** Copies `text` (or what it returns, read at the click) to the clipboard and says so for a moment. */
export function CopyButton({
  text,
  label,
  title,
  testId,
}: {
  text: string | (() => string);
  label: string;
  title?: string;
  testId?: string;
}) {
  const [done, setDone] = useState(false);
  async function copy() {
    await navigator.clipboard.writeText(typeof text === 'function' ? text() : text);
    setDone(true);
    setTimeout(() => setDone(false), 1500);
  }
  return (
    <button
      type="button"
      class="secondary small"
      data-testid={testId}
      onClick={copy}
      title={title ?? `Copy ${label}`}
    >
      {done ? 'Copied' : label}
      {/* Said to screen readers too: the label changing alone is not announced. */}
      <span class="sr-only" role="status">
        {done ? 'Copied to the clipboard' : ''}
      </span>
    </button>
  );
}
