import { useEffect, useState } from 'preact/hooks';
import type { FileDiff, PushResult, StatusEntry, WorktreeStatus } from '../../workers/engine/index.ts';
import { askConfirm, askText } from '../ask.ts';
import { withToken } from '../auth/withToken.ts';
import { loadAuthor, saveAuthor } from '../authorSettings.ts';
import { type BloblessError, gitClient } from '../gitClient.ts';
import { navigate } from '../route.ts';
import { CommitDialog } from './CommitDialog.tsx';
import { DiffHunks } from './DiffHunks.tsx';

const STAGED = { added: 'A', modified: 'M', deleted: 'D' } as const;
const UNSTAGED = { modified: 'M', deleted: 'D', untracked: '?' } as const;

type Failure = { message: string; code: string };

/** Commits on the branch that its remote-tracking branch lacks; null when the remote has no such branch. */
async function unpushed(repoId: string, branch: string): Promise<{ count: number; more: boolean } | null> {
  try {
    const c = await gitClient
      .repo(repoId)
      .compare({ base: `refs/remotes/origin/${branch}`, head: `refs/heads/${branch}` });
    return { count: c.commits.length, more: c.truncated };
  } catch {
    return null;
  }
}

const plural = (n: number, noun: string) => `${n} ${noun}${n === 1 ? '' : 's'}`;

/**
 * The working tree of a repo (the Changes view): what changed, staged or not, Stage all, Commit (only
 * with something staged), "N commits to push" with Push, and a merge a conflicting pull left in progress,
 * file by file. Editing happens in the editor view (the file view's Edit, or Edit here); creating, renaming
 * and deleting ask in dialogs; deleting a branch sits in the branch menu, away from the common actions.
 * Opening it checks out HEAD when the repo has no working tree.
 */
