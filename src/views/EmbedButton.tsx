import { useState } from 'preact/hooks';
import { embedSnippet } from '../embedSnippet.ts';
import { gitClient } from '../gitClient.ts';
import { parseLineAnchor } from '../route.ts';

/**
 * "Embed": the `<iframe>` for this file at this commit (a permalink: the snippet shows the same bytes
 * forever), with the lines selected in the view, ready to copy. docs/EMBED.md says what it accepts.
 */
export function EmbedButton({
  repoId,
  repoUrl,
  gitRef,
  commit: known,
  path,
}: {
  repoId: string;
  repoUrl: string;
  gitRef: string;
  /** The commit `gitRef` names, when the view knows it already. */
  commit?: string;
  path: string;
}) {
  const [snippet, setSnippet] = useState<string | null>(null);
  const [commit, setCommit] = useState('');
  const [error, setError] = useState<string | null>(null);
  const [copied, setCopied] = useState(false);

  async function open() {
    if (snippet !== null) {
      setSnippet(null);
      return;
    }
    setError(null);
    try {
      const oid = known ?? (await gitClient.repo(repoId).readCommit({ ref: gitRef })).oid;
      const embedUrl = new URL('embed.html', location.href).href;
      setCommit(oid);
      setSnippet(
        embedSnippet({ embedUrl, repo: repoUrl, ref: oid, path, lines: parseLineAnchor(location.hash) }),
      );
    } catch (err) {
      setError((err as Error).message);
    }
  }

  async function copy() {
    if (snippet === null) return;
    await navigator.clipboard.writeText(snippet);
    setCopied(true);
    setTimeout(() => setCopied(false), 1500);
  }

  return (
    <>
      <button
        type="button"
        class="secondary small"
        data-testid="file-embed"
        aria-expanded={snippet !== null}
        onClick={open}
      >
        Embed
      </button>
      {error && <span class="error">{error}</span>}
      {snippet !== null && (
        <div class="embed-panel">
          <label>
            Paste this into a page to show {parseLineAnchor(location.hash) ? 'these lines' : 'this file'} at
            commit {commit.slice(0, 7)}:
            <textarea
              readOnly
              rows={4}
              data-testid="embed-snippet"
              value={snippet}
              onFocus={(e) => e.currentTarget.select()}
            />
          </label>
          <button type="button" class="secondary small" data-testid="embed-snippet-copy" onClick={copy}>
            {copied ? 'Copied' : 'Copy'}
          </button>
        </div>
      )}
    </>
  );
}
