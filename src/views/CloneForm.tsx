import { useEffect, useRef, useState } from 'preact/hooks';
import type { CloneResult } from '../../workers/engine/index.ts';
import { cloneAndCheckout, type FlowProgress } from '../cloneFlow.ts';
import { type BloblessError, gitClient } from '../gitClient.ts';
import { useOnline } from '../online.ts';
import { navigate } from '../route.ts';
import { warmUpForClone } from '../warmUpForClone.ts';
import { CloneError } from './CloneError.tsx';
import { CloneProgress } from './CloneProgress.tsx';

export function CloneForm({ onCloned }: { onCloned: () => void }) {
  const params = new URLSearchParams(location.search);
  const [url, setUrl] = useState(params.get('clone') ?? '');
  const [branch, setBranch] = useState('');
  const [depth, setDepth] = useState('');
  const [partial, setPartial] = useState(true);
  const [corsProxy, setCorsProxy] = useState('');
  const [username, setUsername] = useState('');
  const [token, setToken] = useState('');
  const [rememberToken, setRememberToken] = useState(false);
  const [tokenViaProxy, setTokenViaProxy] = useState(false);
  const proxy = corsProxy.trim();
  const [progress, setProgress] = useState<FlowProgress | null>(null);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<{ message: string; code: string } | null>(null);
  const [done, setDone] = useState<CloneResult | null>(null);
  const controller = useRef<AbortController | null>(null);
  const online = useOnline();
  // A link that fills the form (`?clone=`) is a clone on its way, as the field taken is.
  useEffect(() => {
    if (params.has('clone')) void warmUpForClone(gitClient);
  }, []);

  async function submit(e: Event) {
    e.preventDefault();
    setError(null);
    setDone(null);
    setBusy(true);
    setProgress({ phase: 'connecting' });
    const abort = new AbortController();
    controller.current = abort;
    try {
      const result = await cloneAndCheckout(
        {
          url,
          ref: branch.trim() || undefined,
          depth: depth ? Number(depth) : undefined,
          filter: partial ? 'blob:none' : null,
          corsProxy: proxy || undefined,
          auth: token
            ? { username: username || 'git', password: token, ...(proxy && tokenViaProxy && { proxy }) }
            : undefined,
          rememberCredentials: rememberToken,
        },
        setProgress,
        abort.signal,
      );
      setDone(result);
      onCloned();
      // The address names the remote, so it can be shared; the repo just stored is the one it opens.
      const stored = (await gitClient.listRepos()).find((r) => r.id === result.repoId);
      navigate({ repo: stored?.url ?? result.repoId, path: '' });
    } catch (err) {
      const e = err as BloblessError;
      setError({ message: e.message, code: e.code ?? 'INTERNAL' });
    } finally {
      setBusy(false);
      setProgress(null);
      controller.current = null;
    }
  }

  return (
    <section class="card" aria-labelledby="clone-title">
      <h1 id="clone-title">Clone a repository</h1>
      <form onSubmit={submit} class="clone-form">
        <label class="wide">
          Repository URL
          <input
            data-testid="clone-url"
            type="text"
            inputMode="url"
            autoComplete="url"
            spellcheck={false}
            required
            placeholder="https://example.com/owner/repo.git, github.com/owner/repo or owner/repo"
            value={url}
            // A clone is likely: the ingester warms up while the URL is pasted (once per worker).
            onFocus={() => void warmUpForClone(gitClient)}
            onInput={(e) => {
              setUrl(e.currentTarget.value);
              void warmUpForClone(gitClient);
            }}
            disabled={busy}
          />
        </label>
        <label>
          Branch or tag
          <input
            value={branch}
            placeholder="default branch"
            onInput={(e) => setBranch(e.currentTarget.value)}
            disabled={busy}
          />
        </label>
        <label>
          Depth
          <input
            type="number"
            min="1"
            value={depth}
            placeholder="full history"
            onInput={(e) => setDepth(e.currentTarget.value)}
            disabled={busy}
          />
        </label>
        <label class="check">
          <input
            type="checkbox"
            checked={partial}
            onChange={(e) => setPartial(e.currentTarget.checked)}
            disabled={busy}
          />
          Partial clone (file contents fetched when needed)
        </label>
        <details class="wide">
          <summary>CORS proxy and private repositories</summary>
          <label>
            CORS proxy
            <input
              value={corsProxy}
              placeholder="https://proxy.example"
              onInput={(e) => setCorsProxy(e.currentTarget.value)}
              disabled={busy}
            />
          </label>
          <label>
            User name
            <input
              value={username}
              autoComplete="username"
              onInput={(e) => setUsername(e.currentTarget.value)}
              disabled={busy}
            />
          </label>
          <label>
            Token (kept in memory for this session unless you tick the box below)
            <input
              type="password"
              value={token}
              autoComplete="off"
              onInput={(e) => setToken(e.currentTarget.value)}
              disabled={busy}
            />
          </label>
          <label class="check">
            <input
              type="checkbox"
              checked={rememberToken}
              onChange={(e) => setRememberToken(e.currentTarget.checked)}
              disabled={busy}
            />
            Remember the token in this browser, for fetching files later (stored unencrypted in IndexedDB)
          </label>
          {token && proxy && (
            <label class="check">
              <input
                type="checkbox"
                data-testid="clone-token-proxy-consent"
                required
                checked={tokenViaProxy}
                onChange={(e) => setTokenViaProxy(e.currentTarget.checked)}
                disabled={busy}
              />
              Send my token through the CORS proxy at {proxy} (whoever runs it can read the token)
            </label>
          )}
        </details>
        <div class="actions wide">
          <button type="submit" data-testid="clone-submit" disabled={busy || !online}>
            {busy ? 'Cloning…' : 'Clone'}
          </button>
          {!online && !busy && (
            <span class="muted" role="status" data-testid="clone-offline">
              You are offline: cloning needs the network. Repositories below still open.
            </span>
          )}
          {busy && (
            <button type="button" class="secondary" onClick={() => controller.current?.abort()}>
              Cancel
            </button>
          )}
        </div>
      </form>
      {progress && (
        <div class="status-bar clone-status" data-testid="status-bar">
          <CloneProgress progress={progress} />
        </div>
      )}
      {error && <CloneError error={error} />}
      {done?.warnings.map((w) => (
        <p class="warning" role="status" key={w}>
          {w}
        </p>
      ))}
    </section>
  );
}
