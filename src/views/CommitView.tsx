import { useEffect, useState } from 'preact/hooks';
import type { CommitDiff, CommitSummary, FileChange, FileDiff } from '../../workers/engine/index.ts';
import { withToken } from '../auth/withToken.ts';
import { type BloblessError, gitClient } from '../gitClient.ts';
import { navigate, routeHref } from '../route.ts';
import { CopyButton } from './CopyButton.tsx';
import { DiffHunks } from './DiffHunks.tsx';

const STATUS: Record<FileChange['status'], string> = {
  added: 'A',
  deleted: 'D',
  modified: 'M',
  'type-changed': 'T',
};

export function CommitView({ repoId, oid }: { repoId: string; oid: string }) {
  const [commit, setCommit] = useState<CommitSummary | null>(null);
  const [diff, setDiff] = useState<CommitDiff | null>(null);
  const [error, setError] = useState<string | null>(null);

  useEffect(() => {
    setCommit(null);
    setDiff(null);
    setError(null);
    gitClient
      .repo(repoId)
      .readCommit({ ref: oid })
      .then(setCommit, (e: Error) => setError(e.message));
    gitClient
      .repo(repoId)
      .diffCommits({ from: null, to: oid })
      .then(setDiff, (e: Error) => setError(e.message));
  }, [repoId, oid]);

  return (
    <section class="card commit-view" aria-label="Commit">
      <button type="button" class="link" onClick={() => navigate({ commit: null })}>
        ← Files
      </button>
      {error && <p class="error">{error}</p>}
      {commit && (
        <header>
          <h3>{commit.message.split('\n')[0]}</h3>
          {commit.message.includes('\n') && (
            <pre class="message">{commit.message.slice(commit.message.indexOf('\n') + 1).trim()}</pre>
          )}
          <p class="muted">
            {commit.author.name} &lt;{commit.author.email}&gt; ·{' '}
            {new Date(commit.author.timestamp * 1000).toLocaleString()}
          </p>
          <p class="muted">
            <code>{commit.oid}</code> <CopyButton text={commit.oid} label="Copy id" />{' '}
            <CopyButton
              text={() => `${location.origin}${routeHref({ commit: commit.oid })}`}
              label="Copy link"
            />
            {commit.parents.map((p) => (
              <span key={p}>
                {' '}
                parent{' '}
                <button type="button" class="link" onClick={() => navigate({ commit: p })}>
                  <code>{p.slice(0, 10)}</code>
                </button>
              </span>
            ))}
          </p>
        </header>
      )}
      {diff && (
        <ul class="changed-files">
          {diff.files.length === 0 && <li class="muted">No file changes.</li>}
          {diff.files.map((f) => (
            <ChangedFile key={f.path} repoId={repoId} change={f} />
          ))}
        </ul>
      )}
    </section>
  );
}

/** The hunks of a file are asked for when it is opened: only then are its two blobs fetched. */
export function ChangedFile({ repoId, change }: { repoId: string; change: FileChange }) {
  const [open, setOpen] = useState(false);
  const [diff, setDiff] = useState<FileDiff | null>(null);
  const [error, setError] = useState<string | null>(null);

  useEffect(() => {
    if (!open || diff) return;
    withToken(() =>
      gitClient.repo(repoId).diffFile({ oldOid: change.oldOid ?? null, newOid: change.newOid ?? null }),
    ).then(setDiff, (e: BloblessError) => setError(`${e.message} (${e.code})`));
  }, [open]);

  return (
    <li class="changed-file">
      <button type="button" class="link" aria-expanded={open} onClick={() => setOpen(!open)}>
        <span class={`status status-${change.status}`}>{STATUS[change.status]}</span> {change.path}
      </button>
      {open && !diff && !error && <p class="muted">Fetching both versions…</p>}
      {error && <p class="error">{error}</p>}
      {open && diff && <DiffHunks diff={diff} />}
    </li>
  );
}
