import { useEffect, useRef, useState } from 'preact/hooks';
import type { FileChange, FileDiff } from '../../workers/engine/index.ts';
import { withToken } from '../auth/withToken.ts';
import { type BloblessError, gitClient } from '../gitClient.ts';
import { navigate, routeHref } from '../route.ts';
import { DiffHunks } from './DiffHunks.tsx';

const STATUS: Record<FileChange['status'], string> = {
  added: 'A',
  deleted: 'D',
  modified: 'M',
  'type-changed': 'T',
};
const WORD: Record<FileChange['status'], string> = {
  added: 'added',
  deleted: 'deleted',
  modified: 'modified',
  'type-changed': 'type changed',
};

// A diff longer than this starts folded: a generated file should not bury the rest of the commit.
const LONG_DIFF_LINES = 800;

/**
 * Every file a commit (or a comparison) changed, each one's diff inline and foldable, as code hosts show
 * them. A file's two blobs are fetched when it comes near the screen, so a commit of a thousand files
 * costs only what is scrolled to.
 */
export function CommitDiffs({
  repoId,
  files,
  gitRef,
  testId,
}: {
  repoId: string;
  files: FileChange[];
  /** Where "View file" opens a file: the commit, or the comparison's head. */
  gitRef: string;
  testId?: string;
}) {
  if (files.length === 0) return <p class="muted">No file changes.</p>;
  return (
    <>
      <nav class="diff-index" aria-label="Files changed">
        <ul>
          {files.map((f, i) => (
            <li key={f.path}>
              <span class={`status status-${f.status}`} title={WORD[f.status]}>
                {STATUS[f.status]}
              </span>{' '}
              <a href={`#diff-${i}`}>{f.path}</a>
            </li>
          ))}
        </ul>
      </nav>
      <ul class="file-diffs" data-testid={testId}>
        {files.map((f, i) => (
          <FileDiffBlock
            key={`${f.path} ${f.oldOid} ${f.newOid}`}
            repoId={repoId}
            change={f}
            index={i}
            gitRef={gitRef}
          />
        ))}
      </ul>
    </>
  );
}

function FileDiffBlock({
  repoId,
  change,
  index,
  gitRef,
}: {
  repoId: string;
  change: FileChange;
  index: number;
  gitRef: string;
}) {
  const [open, setOpen] = useState(true);
  const [near, setNear] = useState(false);
  const [diff, setDiff] = useState<FileDiff | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [long, setLong] = useState(false);
  const box = useRef<HTMLLIElement>(null);

  useEffect(() => {
    const el = box.current;
    if (!el) return;
    const seen = new IntersectionObserver((items) => items.some((i) => i.isIntersecting) && setNear(true), {
      rootMargin: '600px 0px',
    });
    seen.observe(el);
    return () => seen.disconnect();
  }, []);

  useEffect(() => {
    if (!near || !open || diff || error) return;
    withToken(() =>
      gitClient.repo(repoId).diffFile({ oldOid: change.oldOid ?? null, newOid: change.newOid ?? null }),
    ).then(
      (d) => {
        setDiff(d);
        const lines = d.hunks.reduce((n, h) => n + h.lines.length, 0);
        if (lines > LONG_DIFF_LINES) setLong(true);
      },
      (e: BloblessError) => setError(`${e.message} (${e.code})`),
    );
  }, [near, open]);

  const added = diff?.hunks.reduce((n, h) => n + h.lines.filter((l) => l.kind === '+').length, 0) ?? 0;
  const removed = diff?.hunks.reduce((n, h) => n + h.lines.filter((l) => l.kind === '-').length, 0) ?? 0;
  return (
    <li
      class="file-diff"
      id={`diff-${index}`}
      ref={box}
      data-path={change.path}
      data-status={STATUS[change.status]}
    >
      <div class="file-diff-head">
        <button
          type="button"
          class="link fold"
          aria-expanded={open && !long}
          aria-controls={`diff-body-${index}`}
          onClick={() => {
            if (long) setLong(false);
            else setOpen(!open);
          }}
        >
          <span aria-hidden="true">{open && !long ? '▾' : '▸'}</span>
          <span class={`status status-${change.status}`} title={WORD[change.status]}>
            {STATUS[change.status]}
          </span>
          <span class="sr-only">{WORD[change.status]}:</span>{' '}
          <span class="file-diff-path">{change.path}</span>
        </button>
        {diff && !diff.binary && (
          <span class="muted diff-count">
            <span class="plus">+{added}</span> <span class="minus">−{removed}</span>
          </span>
        )}
        {change.newOid && (
          <a
            class="muted small-link"
            href={routeHref({ ref: gitRef, path: change.path, commit: null })}
            onClick={(e) => {
              e.preventDefault();
              navigate({ ref: gitRef, path: change.path, commit: null });
            }}
          >
            View file
          </a>
        )}
      </div>
      <div id={`diff-body-${index}`}>
        {open && long && (
          <p class="muted diff-note">
            A long diff, folded.{' '}
            <button type="button" class="link" onClick={() => setLong(false)}>
              Show it
            </button>
          </p>
        )}
        {open && !long && !diff && !error && <p class="muted diff-note">Fetching both versions…</p>}
        {error && <p class="error">{error}</p>}
        {open && !long && diff && <DiffHunks diff={diff} path={change.path} />}
      </div>
    </li>
  );
}