export function WorkingTree({
  repoId,
  onCommitted,
}: {
  repoId: string;
  onCommitted: (branch: string | null) => void;
}) {
  const [status, setStatus] = useState<WorktreeStatus | null>(null);
  const [ahead, setAhead] = useState<{ count: number; more: boolean } | null | undefined>(undefined);
  const [committing, setCommitting] = useState(false);
  const [busy, setBusy] = useState<string | null>('Preparing the working tree…');
  const [error, setError] = useState<Failure | null>(null);
  const [pushed, setPushed] = useState<PushResult | null>(null);
  // What the pull offered after a rejected push did, until the next push.
  const [notice, setNotice] = useState<string | null>(null);
  const [diffs, setDiffs] = useState<Record<string, FileDiff | string>>({});

  async function refresh() {
    try {
      const s = await gitClient.repo(repoId).status();
      setStatus(s);
      setDiffs({});
      setAhead(s.branch ? await unpushed(repoId, s.branch) : null);
    } catch (err) {
      setError(failure(err));
    } finally {
      setBusy(null);
    }
  }
  useEffect(() => {
    setStatus(null);
    setBusy('Preparing the working tree…');
    void refresh();
  }, [repoId]);

  /** Runs one change and shows the new status; a failure is shown, never thrown. */
  async function run(label: string, action: () => Promise<unknown>) {
    setError(null);
    setPushed(null);
    setBusy(label);
    try {
      await action();
    } catch (err) {
      setError(failure(err));
    }
    await refresh();
  }

  async function toggleDiff(path: string) {
    if (diffs[path]) {
      const { [path]: _, ...rest } = diffs;
      setDiffs(rest);
      return;
    }
    try {
      const diff = await gitClient.repo(repoId).stagedDiff({ path });
      setDiffs((d) => ({ ...d, [path]: diff }));
    } catch (err) {
      setDiffs((d) => ({ ...d, [path]: (err as Error).message }));
    }
  }

  async function newFile() {
    const path = await askText({
      title: 'New file',
      label: 'Path from the repository root (folders are made as needed)',
      confirm: 'Create',
      check: (p) => (status?.entries.some((e) => e.path === p) ? `${p} exists already.` : null),
    });
    if (!path) return;
    await run(`Creating ${path}…`, () =>
      gitClient.repo(repoId).writeWorktreeFile({ path: path, content: '' }),
    );
    navigate({ path, view: 'edit' });
  }
  async function rename(path: string) {
    const to = await askText({
      title: `Rename ${path}`,
      label: 'New path',
      initial: path,
      confirm: 'Rename',
    });
    if (to && to !== path)
      void run(`Renaming ${path}…`, () => gitClient.repo(repoId).renameWorktreeFile({ from: path, to }));
  }
  async function remove(path: string) {
    const sure = await askConfirm({
      title: `Delete ${path}?`,
      message: 'It is removed from the working tree; stage and commit the deletion to record it.',
      confirm: 'Delete',
      danger: true,
    });
    if (sure) void run(`Deleting ${path}…`, () => gitClient.repo(repoId).deleteWorktreeFile({ path: path }));
  }
  async function abortMerge() {
    const sure = await askConfirm({
      title: 'Abort the merge?',
      message:
        'Every file the merge changed goes back to how your branch had it, resolutions included. Your commits stay.',
      confirm: 'Abort merge',
      danger: true,
    });
    if (sure) void run('Aborting the merge…', () => gitClient.repo(repoId).abortMerge());
  }

  async function push() {
    setError(null);
    setPushed(null);
    setNotice(null);
    setBusy('Pushing…');
    try {
      setPushed(await withToken(() => gitClient.repo(repoId).push()));
    } catch (err) {
      setError(failure(err));
    } finally {
      setBusy(null);
    }
    if (status?.branch) setAhead(await unpushed(repoId, status.branch));
  }

  const entries = status?.entries ?? [];
  const staged = entries.filter((e) => e.staged);
  const unstaged = entries.filter((e) => e.unstaged && !e.conflict);
  const merging = status?.merging ?? null;
  const conflicts = entries.filter((e) => e.conflict);
  const canCommit = merging ? conflicts.length === 0 : staged.length > 0;
  return (
    <section class="card working-tree" data-testid="working-tree" aria-labelledby="wt-title">
      <div class="wt-head">
        <h2 id="wt-title">
          Changes{' '}
          {status && <span class="muted">on {status.branch ?? `detached ${status.head.slice(0, 10)}`}</span>}
        </h2>
        <div class="wt-actions" role="toolbar" aria-label="Working tree actions">
          <button
            type="button"
            class="secondary"
            data-testid="stage-all"
            disabled={unstaged.length === 0 || busy !== null}
            onClick={() =>
              run('Staging every change…', () =>
                gitClient.repo(repoId).stage({ paths: unstaged.map((e) => e.path) }),
              )
            }
          >
            Stage all
          </button>
          <button
            type="button"
            data-testid="commit-open"
            disabled={!canCommit || busy !== null}
            title={canCommit ? undefined : merging ? 'Resolve every conflict first' : 'Stage a change first'}
            onClick={() => setCommitting(true)}
          >
            {merging ? 'Commit merge…' : 'Commit…'}
          </button>
          <span class="push-group">
            <span class="muted" data-testid="ahead" data-head={status?.head}>
              {ahead === null && status?.branch
                ? 'Not on the remote yet'
                : ahead && ahead.count > 0
                  ? `${plural(ahead.count, 'commit')}${ahead.more ? '+' : ''} to push`
                  : ahead
                    ? 'Nothing to push'
                    : ''}
            </span>
            <button
              type="button"
              data-testid="push"
              class={ahead && ahead.count > 0 ? undefined : 'secondary'}
              disabled={!status?.branch || busy !== null || !!merging}
              onClick={push}
            >
              Push
            </button>
          </span>
          <button type="button" class="secondary" data-testid="new-file" onClick={() => void newFile()}>
            New file…
          </button>
          <BranchMenu repoId={repoId} current={status?.branch ?? null} run={run} onSwitched={onCommitted} />
        </div>
      </div>
      {busy && (
        <p class="muted" role="status">
          {busy}
        </p>
      )}
      {merging && (
        <div class="warning merge-banner" data-testid="merge-banner">
          <p>
            <strong>
              Merging {merging.head.slice(0, 10)}:{' '}
              {conflicts.length > 0
                ? `${plural(conflicts.length, 'file')} to resolve.`
                : 'every conflict is resolved. Commit the merge.'}
            </strong>{' '}
            Edit each file marked “both modified”, keep what should stay, save and mark it as resolved.
          </p>
          <button type="button" class="danger" data-testid="merge-abort" onClick={() => void abortMerge()}>
            Abort merge…
          </button>
        </div>
      )}
      {error && (
        <WriteError
          repoId={repoId}
          error={error}
          onPulled={(message) => {
            setError(null);
            setNotice(message);
            void refresh();
            onCommitted(null);
          }}
        />
      )}
      {notice && (
        <p class="notice" data-testid="pull-note">
          {notice}
        </p>
      )}
      {pushed && (
        <p class="notice" role="status" data-testid="push-result">
          {pushed.upToDate
            ? 'Everything is pushed already.'
            : `Pushed ${pushed.ref.replace('refs/heads/', '')}: ${plural(pushed.sent.commits, 'commit')}, ${plural(pushed.sent.trees, 'tree')}, ${plural(pushed.sent.blobs, 'file')} sent.`}
        </p>
      )}
      {status && entries.length === 0 && <p class="muted">No changes in the working tree.</p>}
      {entries.length > 0 && (
        <ul class="changed-files" data-testid="status-list">
          {entries.map((e) => (
            <StatusRow
              key={e.path}
              entry={e}
              diff={diffs[e.path]}
              onStage={() =>
                run(`Staging ${e.path}…`, () => gitClient.repo(repoId).stage({ paths: [e.path] }))
              }
              onUnstage={() =>
                run(`Unstaging ${e.path}…`, () => gitClient.repo(repoId).unstage({ paths: [e.path] }))
              }
              onDiff={() => toggleDiff(e.path)}
              onRename={() => void rename(e.path)}
              onDelete={() => void remove(e.path)}
            />
          ))}
        </ul>
      )}
      {committing && (
        <CommitDialog
          staged={staged.map((e) => e.path)}
          initialMessage={merging?.message.trim() ?? ''}
          merge={!!merging}
          initialAuthor={loadAuthor()}
          onCancel={() => setCommitting(false)}
          onCommit={async (message, author, amend) => {
            saveAuthor(author);
            const result = await gitClient.repo(repoId).commit({ message, author, amend });
            setCommitting(false);
            await refresh();
            onCommitted(result.branch);
          }}
        />
      )}
    </section>
  );
}

