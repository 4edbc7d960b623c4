import { render } from 'preact';
import { useEffect, useRef, useState } from 'preact/hooks';

export interface TokenAnswer {
  auth: { username: string; password: string };
  remember: boolean;
}

interface Request {
  host: string;
  rejected: boolean;
}

// One dialog at a time: calls made while it is open wait for the same answer.
let pending: Promise<TokenAnswer | null> | null = null;

/** Shows the token dialog and resolves with what the person typed, or null if they cancelled. */
export function askForToken(request: Request): Promise<TokenAnswer | null> {
  if (pending) return pending;
  const host = document.createElement('div');
  document.body.append(host);
  pending = new Promise<TokenAnswer | null>((resolve) => {
    const close = (answer: TokenAnswer | null) => {
      render(null, host);
      host.remove();
      pending = null;
      resolve(answer);
    };
    render(<TokenDialog request={request} onClose={close} />, host);
  });
  return pending;
}

function TokenDialog({ request, onClose }: { request: Request; onClose: (a: TokenAnswer | null) => void }) {
  const dialog = useRef<HTMLDialogElement>(null);
  const [username, setUsername] = useState('');
  const [password, setPassword] = useState('');
  const [remember, setRemember] = useState(false);
  useEffect(() => {
    dialog.current?.showModal();
  }, []);
  return (
    <dialog
      ref={dialog}
      class="card token-dialog"
      aria-labelledby="token-title"
      onCancel={(e) => {
        e.preventDefault();
        onClose(null);
      }}
    >
      <form
        method="dialog"
        onSubmit={(e) => {
          e.preventDefault();
          if (!password) return;
          onClose({ auth: { username: username || 'git', password }, remember });
        }}
      >
        <h3 id="token-title">Token for {request.host}</h3>
        <p class="muted">
          {request.rejected
            ? `${request.host} refused the token it was given. Enter another one to continue.`
            : `${request.host} needs a token to send the rest of this repository. Tokens given for a session are forgotten when the page reloads.`}
        </p>
        <label>
          User name
          <input
            name="username"
            autocomplete="username"
            value={username}
            placeholder="git"
            onInput={(e) => setUsername(e.currentTarget.value)}
          />
        </label>
        <label>
          Token or password
          <input
            name="token"
            type="password"
            autocomplete="current-password"
            required
            value={password}
            onInput={(e) => setPassword(e.currentTarget.value)}
          />
        </label>
        <label class="check">
          <input type="checkbox" checked={remember} onChange={(e) => setRemember(e.currentTarget.checked)} />
          Remember it in this browser (kept unencrypted in IndexedDB, with this repository)
        </label>
        <p class="muted">
          It is sent only to {request.host}, or through the CORS proxy you chose for this repository.
        </p>
        <div class="actions">
          <button type="submit">Continue</button>
          <button type="button" class="secondary" onClick={() => onClose(null)}>
            Cancel
          </button>
        </div>
      </form>
    </dialog>
  );
}
