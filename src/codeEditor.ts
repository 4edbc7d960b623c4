// CodeMirror 6, loaded only when a file is first edited (its chunk is not part of the main bundle).
// No language modes yet: each would be its own lazily loaded chunk.

import { basicSetup, EditorView } from 'codemirror';

export interface CodeEditor {
  text(): string;
  destroy(): void;
}

export function createEditor(parent: HTMLElement, text: string, onChange: () => void): CodeEditor {
  const view = new EditorView({
    doc: text,
    parent,
    extensions: [
      basicSetup,
      EditorView.updateListener.of((update) => {
        if (update.docChanged) onChange();
      }),
      EditorView.contentAttributes.of({ 'aria-label': 'File contents', 'data-testid': 'editor-content' }),
    ],
  });
  return { text: () => view.state.doc.toString(), destroy: () => view.destroy() };
}
