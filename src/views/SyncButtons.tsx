import { useRef, useState } from 'preact/hooks';
import type { FetchResult, PullProgress, PullResult, RefUpdate } from '../../workers/engine/index.ts';
import { withToken } from '../auth/withToken.ts';
import { whileBusy } from '../busy.ts';
import { formatBytes } from '../format.ts';
import { type BloblessError, gitClient } from '../gitClient.ts';
import { navigate, routeHref } from '../route.ts';
import { CloneProgress } from './CloneProgress.tsx';

type Outcome = { kind: 'fetch' | 'fetch-tags'; result: FetchResult } | { kind: 'pull'; result: PullResult };

/**
 * What Fetch leaves to Fetch tags: said beside the buttons, so nobody waits for a tag that cannot come.
 * "A day" is the engine's TAG_LIST_MAX_AGE_MS (workers/ops/sync/fetch.ts).
 */
const FETCH_TAGS_TITLE =
  'Fetch brings new commits and the annotated tags made on them, and lists every tag once a day. ' +
  'Fetch tags lists every tag on the server now: lightweight tags, and tags made or moved on commits you ' +
  'already have.';

/**
 * Fetch, Fetch tags and Pull for the repo header: progress while they run, then what changed (new
 * commits, branches and tags, forced updates, merge conflicts). `onUpdated` lets the view reload what it
 * shows.
 */
export function SyncButtons({ repoId, onUpdated }: { repoId: string; onUpdated: () => void }) {
  const [progress, setProgress] = useState<PullProgress | null>(null);
  const [busy, setBusy] = useState<Outcome['kind'] | null>(null);
  const [outcome, setOutcome] = useState<Outcome | null>(null);
  const [error, setError] = useState<string | null>(null);
  const controller = useRef<AbortController | null>(null);

  async function run(kind: Outcome['kind']) {
    setBusy(kind);
    setError(null);
    setOutcome(null);
    setProgress({ phase: 'connecting' });
    const abort = new AbortController();
    controller.current = abort;
    const onProgress = (p: PullProgress) => setProgress(p);
    try {
      if (kind === 'fetch' || kind === 'fetch-tags') {
        const tags = kind === 'fetch-tags' ? 'all' : 'follow';
        const result = await whileBusy('fetch', () =>
          withToken(() => gitClient.repo(repoId).fetch({ tags }, { onProgress, signal: abort.signal })),
        );
        setOutcome({ kind, result });
      } else {
        const result = await whileBusy('pull', () =>
          withToken(() => gitClient.repo(repoId).pull({}, { onProgress, signal: abort.signal })),
        );
        setOutcome({ kind, result });
      }
      onUpdated();
    } catch (err) {
      const e = err as BloblessError;
      setError(e.code === 'ABORTED' ? 'Cancelled; nothing of it was kept.' : e.message);
    } finally {
      setBusy(null);
      setProgress(null);
      controller.current = null;
    }
  }

  return (
    <div class="sync" data-testid="sync">
      <div class="actions">
        <button
          type="button"
          class="secondary"
          data-testid="fetch-button"
          disabled={!!busy}
          onClick={() => run('fetch')}
        >
          {busy === 'fetch' ? 'Fetching…' : 'Fetch'}
        </button>
        <button
          type="button"
          class="secondary"
          data-testid="fetch-tags-button"
          title={FETCH_TAGS_TITLE}
          disabled={!!busy}
          onClick={() => run('fetch-tags')}
        >
          {busy === 'fetch-tags' ? 'Fetching tags…' : 'Fetch tags'}
        </button>
        <button
          type="button"
          class="secondary"
          data-testid="pull-button"
          disabled={!!busy}
          onClick={() => run('pull')}
        >
          {busy === 'pull' ? 'Pulling…' : 'Pull'}
        </button>
        {busy && (
          <button type="button" class="link" onClick={() => controller.current?.abort()}>
            Cancel
          </button>
        )}
      </div>
      {progress && <SyncProgress progress={progress} />}
      {error && (
        <p class="error" role="alert">
          {error}
        </p>
      )}
      {outcome && <SyncSummary outcome={outcome} onClose={() => setOutcome(null)} />}
    </div>
  );
}

function SyncProgress({ progress }: { progress: PullProgress }) {
  if (progress.phase === 'negotiating' || progress.phase === 'merging') {
    const text =
      progress.phase === 'merging'
        ? 'Merging'
        : `Finding common history: round ${progress.round}, ${progress.haves} commits offered`;
    return (
      <div
        class="progress"
        data-testid="progress"
        data-phase={progress.phase}
        role="status"
        aria-live="polite"
      >
        <div class="progress-label">
          <span>{text}</span>
        </div>
        <progress aria-label={text} />
      </div>
    );
  }
  return <CloneProgress progress={progress} />;
}

