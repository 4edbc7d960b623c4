import { useState } from 'preact/hooks';
import type { Author } from '../../workers/engine/index.ts';
import type { BloblessError } from '../gitClient.ts';

/** Message, author (remembered in this browser) and amend; what is staged is what gets committed. */
export function CommitDialog({
  staged,
  initialAuthor,
  onCommit,
  onCancel,
}: {
  staged: string[];
  initialAuthor: Author;
  onCommit: (message: string, author: Author, amend: boolean) => Promise<void>;
  onCancel: () => void;
}) {
  const [message, setMessage] = useState('');
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
    <form class="commit-dialog" data-testid="commit-dialog" onSubmit={submit} aria-label="Commit">
      <p class="muted">
        {staged.length === 0
          ? amend
            ? 'Nothing staged: amending changes only the message and author.'
            : 'Nothing is staged yet.'
          : `${staged.length} staged file${staged.length === 1 ? '' : 's'}: ${staged.slice(0, 5).join(', ')}${staged.length > 5 ? '…' : ''}`}
      </p>
      <label>
        Message
        <textarea
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
      <label class="inline">
        <input type="checkbox" checked={amend} onChange={(e) => setAmend(e.currentTarget.checked)} /> Amend
        the last commit
      </label>
      {error && (
        <p class="error" role="alert">
          {error}
        </p>
      )}
      <div class="actions">
        <button type="submit" data-testid="commit-submit" disabled={working}>
          {amend ? 'Amend' : 'Commit'}
        </button>
        <button type="button" class="link" onClick={onCancel}>
          Cancel
        </button>
      </div>
    </form>
  );
}
