import { useEffect, useState } from 'preact/hooks';
import type { LastCommits, TreeEntry, TreeListing } from '../../workers/engine/index.ts';
import { NEXT_STEP } from '../cloneFlow.ts';
import { firstLine, formatCommitDate } from '../format.ts';
import { type BloblessError, gitClient } from '../gitClient.ts';
import { navigate } from '../route.ts';
import { Breadcrumbs } from './Breadcrumbs.tsx';
import { isMarkdown } from './imageTypes.ts';
import { MarkdownView } from './MarkdownView.tsx';

const BADGE: Record<string, string> = { '100755': 'exec', '120000': 'link', '160000': 'submodule' };

/** One directory at a time, read from trees alone: browsing needs no file contents. */
export function FileTree({
  repoId,
  gitRef,
  path,
  grown = 0,
}: {
  repoId: string;
  gitRef: string;
  path: string;
  /** Goes up when the history fill stored more commits: the last commits are read again. */
  grown?: number;
}) {
  const [listing, setListing] = useState<TreeListing | null>(null);
  const [error, setError] = useState<{ message: string; code: string } | null>(null);

  const [last, setLast] = useState<LastCommits | null>(null);

  useEffect(() => {
    setListing(null);
    setError(null);
    setLast(null);
    const abort = new AbortController();
    gitClient
      .repo(repoId)
      .readTree({ ref: gitRef, path })
      .then((l) => {
        setListing(l);
        // After the listing, never before it: walking history for each entry can take a while.
        return gitClient
          .repo(repoId)
          .lastCommits({ ref: l.commit, path }, { signal: abort.signal })
          .then(setLast);
      })
      .catch(
        (err: BloblessError) => !abort.signal.aborted && setError({ message: err.message, code: err.code }),
      );
    return () => abort.abort();
  }, [repoId, gitRef, path]);

  // A shallow history ends early, so "last changed in" may name the boundary commit: read again as it grows.
  useEffect(() => {
    if (grown === 0 || !listing) return;
    const abort = new AbortController();
    gitClient
      .repo(repoId)
      .lastCommits({ ref: listing.commit, path }, { signal: abort.signal })
      .then(setLast, () => undefined);
    return () => abort.abort();
  }, [grown]);

  const open = (entry: TreeEntry) => navigate({ path: entry.path, commit: null });

  // Arrow keys move between entries, as in a file manager; Enter opens (the entries are buttons).
  function onKeyDown(e: KeyboardEvent) {
    if (e.key !== 'ArrowDown' && e.key !== 'ArrowUp') return;
    const buttons = [...(e.currentTarget as HTMLElement).querySelectorAll<HTMLButtonElement>('button.entry')];
    const at = buttons.indexOf(document.activeElement as HTMLButtonElement);
    const next = buttons[Math.max(0, Math.min(buttons.length - 1, at + (e.key === 'ArrowDown' ? 1 : -1)))];
    next?.focus();
    e.preventDefault();
  }

  const readme = listing?.entries.find((e) => e.type === 'blob' && README.test(e.name));

  return (
    <div class="path-column">
      <section class="card file-tree" aria-label="Files">
        <Breadcrumbs path={path} />
        {error && (
          <div class="error" role="alert" data-testid="tree-error">
            <strong>{error.message}</strong>
            {NEXT_STEP[error.code] && <p>{NEXT_STEP[error.code]}</p>}
            <p class="muted">Error code: {error.code}</p>
          </div>
        )}
        {!listing && !error && <p class="muted">Reading tree…</p>}
        {listing && (
          <ul data-testid="file-tree" class="entries" onKeyDown={onKeyDown}>
            {path && (
              <li>
                <button
                  type="button"
                  class="link entry"
                  onClick={() => navigate({ path: path.split('/').slice(0, -1).join('/') })}
                  aria-label="Parent folder"
                >
                  <span class="icon" aria-hidden="true">
                    ↰
                  </span>
                  ..
                </button>
              </li>
            )}
            {listing.entries.map((entry) => (
              <li key={entry.path} data-type={entry.type}>
                {entry.type === 'commit' ? (
                  <span class="entry" title={`Submodule at ${entry.oid}`}>
                    <span class="icon" aria-hidden="true">
                      ⎘
                    </span>
                    {entry.name}
                  </span>
                ) : (
                  <button
                    type="button"
                    class="link entry"
                    onClick={() => open(entry)}
                    aria-label={
                      entry.type === 'tree' ? `Open folder ${entry.name}` : `Open file ${entry.name}`
                    }
                  >
                    <span class="icon" aria-hidden="true">
                      {entry.type === 'tree' ? '▸' : '·'}
                    </span>
                    {entry.name}
                    {entry.type === 'tree' ? '/' : ''}
                  </button>
                )}
                {BADGE[entry.mode] && <span class="badge">{BADGE[entry.mode]}</span>}
                <LastCommit entry={entry} last={last} />
              </li>
            ))}
          </ul>
        )}
      </section>
      {readme && listing && <FolderReadme repoId={repoId} gitRef={listing.commit} path={readme.path} />}
    </div>
  );
}

// The file GitHub shows under a folder's listing, Markdown preferred.
const README = /^readme(\.(md|markdown|mdown|mkd|txt|rst))?$/i;

/** The folder's README, below its listing: only its blob is fetched. */
function FolderReadme({ repoId, gitRef, path }: { repoId: string; gitRef: string; path: string }) {
  const [text, setText] = useState<string | null>(null);
  const [error, setError] = useState<string | null>(null);
  useEffect(() => {
    setText(null);
    setError(null);
    const abort = new AbortController();
    gitClient
      .repo(repoId)
      .readFile({ ref: gitRef, path }, { signal: abort.signal })
      .then((file) => setText(new TextDecoder().decode(file.bytes)))
      .catch((err: BloblessError) => setError(`${err.message} (${err.code})`));
    return () => abort.abort();
  }, [repoId, gitRef, path]);
  const name = path.slice(path.lastIndexOf('/') + 1);
  return (
    <section class="card readme" aria-label={name}>
      <h3 class="readme-name">
        <button type="button" class="link" onClick={() => navigate({ path, commit: null })}>
          {name}
        </button>
      </h3>
      {error && <p class="error">{error}</p>}
      {text === null && !error && <p class="muted">Reading {name}…</p>}
      {text !== null &&
        (isMarkdown(path) ? (
          <MarkdownView repoId={repoId} gitRef={gitRef} path={path} text={text} />
        ) : (
          <pre class="readme-text">{text}</pre>
        ))}
    </section>
  );
}

/** The last commit that changed an entry: its subject links to it, and its date says how old it is. */
function LastCommit({ entry, last }: { entry: TreeEntry; last: LastCommits | null }) {
  const c = last?.entries[entry.name];
  if (!c) {
    return (
      <code class="muted oid" title={`Object ${entry.oid}`}>
        {entry.oid.slice(0, 10)}
      </code>
    );
  }
  return (
    <span class="last-commit muted">
      <button type="button" class="link" title={c.subject} onClick={() => navigate({ commit: c.oid })}>
        {firstLine(c.subject)}
      </button>
      <time dateTime={new Date(c.timestamp * 1000).toISOString()}>{formatCommitDate(c.timestamp)}</time>
    </span>
  );
}
