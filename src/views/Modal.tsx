import type { ComponentChildren } from 'preact';
import { useEffect, useRef } from 'preact/hooks';

/**
 * A modal `<dialog>`: the browser keeps focus inside it, closes it on Escape and gives it a backdrop;
 * a click on the backdrop (the dialog element itself, outside its content) closes it too.
 */
export function Modal({
  label,
  class: className,
  onClose,
  children,
}: {
  label: string;
  class?: string;
  onClose: () => void;
  children: ComponentChildren;
}) {
  const ref = useRef<HTMLDialogElement>(null);
  useEffect(() => {
    const dialog = ref.current;
    if (dialog && !dialog.open) dialog.showModal();
    return () => dialog?.close();
  }, []);
  return (
    // biome-ignore lint/a11y/useKeyWithClickEvents: the backdrop click has Escape as its keyboard twin, which <dialog> handles
    <dialog
      ref={ref}
      class={`dialog ${className ?? ''}`}
      aria-label={label}
      onClose={onClose}
      onClick={(e) => e.target === e.currentTarget && onClose()}
    >
      <div class="dialog-body">{children}</div>
    </dialog>
  );
}
