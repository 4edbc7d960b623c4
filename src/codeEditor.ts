// CodeMirror 6, loaded only when a file is first edited (its chunk is not part of the main bundle), and
// each language mode in a chunk of its own, loaded with the first file of that language.
//
// Styles under the page's CSP (`style-src 'self'`, no 'unsafe-inline'): CodeMirror writes its styles at
// run time through style-mod, into a <style> element, which that policy blocks (the editor then draws
// unstyled, line numbers stacked above the text). CodeMirror's `EditorView.cspNonce` would need a nonce
// made fresh for every response, which a static host (GitHub Pages, a CDN) cannot do, and a hash of the
// generated CSS would change with every theme, language and CodeMirror release. So the editor lives in a
// shadow root: there style-mod puts its rules in a constructed stylesheet (`adoptedStyleSheets`), which is
// not markup the policy governs, and the page's own policy stays as strict as it is. The app's colours
// reach in as CSS custom properties, which cross the shadow boundary.

import { indentWithTab } from '@codemirror/commands';
import { HighlightStyle, type LanguageSupport, syntaxHighlighting } from '@codemirror/language';
import { Compartment } from '@codemirror/state';
import { keymap } from '@codemirror/view';
import { tags } from '@lezer/highlight';
import { basicSetup, EditorView } from 'codemirror';

export interface CodeEditor {
  text(): string;
  destroy(): void;
  focus(): void;
}

type Loader = () => Promise<LanguageSupport>;

const JS: Loader = () => import('@codemirror/lang-javascript').then((m) => m.javascript());
const LANGUAGES: Record<string, Loader> = {
  js: JS,
  mjs: JS,
  cjs: JS,
  jsx: () => import('@codemirror/lang-javascript').then((m) => m.javascript({ jsx: true })),
  ts: () => import('@codemirror/lang-javascript').then((m) => m.javascript({ typescript: true })),
  mts: () => import('@codemirror/lang-javascript').then((m) => m.javascript({ typescript: true })),
  tsx: () => import('@codemirror/lang-javascript').then((m) => m.javascript({ typescript: true, jsx: true })),
  py: () => import('@codemirror/lang-python').then((m) => m.python()),
  css: () => import('@codemirror/lang-css').then((m) => m.css()),
  html: () => import('@codemirror/lang-html').then((m) => m.html()),
  htm: () => import('@codemirror/lang-html').then((m) => m.html()),
  json: () => import('@codemirror/lang-json').then((m) => m.json()),
  md: () => import('@codemirror/lang-markdown').then((m) => m.markdown()),
  markdown: () => import('@codemirror/lang-markdown').then((m) => m.markdown()),
  rs: () => import('@codemirror/lang-rust').then((m) => m.rust()),
  c: () => import('@codemirror/lang-cpp').then((m) => m.cpp()),
  h: () => import('@codemirror/lang-cpp').then((m) => m.cpp()),
  cc: () => import('@codemirror/lang-cpp').then((m) => m.cpp()),
  cpp: () => import('@codemirror/lang-cpp').then((m) => m.cpp()),
  hpp: () => import('@codemirror/lang-cpp').then((m) => m.cpp()),
  java: () => import('@codemirror/lang-java').then((m) => m.java()),
  go: () => import('@codemirror/lang-go').then((m) => m.go()),
  yml: () => import('@codemirror/lang-yaml').then((m) => m.yaml()),
  yaml: () => import('@codemirror/lang-yaml').then((m) => m.yaml()),
  xml: () => import('@codemirror/lang-xml').then((m) => m.xml()),
  svg: () => import('@codemirror/lang-xml').then((m) => m.xml()),
  sql: () => import('@codemirror/lang-sql').then((m) => m.sql()),
};

/** The language mode for a path, by its extension; null for plain text. */
export function editorLanguage(path: string): Loader | null {
  const name = path.slice(path.lastIndexOf('/') + 1);
  const ext = name.includes('.') ? name.slice(name.lastIndexOf('.') + 1).toLowerCase() : '';
  return LANGUAGES[ext] ?? null;
}

