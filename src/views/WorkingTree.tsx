import { useEffect, useState } from 'preact/hooks';
import type { FileDiff, PushResult, StatusEntry, WorktreeStatus } from '../../workers/engine/index.ts';
import { withToken } from '../auth/withToken.ts';
import { loadAuthor, saveAuthor } from '../authorSettings.ts';
import { type BloblessError, gitClient } from '../gitClient.ts';
import { CommitDialog } from './CommitDialog.tsx';
import { DiffHunks } from './DiffHunks.tsx';
import { FileEditor } from './FileEditor.tsx';

const STAGED = { added: 'A', modified: 'M', deleted: 'D' } as const;
const UNSTAGED = { modified: 'M', deleted: 'D', untracked: '?' } as const;

type Failure = { message: string; code: string };

/**
 * The working tree of a repo: edit, create, rename and delete files, stage them one by one, see what is
 * staged, commit, push, and manage branches. Opening it checks out HEAD when the repo has no working tree.
 * `openPath` is the file the repo view shows, offered for editing.
 */
export function WorkingTree({
  repoId,
  openPath,
  onCommitted,
}: {
  repoId: string;
  openPath: string;
  onCommitted: (branch: string | null) => void;
}) {
  const [status, setStatus] = useState<WorktreeStatus | null>(null);
  const [editing, setEditing] = useState<string | null>(null);
  const [committing, setCommitting] = useState(false);
  const [busy, setBusy] = useState<string | null>('Preparing the working tree…');
  const [error, setError] = useState<Failure | null>(null);
  const [pushed, setPushed] = useState<PushResult | null>(null);
  // What the pull offered after a rejected push did, until the next push.
  const [notice, setNotice] = useState<string | null>(null);
  const [diffs, setDiffs] = useState<Record<string, FileDiff | string>>({});
  // The shown path, when it is a file of the working tree (not a folder, not a file of another commit only).
  const [openFile, setOpenFile] = useState<string | null>(null);

  async function refresh() {
    try {
      setStatus(await gitClient.repo(repoId).status());
      setDiffs({});
    } catch (err) {
      setError(failure(err));
    } finally {
      setBusy(null);
    }
  }
  useEffect(() => {
    setOpenFile(null);
    if (!openPath) return;
    let current = true;
    gitClient
      .repo(repoId)
      .readWorktreeFile({ path: openPath })
      .then(
        () => current && setOpenFile(openPath),
        () => undefined,
      );
    return () => {
      current = false;
    };
  }, [repoId, openPath, status]);
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

  function newFile() {
    const path = prompt('New file (path from the repository root):');
    if (path)
      void run(`Creating ${path}…`, () =>
        gitClient.repo(repoId).writeWorktreeFile({ path, content: '' }),
      ).then(() => setEditing(path));
  }
  function rename(path: string) {
    const to = prompt(`Rename ${path} to:`, path);
    if (to && to !== path)
      void run(`Renaming ${path}…`, () => gitClient.repo(repoId).renameWorktreeFile({ from: path, to }));
  }
  function remove(path: string) {
    if (confirm(`Delete ${path} from the working tree?`)) {
      void run(`Deleting ${path}…`, () => gitClient.repo(repoId).deleteWorktreeFile({ path }));
    }
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
  }

  const entries = status?.entries ?? [];
  const staged = entries.filter((e) => e.staged);
  return (
    <section class="card working-tree" data-testid="working-tree" aria-label="Working tree">
      <div class="wt-head">
        <h3>
          Changes{' '}
          {status && <span class="muted">on {status.branch ?? `detached ${status.head.slice(0, 10)}`}</span>}
        </h3>
        <div class="wt-actions">
          {openFile && !editing && (
            <>
              <button type="button" data-testid="edit-file" onClick={() => setEditing(openFile)}>
                Edit {baseName(openFile)}
              </button>
              <button type="button" onClick={() => rename(openFile)}>
                Rename {baseName(openFile)}
              </button>
              <button type="button" onClick={() => remove(openFile)}>
                Delete {baseName(openFile)}
              </button>
            </>
          )}
          <button type="button" onClick={newFile}>
            New file
          </button>
          <button
            type="button"
            data-testid="commit-open"
            disabled={staged.length === 0 && !status}
            onClick={() => setCommitting(true)}
          >
            Commit…
          </button>
          <button type="button" data-testid="push" disabled={!status?.branch || busy !== null} onClick={push}>
            Push
          </button>
          <BranchMenu repoId={repoId} current={status?.branch ?? null} run={run} onSwitched={onCommitted} />
        </div>
      </div>
      {busy && (
        <p class="muted" aria-live="polite">
          {busy}
        </p>
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
            : `Pushed ${pushed.ref.replace('refs/heads/', '')}: ${count(pushed.sent.commits, 'commit')}, ${count(pushed.sent.trees, 'tree')}, ${count(pushed.sent.blobs, 'file')} sent.`}
        </p>
      )}
      {editing && (
        <FileEditor
          repoId={repoId}
          path={editing}
          onSaved={() => void refresh()}
          onClose={() => setEditing(null)}
        />
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
              onEdit={() => setEditing(e.path)}
              onRename={() => rename(e.path)}
              onDelete={() => remove(e.path)}
            />
          ))}
        </ul>
      )}
      {committing && (
        <CommitDialog
          staged={staged.map((e) => e.path)}
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
  onEdit: () => void;
  onRename: () => void;
  onDelete: () => void;
}) {
  const { entry: e, diff } = props;
  const present = e.unstaged !== 'deleted' && !(e.staged === 'deleted' && e.unstaged === null);
  return (
    <li
      class="changed-file status-row"
      data-path={e.path}
      data-staged={e.staged ?? ''}
      data-unstaged={e.unstaged ?? ''}
    >
      <span
        class={`status status-${e.staged ?? 'none'}`}
        title={e.staged ? `staged: ${e.staged}` : 'nothing staged'}
      >
        {e.staged ? STAGED[e.staged] : ' '}
      </span>
      <span
        class={`status status-${e.unstaged ?? 'none'}`}
        title={e.unstaged ? `not staged: ${e.unstaged}` : 'nothing unstaged'}
      >
        {e.unstaged ? UNSTAGED[e.unstaged] : ' '}
      </span>{' '}
      <code>{e.path}</code>
      <span class="row-actions">
        {e.unstaged && (
          <button type="button" class="link" onClick={props.onStage}>
            Stage
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
        {present && (
          <>
            <button type="button" class="link" onClick={props.onEdit}>
              Edit
            </button>
            <button type="button" class="link" onClick={props.onRename}>
              Rename
            </button>
            <button type="button" class="link" onClick={props.onDelete}>
              Delete
            </button>
          </>
        )}
      </span>
      {typeof diff === 'string' && <p class="error">{diff}</p>}
      {diff && typeof diff !== 'string' && <DiffHunks diff={diff} />}
    </li>
  );
}

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
  function create() {
    const name = prompt('New branch name (made from HEAD, then checked out):');
    if (!name) return;
    void run(`Creating ${name}…`, async () => {
      await gitClient.repo(repoId).createBranch({ name });
      await gitClient.repo(repoId).checkout({ ref: name });
      onSwitched(name);
    });
  }
  function remove() {
    const name = prompt(`Delete which local branch? (not ${current ?? 'the current one'})`);
    if (name) void run(`Deleting ${name}…`, () => gitClient.repo(repoId).deleteBranch({ name }));
  }
  return (
    <>
      <button type="button" onClick={create}>
        New branch
      </button>
      <button type="button" onClick={remove}>
        Delete branch…
      </button>
    </>
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
        setNote(
          `Not merged: both sides changed ${result.conflicts.join(', ')}. Nothing was changed here; your commits are safe.`,
        );
      } else {
        onPulled(
          result.status === 'up-to-date'
            ? 'Already up to date: push again.'
            : `Pulled ${result.newCommits} commit${result.newCommits === 1 ? '' : 's'} (${result.status}): push again.`,
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

function baseName(path: string): string {
  return path.slice(path.lastIndexOf('/') + 1);
}

function count(n: number, noun: string): string {
  return `${n} ${noun}${n === 1 ? '' : 's'}`;
}

function failure(err: unknown): Failure {
  const e = err as BloblessError;
  return { message: e.message, code: e.code ?? 'INTERNAL' };
}
