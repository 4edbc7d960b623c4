import { useEffect, useRef, useState } from 'preact/hooks';
import type { WorktreeStatus } from '../../workers/engine/index.ts';
import type { CodeEditor } from '../codeEditor.ts';
import { focusIfLost } from '../focus.ts';
import { type BloblessError, gitClient } from '../gitClient.ts';
import { navigate } from '../route.ts';
import { Breadcrumbs } from './Breadcrumbs.tsx';

/**
 * A file of the working tree in CodeMirror (its code and the file's language mode loaded on first use),
 * the full width of the window. Save (or Ctrl+S) writes it to the working tree, unstaged; then it can be
 * staged from here or reviewed with the other changes. The working tree is checked out first if the
 * repository has none yet (a first-view clone until its first edit).
 */
export function EditView({ repoId, gitRef, path }: { repoId: string; gitRef: string; path: string }) {
  const host = useRef<HTMLDivElement>(null);
  const editor = useRef<CodeEditor | null>(null);
  const [status, setStatus] = useState<WorktreeStatus | null>(null);
  const [state, setState] = useState<'preparing' | 'loading' | 'clean' | 'dirty' | 'saving' | 'saved'>(
    'preparing',
  );
  const [error, setError] = useState<string | null>(null);
  const [staged, setStaged] = useState(false);
  const heading = useRef<HTMLHeadingElement>(null);

  useEffect(() => {
    let cancelled = false;
    setState('preparing');
    setError(null);
    setStaged(false);
    gitClient
      .repo(repoId)
      .status()
      .then((s) => {
        if (cancelled) return null;
        setStatus(s);
        setState('loading');
        return Promise.all([
          gitClient
            .repo(repoId)
            .readWorktreeFile({ path: path })
            .catch(() => new Uint8Array()),
          import('../codeEditor.ts'),
        ]);
      })
      .then((loaded) => {
        if (!loaded || cancelled || !host.current) return;
        const [bytes, { createEditor }] = loaded;
        editor.current?.destroy();
        editor.current = createEditor(host.current, new TextDecoder().decode(bytes), path, () => {
          setState('dirty');
          setStaged(false);
        });
        setState('clean');
        focusIfLost(heading.current);
      })
      .catch((err: BloblessError) => !cancelled && setError(err.message));
    return () => {
      cancelled = true;
      editor.current?.destroy();
      editor.current = null;
    };
  }, [repoId, path]);

  async function save() {
    if (!editor.current || state !== 'dirty') return;
    setState('saving');
    try {
      await gitClient.repo(repoId).writeWorktreeFile({ path: path, content: editor.current.text() });
      setState('saved');
    } catch (err) {
      setError((err as BloblessError).message);
      setState('dirty');
    }
  }

  async function stage() {
    try {
      await gitClient.repo(repoId).stage({ paths: [path] });
      setStaged(true);
    } catch (err) {
      setError((err as BloblessError).message);
    }
  }

  const entry = status?.entries.find((e) => e.path === path);
  const conflicted = !!entry?.conflict;
  const branch = status?.branch ?? null;
  return (
    <section
      class="card edit-view"
      aria-label={`Editing ${path}`}
      data-testid="file-editor"
      onKeyDown={(e) => {
        if ((e.ctrlKey || e.metaKey) && e.key.toLowerCase() === 's') {
          e.preventDefault();
          void save();
        }
      }}
    >
      <Breadcrumbs path={path} />
      <div class="editor-bar">
        <h2 class="editor-title" ref={heading} tabIndex={-1}>
          Editing <code>{path}</code>
          {status && (
            <span class="muted">
              {' '}
              on {branch ?? `detached ${status.head.slice(0, 10)}`}
              {branch && branch !== gitRef && ` (you were reading ${gitRef})`}
            </span>
          )}
        </h2>
        <span class="muted" role="status">
          {state === 'preparing'
            ? 'Preparing the working tree…'
            : state === 'loading'
              ? 'Loading the editor…'
              : state === 'dirty'
                ? 'Unsaved changes'
                : state === 'saving'
                  ? 'Saving…'
                  : state === 'saved'
                    ? staged
                      ? 'Saved and staged'
                      : 'Saved to the working tree'
                    : ''}
        </span>
        <span class="editor-actions">
          <button
            type="button"
            data-testid="editor-save"
            disabled={state !== 'dirty'}
            onClick={save}
            title="Save (Ctrl+S)"
          >
            Save
          </button>
          {(state === 'saved' || conflicted) && !staged && (
            <button type="button" class="secondary" data-testid="editor-stage" onClick={stage}>
              {conflicted ? 'Mark as resolved' : 'Stage'}
            </button>
          )}
          <button
            type="button"
            class="secondary"
            data-testid="editor-changes"
            onClick={() => navigate({ path: '', view: 'changes' })}
          >
            Review changes
          </button>
          <button type="button" class="link" onClick={() => navigate({ view: null })}>
            Close
          </button>
        </span>
      </div>
      {conflicted && !staged && (
        <p class="warning" data-testid="conflict-note">
          Both sides changed this file. Keep what should stay between the{' '}
          <code>&lt;&lt;&lt;&lt;&lt;&lt;&lt;</code>, <code>=======</code> and{' '}
          <code>&gt;&gt;&gt;&gt;&gt;&gt;&gt;</code> lines, delete the markers, save, then mark it as resolved.
        </p>
      )}
      {error && (
        <p class="error" role="alert">
          {error}
        </p>
      )}
      <div ref={host} class="editor-host" />
      <p class="muted editor-help">
        Tab indents; press Escape, then Tab, to leave the editor. Ctrl+F searches.
      </p>
    </section>
  );
}