function StatusRow(props: {
  entry: StatusEntry;
  diff: FileDiff | string | undefined;
  onStage: () => void;
  onUnstage: () => void;
  onDiff: () => void;
  onRename: () => void;
  onDelete: () => void;
}) {
  const { entry: e, diff } = props;
  const present = e.unstaged !== 'deleted' && !(e.staged === 'deleted' && e.unstaged === null);
  return (
    <li
      class={e.conflict ? 'changed-file status-row conflict' : 'changed-file status-row'}
      data-path={e.path}
      data-staged={e.staged ?? ''}
      data-unstaged={e.unstaged ?? ''}
      data-conflict={e.conflict ? 'true' : undefined}
    >
      <span
        class={`status status-${e.staged ?? 'none'}`}
        title={e.staged ? `staged: ${e.staged}` : 'nothing staged'}
      >
        {e.conflict ? 'U' : e.staged ? STAGED[e.staged] : ' '}
      </span>
      <span
        class={`status status-${e.unstaged ?? 'none'}`}
        title={e.unstaged ? `not staged: ${e.unstaged}` : 'nothing unstaged'}
      >
        {e.conflict ? 'U' : e.unstaged ? UNSTAGED[e.unstaged] : ' '}
      </span>{' '}
      <code>{e.path}</code>
      {e.conflict && <span class="badge conflict-badge">both modified</span>}
      <span class="row-actions">
        {e.conflict && present && (
          <button
            type="button"
            class="link"
            data-testid="resolve"
            onClick={() => navigate({ path: e.path, view: 'edit' })}
          >
            Resolve in editor
          </button>
        )}
        {e.unstaged && (
          <button type="button" class="link" onClick={props.onStage}>
            {e.conflict ? 'Mark as resolved' : 'Stage'}
          </button>
        )}
        {e.staged && (
          <>
            <button type="button" class="link" onClick={props.onUnstage}>
              Unstage
            </button>
            <button type="button" class="link" onClick={props.onDiff}>
              {diff ? 'Hide diff' : 'Staged diff'}
            </button>
          </>
        )}
        {present && !e.conflict && (
          <button type="button" class="link" onClick={() => navigate({ path: e.path, view: 'edit' })}>
            Edit
          </button>
        )}
        {present && (
          <details class="menu row-menu">
            <summary class="link" aria-label={`More actions for ${e.path}`}>
              More
            </summary>
            <div class="menu-items">
              <button type="button" class="link" onClick={props.onRename}>
                Rename…
              </button>
              <button type="button" class="link danger-text" onClick={props.onDelete}>
                Delete…
              </button>
            </div>
          </details>
        )}
      </span>
      {typeof diff === 'string' && <p class="error">{diff}</p>}
      {diff && typeof diff !== 'string' && <DiffHunks diff={diff} />}
    </li>
  );
}

