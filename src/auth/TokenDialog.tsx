import { render } from 'preact';
import { useEffect, useRef, useState } from 'preact/hooks';

export interface TokenAnswer {
  /** `proxy`: the CORS proxy the person agreed to send the token through (the one the dialog named). */
  auth: { username: string; password: string; proxy?: string };
  remember: boolean;
}

interface Request {
  host: string;
  rejected: boolean;
  /** The CORS proxy the repository is reached through: the token goes through it only if they agree. */
  proxy?: string;
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
  const [viaProxy, setViaProxy] = useState(false);
  const [needsConsent, setNeedsConsent] = useState(false);
  const proxy = request.proxy;
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
          if (proxy && !viaProxy) {
            setNeedsConsent(true);
            return;
          }
          onClose({ auth: { username: username || 'git', password, ...(proxy && { proxy }) }, remember });
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
        {proxy ? (
          <>
            <p class="warning">
              This repository is reached through the CORS proxy at <strong>{proxy}</strong>. Your token would
              pass through it: whoever runs that proxy can read it.
            </p>
            <label class="check">
              <input
                type="checkbox"
                data-testid="token-proxy-consent"
                checked={viaProxy}
                onChange={(e) => setViaProxy(e.currentTarget.checked)}
              />
              Send my token to {request.host} through {proxy}
            </label>
            {needsConsent && !viaProxy && (
              <p role="alert" class="error">
                Tick the box to send the token through {proxy}, or cancel: it is not sent otherwise.
              </p>
            )}
          </>
        ) : (
          <p class="muted">It is sent only to {request.host}.</p>
        )}
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
