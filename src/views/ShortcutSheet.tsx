import { useEffect, useRef } from 'preact/hooks';
import { Modal } from './Modal.tsx';

export const SHORTCUTS: [string, string][] = [
  ['t  or  Ctrl+P', 'Go to file'],
  ['y', 'Turn the address into a permalink (the commit id instead of the branch)'],
  ['Shift+click a line number', 'Select a range of lines'],
  ['h', 'History of the file shown'],
  ['b', 'Blame of the file shown'],
  ['?', 'This list'],
  ['Escape', 'Close a dialog'],
];

export function ShortcutSheet({ onClose }: { onClose: () => void }) {
  const close = useRef<HTMLButtonElement>(null);
  useEffect(() => close.current?.focus(), []);
  return (
    <Modal label="Keyboard shortcuts" class="shortcuts" onClose={onClose}>
      <h3>Keyboard shortcuts</h3>
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