/** Branches: making one is common, deleting one is destructive, so both live in this menu, apart. */
function BranchMenu({
  repoId,
  current,
  run,
  onSwitched,
}: {
  repoId: string;
  current: string | null;
  run: (label: string, action: () => Promise<unknown>) => Promise<void>;
  onSwitched: (branch: string | null) => void;
}) {
  async function create() {
    const name = await askText({
      title: 'New branch',
      label: 'Name (made from HEAD, then checked out)',
      confirm: 'Create branch',
    });
    if (!name) return;
    void run(`Creating ${name}…`, async () => {
      await gitClient.repo(repoId).createBranch({ name });
      await gitClient.repo(repoId).checkout({ ref: name });
      onSwitched(name);
    });
  }
  async function remove() {
    const name = await askText({
      title: 'Delete a local branch',
      label: `Branch name (not ${current ?? 'the current one'})`,
      confirm: 'Delete branch',
      check: (n) => (n === current ? 'That is the branch you are on: switch to another first.' : null),
    });
    if (name) void run(`Deleting ${name}…`, () => gitClient.repo(repoId).deleteBranch({ name: name }));
  }
  return (
    <details class="menu" data-testid="branch-menu">
      <summary class="secondary">Branch</summary>
      <div class="menu-items">
        <button type="button" class="link" onClick={() => void create()}>
          New branch…
        </button>
        <button type="button" class="link danger-text" onClick={() => void remove()}>
          Delete branch…
        </button>
      </div>
    </details>
  );
}

/** A failed write: the worker's message, and for a rejected push the pull that lets it go through. */
function WriteError({
  repoId,
  error,
  onPulled,
}: {
  repoId: string;
  error: Failure;
  onPulled: (message: string) => void;
}) {
  const [pulling, setPulling] = useState(false);
  const [note, setNote] = useState<string | null>(null);
  async function pull() {
    setPulling(true);
    setNote(null);
    try {
      const author = loadAuthor();
      const result = await withToken(() =>
        gitClient.repo(repoId).pull(author.name && author.email ? { author } : {}),
      );
      if (result.status === 'conflict') {
        if (result.merging)
          onPulled(
            `Both sides changed ${result.conflicts.join(', ')}: resolve the conflicts below, commit the merge, then push.`,
          );
        else
          setNote(
            `Not merged: both sides changed ${result.conflicts.join(', ')}, and you have changes that are not committed. Commit them first; nothing was changed.`,
          );
      } else {
        onPulled(
          result.status === 'up-to-date'
            ? 'Already up to date: push again.'
            : `Pulled ${plural(result.newCommits, 'commit')} (${result.status}): push again.`,
        );
      }
    } catch (err) {
      setNote((err as BloblessError).message);
    } finally {
      setPulling(false);
    }
  }
  return (
    <div class="error" role="alert" data-testid="write-error" data-code={error.code}>
      <strong>{error.message}</strong>
      {error.code === 'PUSH_NON_FAST_FORWARD' && (
        <p>
          <button type="button" data-testid="pull-offer" disabled={pulling} onClick={pull}>
            {pulling ? 'Pulling…' : 'Pull, then push again'}
          </button>
        </p>
      )}
      {note && <p>{note}</p>}
      <p class="muted">Error code: {error.code}</p>
    </div>
  );
}

function failure(err: unknown): Failure {
  const e = err as BloblessError;
  return { message: e.message, code: e.code ?? 'INTERNAL' };
}
