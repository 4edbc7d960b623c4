import { useEffect, useRef, useState } from 'preact/hooks';
import type { Author } from '../../workers/engine/index.ts';
import type { BloblessError } from '../gitClient.ts';
import { Modal } from './Modal.tsx';

/**
 * Message, author (remembered in this browser) and amend, in a dialog; what is staged is what gets
 * committed. A merge's commit starts from git's message (MERGE_MSG) and cannot be an amend.
 */
export function CommitDialog({
  staged,
  initialMessage = '',
  merge = false,
  initialAuthor,
  onCommit,
  onCancel,
}: {
  staged: string[];
  initialMessage?: string;
  merge?: boolean;
  initialAuthor: Author;
  onCommit: (message: string, author: Author, amend: boolean) => Promise<void>;
  onCancel: () => void;
}) {
  const [message, setMessage] = useState(initialMessage);
  const first = useRef<HTMLTextAreaElement>(null);
  useEffect(() => first.current?.focus(), []);
  const [name, setName] = useState(initialAuthor.name);
  const [email, setEmail] = useState(initialAuthor.email);
  const [amend, setAmend] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const [working, setWorking] = useState(false);

  async function submit(e: Event) {
    e.preventDefault();
    setError(null);
    setWorking(true);
    try {
      await onCommit(message, { name, email }, amend);
    } catch (err) {
      const failure = err as BloblessError;
      setError(`${failure.message} (${failure.code})`);
      setWorking(false);
    }
  }

  return (
    <Modal label={merge ? 'Commit the merge' : 'Commit'} onClose={onCancel}>
      <form class="commit-dialog" data-testid="commit-dialog" onSubmit={submit}>
        <h2 class="dialog-title">{merge ? 'Commit the merge' : 'Commit'}</h2>
        <p class="muted">
          {merge
            ? 'The merge commit records the resolved files, with both branches as its parents.'
            : staged.length === 0
              ? amend
                ? 'Nothing staged: amending changes only the message and author.'
                : 'Nothing is staged yet.'
              : `${staged.length} staged file${staged.length === 1 ? '' : 's'}: ${staged.slice(0, 5).join(', ')}${staged.length > 5 ? '…' : ''}`}
        </p>
        <label>
          Message
          <textarea
            ref={first}
            data-testid="commit-message"
            value={message}
            rows={3}
            required
            onInput={(e) => setMessage(e.currentTarget.value)}
          />
        </label>
        <div class="author-fields">
          <label>
            Author name
            <input
              data-testid="author-name"
              value={name}
              required
              onInput={(e) => setName(e.currentTarget.value)}
            />
          </label>
          <label>
            E-mail
            <input
              data-testid="author-email"
              type="email"
              value={email}
              required
              onInput={(e) => setEmail(e.currentTarget.value)}
            />
          </label>
        </div>
        {!merge && (
          <label class="inline">
            <input type="checkbox" checked={amend} onChange={(e) => setAmend(e.currentTarget.checked)} />{' '}
            Amend the last commit
          </label>
        )}
        {error && (
          <p class="error" role="alert">
            {error}
          </p>
        )}
        <div class="actions">
          <button type="submit" data-testid="commit-submit" disabled={working}>
            {amend ? 'Amend' : 'Commit'}
          </button>
          <button type="button" class="secondary" onClick={onCancel}>
            Cancel
          </button>
        </div>
      </form>
    </Modal>
  );
}
