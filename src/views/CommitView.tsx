import { useEffect, useRef, useState } from 'preact/hooks';
import type { CommitDiff, CommitSummary } from '../../workers/engine/index.ts';
import { focusIfLost } from '../focus.ts';
import { type BloblessError, gitClient } from '../gitClient.ts';
import { navigate, parseRoute, routeHref } from '../route.ts';
import { CommitDiffs } from './CommitDiffs.tsx';
import { CopyButton } from './CopyButton.tsx';

/**
 * One commit: its message, author, parents and every file it changed, diffs inline. `grown` goes up as the
 * history fill stores more: the list is read again then (a commit whose parent had not arrived shows its
 * diff once it has), in place, so the diffs the person is reading stay as they are.
 */
export function CommitView({ repoId, oid, grown = 0 }: { repoId: string; oid: string; grown?: number }) {
  const [commit, setCommit] = useState<CommitSummary | null>(null);
  const [diff, setDiff] = useState<CommitDiff | null>(null);
  const [commitError, setCommitError] = useState<string | null>(null);
  const [diffError, setDiffError] = useState<string | null>(null);
  const heading = useRef<HTMLHeadingElement>(null);

  useEffect(() => {
    let live = true;
    setCommit(null);
    setDiff(null);
    setCommitError(null);
    setDiffError(null);
    gitClient
      .repo(repoId)
      .readCommit({ ref: oid })
      .then(
        (c) => live && setCommit(c),
        (e: BloblessError) => live && setCommitError(e.message),
      );
    return () => {
      live = false;
    };
  }, [repoId, oid]);
  useEffect(() => focusIfLost(heading.current), [commit]);

  useEffect(() => {
    let live = true;
    gitClient
      .repo(repoId)
      .diffCommits({ from: null, to: oid })
      .then(
        (d) => {
          if (!live) return;
          setDiff(d);
          setDiffError(null);
        },
        (e: BloblessError) => live && setDiffError(e.message),
      );
    return () => {
      live = false;
    };
  }, [repoId, oid, grown]);
  const error = commitError ?? diffError;

  const link = (to: string) => ({
    href: routeHref({ commit: to }),
    onClick: (e: MouseEvent) => {
      e.preventDefault();
      navigate({ commit: to });
    },
  });
  return (
    <section class="card commit-view" aria-label="Commit" data-testid="commit-view">
      <a
        href={routeHref({ commit: null, view: 'history', path: '' })}
        onClick={(e) => {
          e.preventDefault();
          navigate({ commit: null, path: '', view: 'history' });
        }}
      >
        ← History
      </a>
      {error && (
        <p class="error" role="alert">
          {error}
        </p>
      )}
      {commit && (
        <header>
          <h2 ref={heading} tabIndex={-1}>
            {commit.message.split('\n')[0]}
          </h2>
          {commit.message.includes('\n') && (
            <pre class="message">{commit.message.slice(commit.message.indexOf('\n') + 1).trim()}</pre>
          )}
          <p class="muted">
            {commit.author.name} &lt;{commit.author.email}&gt; ·{' '}
            {new Date(commit.author.timestamp * 1000).toLocaleString()}
          </p>
          <p class="muted commit-ids">
            <code>{commit.oid}</code> <CopyButton text={commit.oid} label="Copy id" />{' '}
            <CopyButton
              text={() =>
                `${location.origin}${routeHref({ ...parseRoute(location.search), commit: commit.oid })}`
              }
              label="Copy link"
            />{' '}
            <a
              class="small-link"
              href={routeHref({ ref: commit.oid, commit: null, path: '' })}
              onClick={(e) => {
                e.preventDefault();
                navigate({ ref: commit.oid, commit: null, path: '' });
              }}
            >
              Browse files
            </a>
            {commit.parents.map((p) => (
              <span key={p}>
                {' '}
                parent{' '}
                <a {...link(p)}>
                  <code>{p.slice(0, 10)}</code>
                </a>
              </span>
            ))}
          </p>
        </header>
      )}
      {diff && (
        <>
          <p class="muted" data-testid="commit-summary">
            {diff.files.length} file{diff.files.length === 1 ? '' : 's'} changed
          </p>
          <CommitDiffs repoId={repoId} files={diff.files} gitRef={oid} testId="commit-files" />
        </>
      )}
    </section>
  );
}