const short = (ref: string) => ref.replace(/^refs\/(remotes\/|tags\/)?/, '');

function updateLine(u: RefUpdate): string {
  const to = u.new.slice(0, 7);
  switch (u.kind) {
    case 'new':
      return `${short(u.name)}: new (${to})`;
    case 'fast-forward':
      return `${short(u.name)}: ${u.old!.slice(0, 7)}..${to}`;
    case 'forced':
      return `${short(u.name)}: forced update ${u.old!.slice(0, 7)}...${to} (history rewritten on the remote)`;
    case 'tag-moved':
      return `${short(u.name)}: tag moved ${u.old!.slice(0, 7)} → ${to}`;
  }
}

function SyncSummary({ outcome, onClose }: { outcome: Outcome; onClose: () => void }) {
  const fetched = outcome.kind === 'pull' ? outcome.result.fetch : outcome.result;
  const pull = outcome.kind === 'pull' ? outcome.result : null;
  let headline: string;
  if (pull) {
    headline = {
      'up-to-date': `${pull.branch} is up to date.`,
      'fast-forward': `${pull.branch} fast-forwarded by ${pull.newCommits} commit${pull.newCommits === 1 ? '' : 's'}.`,
      merged: `Merged origin/${pull.branch} into ${pull.branch} (${pull.newCommits} new commits).`,
      conflict: pull.merging
        ? `The merge stopped: ${pull.conflicts.length} file${pull.conflicts.length === 1 ? '' : 's'} changed on both sides. Resolve ${pull.conflicts.length === 1 ? 'it' : 'them'} under Changes, then commit the merge.`
        : `Could not merge: ${pull.conflicts.length} file${pull.conflicts.length === 1 ? '' : 's'} changed on both sides, and you have changes not committed. Commit them, then pull again; nothing was changed.`,
    }[pull.status];
  } else if (outcome.kind === 'fetch-tags' && fetched.updated.length === 0) {
    headline = 'Every tag is up to date.';
  } else {
    headline =
      fetched.updated.length === 0
        ? 'Already up to date.'
        : `${fetched.newCommits} new commit${fetched.newCommits === 1 ? '' : 's'}, ${fetched.updated.length} ref${fetched.updated.length === 1 ? '' : 's'} updated.`;
  }
  return (
    <div
      class={pull?.status === 'conflict' ? 'warning sync-summary' : 'sync-summary'}
      data-testid="sync-summary"
      role="status"
    >
      <p>
        <strong>{headline}</strong>{' '}
        <span class="muted">
          {formatBytes(fetched.bytesReceived)} in {fetched.requests} request
          {fetched.requests === 1 ? '' : 's'}
        </span>
      </p>
      {outcome.kind !== 'fetch-tags' && (
        <p class="muted" data-testid="fetch-tags-hint">
          {fetched.tags === 'all'
            ? 'Every tag was listed too, as a fetch does once a day.'
            : 'Tags made on earlier commits, and lightweight tags, come with Fetch tags, or with the first fetch a day after tags were last listed.'}
        </p>
      )}
      {pull?.status === 'conflict' && (
        <ul data-testid="conflicts">
          {pull.conflicts.map((path) => (
            <li key={path}>
              <code>{path}</code>
            </li>
          ))}
        </ul>
      )}
      {pull?.merging && (
        <p>
          <a
            href={routeHref({ path: '', commit: null, view: 'changes' })}
            onClick={(e) => {
              e.preventDefault();
              onClose();
              navigate({ path: '', commit: null, view: 'changes' });
            }}
          >
            Resolve the conflicts
          </a>
        </p>
      )}
      {fetched.forced.length > 0 && (
        <p class="warning" data-testid="forced">
          Forced updates: {fetched.forced.map(updateLine).join('; ')}
        </p>
      )}
      {fetched.updated.length > 0 && (
        <details>
          <summary>Refs updated</summary>
          <ul>
            {fetched.updated.map((u) => (
              <li key={u.name}>{updateLine(u)}</li>
            ))}
          </ul>
        </details>
      )}
      {fetched.warnings.map((w) => (
        <p key={w} class="warning">
          {w}
        </p>
      ))}
      <button type="button" class="link" onClick={onClose}>
        Dismiss
      </button>
    </div>
  );
}
