import { useState } from 'preact/hooks';

/** Copies `text` (or what it returns, read at the click) to the clipboard and says so for a moment. */
export function CopyButton({
  text,
  label,
  title,
}: {
  text: string | (() => string);
  label: string;
  title?: string;
}) {
  const [done, setDone] = useState(false);
  async function copy() {
    await navigator.clipboard.writeText(typeof text === 'function' ? text() : text);
    setDone(true);
    setTimeout(() => setDone(false), 1500);
  }
  return (
    <button type="button" class="secondary small" onClick={copy} title={title ?? `Copy ${label}`}>
      {done ? 'Copied' : label}
    </button>
  );
}