// The app's palette (styles.css), read through custom properties so light and dark follow the page.
const theme = EditorView.theme({
  '&': {
    color: 'var(--text)',
    backgroundColor: 'var(--card)',
    fontSize: '0.85rem',
    height: '100%',
  },
  '.cm-scroller': {
    fontFamily: 'ui-monospace, SFMono-Regular, Menlo, Consolas, monospace',
    lineHeight: '1.5',
  },
  '.cm-content': { caretColor: 'var(--text)' },
  '.cm-cursor, .cm-dropCursor': { borderLeftColor: 'var(--text)' },
  '.cm-gutters': {
    backgroundColor: 'var(--bg)',
    color: 'var(--muted)',
    borderRight: '1px solid var(--border)',
  },
  '.cm-activeLine': { backgroundColor: 'var(--line-active)' },
  '.cm-activeLineGutter': { backgroundColor: 'var(--line-active)', color: 'var(--text)' },
  '&.cm-focused .cm-selectionBackground, .cm-selectionBackground, ::selection': {
    backgroundColor: 'var(--selection)',
  },
  '.cm-panels': { backgroundColor: 'var(--bg)', color: 'var(--text)' },
  '.cm-searchMatch': { backgroundColor: 'var(--warn-bg)' },
  '.cm-tooltip': { backgroundColor: 'var(--card)', border: '1px solid var(--border)' },
  '.cm-button, .cm-textfield': { color: 'var(--text)', backgroundColor: 'var(--bg)' },
});

// Token colours as the file view's highlight.js classes have them (styles.css), for both schemes.
const highlight = HighlightStyle.define([
  {
    tag: [tags.keyword, tags.controlKeyword, tags.operatorKeyword, tags.modifier],
    color: 'var(--hl-keyword)',
  },
  { tag: [tags.string, tags.regexp, tags.special(tags.string)], color: 'var(--hl-string)' },
  {
    tag: [tags.comment, tags.lineComment, tags.blockComment],
    color: 'var(--hl-comment)',
    fontStyle: 'italic',
  },
  { tag: [tags.number, tags.bool, tags.null, tags.atom], color: 'var(--hl-number)' },
  {
    tag: [
      tags.function(tags.variableName),
      tags.definition(tags.function(tags.variableName)),
      tags.className,
      tags.typeName,
    ],
    color: 'var(--hl-title)',
  },
  { tag: [tags.propertyName, tags.attributeName], color: 'var(--hl-number)' },
  { tag: [tags.heading], fontWeight: '700', color: 'var(--hl-title)' },
  { tag: [tags.link, tags.url], color: 'var(--accent)', textDecoration: 'underline' },
  { tag: [tags.tagName], color: 'var(--hl-keyword)' },
]);

/**
 * An editor in a shadow root of `host` (see the top of this file). `onChange` is told of every edit.
 * The language mode arrives when its chunk has loaded; the editor is usable before.
 */
export function createEditor(
  host: HTMLElement,
  text: string,
  path: string,
  onChange: () => void,
): CodeEditor {
  const root = host.shadowRoot ?? host.attachShadow({ mode: 'open' });
  root.replaceChildren();
  const language = new Compartment();
  const view = new EditorView({
    doc: text,
    root,
    parent: root,
    extensions: [
      basicSetup,
      keymap.of([indentWithTab]),
      theme,
      syntaxHighlighting(highlight),
      language.of([]),
      EditorView.updateListener.of((update) => {
        if (update.docChanged) onChange();
      }),
      // tabindex: the text is focusable (contenteditable) but says so, for checkers of scrolling regions.
      EditorView.contentAttributes.of({
        'aria-label': `Contents of ${path}`,
        'data-testid': 'editor-content',
        tabindex: '0',
      }),
    ],
  });
  const load = editorLanguage(path);
  let destroyed = false;
  load?.().then(
    (support) => {
      if (!destroyed) view.dispatch({ effects: language.reconfigure(support) });
    },
    // Without its mode the file is edited as plain text.
    () => undefined,
  );
  return {
    text: () => view.state.doc.toString(),
    destroy: () => {
      destroyed = true;
      view.destroy();
    },
    focus: () => view.focus(),
  };
}
