import { useEffect, useRef } from 'preact/hooks';
import { Modal } from './Modal.tsx';

export const SHORTCUTS: [string, string][] = [
  ['t  or  Ctrl+P', 'Go to file'],
  ['y', 'Turn the address into a permalink (the commit id instead of the branch)'],
  ['Shift+click a line number', 'Select a range of lines'],
  ['l', 'Select lines of the file shown from the keyboard (12 or 12-20)'],
  ['h', 'History of the file shown'],
  ['b', 'Blame of the file shown'],
  ['?', 'This list'],
  ['Escape', 'Close a dialog'],
  ['Escape, then Tab', 'Leave the editor (where Tab indents)'],
];

export function ShortcutSheet({ onClose }: { onClose: () => void }) {
  const close = useRef<HTMLButtonElement>(null);
  useEffect(() => close.current?.focus(), []);
  return (
    <Modal label="Keyboard shortcuts" class="shortcuts" onClose={onClose}>
      <h2 class="dialog-title">Keyboard shortcuts</h2>
      <dl>
        {SHORTCUTS.map(([keys, what]) => (
          <div key={keys}>
            <dt>
              <kbd>{keys}</kbd>
            </dt>
            <dd>{what}</dd>
          </div>
        ))}
      </dl>
      <button type="button" ref={close} onClick={onClose}>
        Close
      </button>
    </Modal>
  );
}
