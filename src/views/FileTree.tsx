import { useEffect, useRef, useState } from 'preact/hooks';
import type { LastCommits, TreeEntry, TreeListing } from '../../workers/engine/index.ts';
import { NEXT_STEP } from '../cloneFlow.ts';
import { focusIfLost } from '../focus.ts';
import { firstLine, formatCommitDate } from '../format.ts';
import { type BloblessError, gitClient } from '../gitClient.ts';
import { navigate, routeHref } from '../route.ts';
import { Breadcrumbs } from './Breadcrumbs.tsx';
import { isMarkdown } from './imageTypes.ts';
import { MarkdownView } from './MarkdownView.tsx';

const BADGE: Record<string, string> = { '100755': 'exec', '120000': 'link', '160000': 'submodule' };

/**
 * One directory at a time, read from trees alone: browsing needs no file contents. The listing is a
 * WAI-ARIA tree: one tab stop for the whole list, arrow keys between rows, Enter (or →) opens, ← goes to
 * the parent folder, Home and End, and typing a letter moves to the next entry starting with it.
 */
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
  const [active, setActive] = useState(0);
  const tree = useRef<HTMLUListElement>(null);

  useEffect(() => {
    setListing(null);
    setError(null);
    setLast(null);
    setActive(0);
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

  // A shallow history ends early, so the last commits are read again as it grows.
  useEffect(() => {
    if (grown === 0 || !listing) return;
    const abort = new AbortController();
    gitClient
      .repo(repoId)
      .lastCommits({ ref: listing.commit, path }, { signal: abort.signal })
      .then(setLast, () => undefined);
    return () => abort.abort();
  }, [grown]);

  // Opening a folder removes the row that was clicked: its listing takes focus, on its first row.
  useEffect(() => {
    if (listing) focusIfLost(tree.current?.querySelector<HTMLElement>('[role="treeitem"][tabindex="0"]'));
  }, [listing]);

  const parent = path ? path.split('/').slice(0, -1).join('/') : null;
  const rows: { key: string; name: string; label: string; entry: TreeEntry | null }[] = [
    ...(parent !== null ? [{ key: '..', name: '..', label: 'Parent folder', entry: null }] : []),
    ...(listing?.entries ?? []).map((e) => ({
      key: e.path,
      name: e.name,
      label:
        e.type === 'tree'
          ? `Folder ${e.name}`
          : e.type === 'commit'
            ? `Submodule ${e.name}`
            : `File ${e.name}`,
      entry: e,
    })),
  ];
  const openRow = (i: number) => {
    const row = rows[i];
    if (!row) return;
    if (!row.entry) navigate({ path: parent ?? '', commit: null });
    else if (row.entry.type !== 'commit') navigate({ path: row.entry.path, commit: null });
  };

  function onKeyDown(e: KeyboardEvent) {
    let next = active;
    if (e.key === 'ArrowDown') next = Math.min(rows.length - 1, active + 1);
    else if (e.key === 'ArrowUp') next = Math.max(0, active - 1);
    else if (e.key === 'Home') next = 0;
    else if (e.key === 'End') next = rows.length - 1;
    else if (e.key === 'Enter' || (e.key === 'ArrowRight' && rows[active]?.entry?.type === 'tree')) {
      openRow(active);
      e.preventDefault();
      return;
    } else if (e.key === 'ArrowLeft' && parent !== null) {
      navigate({ path: parent, commit: null });
      e.preventDefault();
      return;
    } else if (e.key.length === 1 && /\S/.test(e.key) && !e.ctrlKey && !e.metaKey && !e.altKey) {
      const k = e.key.toLowerCase();
      const order = [...rows.keys()].map((i) => (active + 1 + i) % rows.length);
      const hit = order.find((i) => rows[i].name.toLowerCase().startsWith(k));
      if (hit === undefined) return;
      next = hit;
    } else return;
    e.preventDefault();
    e.stopPropagation();
    setActive(next);
    tree.current?.querySelectorAll<HTMLElement>('[role="treeitem"]')[next]?.focus();
  }

  const readme = listing?.entries.find((e) => e.type === 'blob' && README.test(e.name));

  return (
    <div class="path-column">
      <section class="card file-tree" aria-label={path ? `Folder ${path}` : 'Files'}>
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
          <ul
            ref={tree}
            data-testid="file-tree"
            class="entries"
            // biome-ignore lint/a11y/noNoninteractiveElementToInteractiveRole: the WAI-ARIA tree pattern, on the list it is
            role="tree"
            aria-label={path ? `Files in ${path}` : 'Files'}
            onKeyDown={onKeyDown}
          >
            {rows.map((row, i) => (
              // biome-ignore lint/a11y/useKeyWithClickEvents: the tree's onKeyDown handles the keys of every row (roving tabindex)
              <li
                key={row.key}
                role="treeitem"
                aria-label={row.label}
                aria-selected={i === active}
                tabIndex={i === active ? 0 : -1}
                data-type={row.entry?.type ?? 'parent'}
                data-name={row.name}
                class="entry-row"
                onClick={(e) => {
                  if ((e.target as HTMLElement).closest('a.last-commit-link')) return;
                  setActive(i);
                  openRow(i);
                }}
                onFocus={() => setActive(i)}
              >
                <span class="entry">
                  <span class="icon" aria-hidden="true">
                    {!row.entry
                      ? '↰'
                      : row.entry.type === 'tree'
                        ? '▸'
                        : row.entry.type === 'commit'
                          ? '⎘'
                          : '·'}
                  </span>
                  <span class="entry-name">
                    {row.name}
                    {row.entry?.type === 'tree' ? '/' : ''}
                  </span>
                </span>
                {row.entry && BADGE[row.entry.mode] && <span class="badge">{BADGE[row.entry.mode]}</span>}
                {row.entry && <LastCommit entry={row.entry} last={last} />}
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
      <h2 class="readme-name">
        <a
          href={routeHref({ path, commit: null })}
          onClick={(e) => {
            e.preventDefault();
            navigate({ path, commit: null });
          }}
        >
          {name}
        </a>
      </h2>
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

/**
 * The last commit that changed an entry: its subject links to it, and its date says how old it is. "…"
 * while the history held so far cannot say (a first-view clone before its fill reached that far): never
 * a guess, which would name a commit `git log -1 -- <entry>` does not.
 */
function LastCommit({ entry, last }: { entry: TreeEntry; last: LastCommits | null }) {
  const c = last?.entries[entry.name];
  if (!c) {
    const waiting = !last || last.shallowStop;
    return (
      <span
        class="last-commit muted"
        data-last="unknown"
        title={
          waiting
            ? 'Not known until more of the history has arrived'
            : `Not changed in the last commits walked; object ${entry.oid.slice(0, 10)}`
        }
      >
        {waiting ? '…' : ''}
      </span>
    );
  }
  return (
    <span class="last-commit muted" data-last={c.oid}>
      <a
        class="last-commit-link"
        href={routeHref({ commit: c.oid })}
        tabIndex={-1}
        title={c.subject}
        onClick={(e) => {
          e.preventDefault();
          navigate({ commit: c.oid });
        }}
      >
        {firstLine(c.subject)}
      </a>
      <time dateTime={new Date(c.timestamp * 1000).toISOString()}>{formatCommitDate(c.timestamp)}</time>
    </span>
  );
}
