import { useEffect, useRef, useState } from 'preact/hooks';
import type { CodeEditor } from '../codeEditor.ts';
import { type BloblessError, gitClient } from '../gitClient.ts';

/** A working file in CodeMirror (loaded on first use); Save writes it to the working tree, unstaged. */
export function FileEditor({
  repoId,
  path,
  onSaved,
  onClose,
}: {
  repoId: string;
  path: string;
  onSaved: () => void;
  onClose: () => void;
}) {
  const host = useRef<HTMLDivElement>(null);
  const editor = useRef<CodeEditor | null>(null);
  const [state, setState] = useState<'loading' | 'clean' | 'dirty' | 'saving'>('loading');
  const [error, setError] = useState<string | null>(null);

  useEffect(() => {
    let cancelled = false;
    setState('loading');
    setError(null);
    Promise.all([
      gitClient
        .repo(repoId)
        .readWorktreeFile({ path })
        .catch(() => new Uint8Array()),
      import('../codeEditor.ts'),
    ])
      .then(([bytes, { createEditor }]) => {
        if (cancelled || !host.current) return;
        host.current.textContent = '';
        editor.current = createEditor(host.current, new TextDecoder().decode(bytes), () => setState('dirty'));
        setState('clean');
      })
      .catch((err: Error) => setError(err.message));
    return () => {
      cancelled = true;
      editor.current?.destroy();
      editor.current = null;
    };
  }, [repoId, path]);

  async function save() {
    if (!editor.current) return;
    setState('saving');
    try {
      await gitClient.repo(repoId).writeWorktreeFile({ path, content: editor.current.text() });
      setState('clean');
      onSaved();
    } catch (err) {
      setError((err as BloblessError).message);
      setState('dirty');
    }
  }

  return (
    <div class="file-editor" data-testid="file-editor">
      <div class="editor-bar">
        <code>{path}</code>
        <span class="muted">
          {state === 'dirty' ? 'unsaved changes' : state === 'loading' ? 'loading editor…' : ''}
        </span>
        <button type="button" data-testid="editor-save" disabled={state !== 'dirty'} onClick={save}>
          Save
        </button>
        <button type="button" class="link" onClick={onClose}>
          Close
        </button>
      </div>
      {error && (
        <p class="error" role="alert">
          {error}
        </p>
      )}
      <div ref={host} class="editor-host" />
    </div>
  );
}
