import type { ComponentChildren } from 'preact';
import { useEffect, useMemo, useRef, useState } from 'preact/hooks';
import { gitClient, type RemoteOperationError } from '../gitClient.ts';
import { navigate } from '../route.ts';
import { Modal } from './Modal.tsx';

type Fuzzysort = typeof import('fuzzysort');
let loadingFuzzysort: Promise<Fuzzysort> | null = null;
// fuzzysort is loaded with the first search, never up front.
function loadFuzzysort(): Promise<Fuzzysort> {
  loadingFuzzysort ??= import('fuzzysort').then((m) => (m as unknown as { default: Fuzzysort }).default ?? m);
  return loadingFuzzysort;
}

// Paths of the commits already searched in this page, by repo and commit: opening the finder twice on one
// commit asks the worker once.
const pathCache = new Map<string, string[]>();

const SHOWN = 50;

interface Result {
  path: string;
  shown: ComponentChildren;
}

/**
 * Go to file (GitHub's `t`, github.dev's Ctrl+P): a fuzzy search over every path of the commit, from
 * trees alone. Arrow keys move, Enter opens, Escape closes.
 */
export function GoToFile({
  repoId,
  gitRef,
  onClose,
}: {
  repoId: string;
  gitRef: string;
  onClose: () => void;
}) {
  const [paths, setPaths] = useState<string[] | null>(null);
  const [fuzzy, setFuzzy] = useState<Fuzzysort | null>(null);
  const [query, setQuery] = useState('');
  const [active, setActive] = useState(0);
  const [error, setError] = useState<string | null>(null);
  const input = useRef<HTMLInputElement>(null);
  const prepared = useRef<ReturnType<Fuzzysort['prepare']>[] | null>(null);

  useEffect(() => {
    input.current?.focus();
    loadFuzzysort().then(setFuzzy);
    const key = `${repoId}\0${gitRef}`;
    const cached = pathCache.get(key);
    if (cached) {
      setPaths(cached);
      return;
    }
    gitClient
      .listPaths(repoId, gitRef)
      .then(({ paths }) => {
        const list = paths ? paths.split('\n') : [];
        pathCache.set(key, list);
        setPaths(list);
      })
      .catch((err: RemoteOperationError) => setError(err.message));
  }, [repoId, gitRef]);

  const results = useMemo(() => {
    if (!paths) return [];
    if (!query.trim() || !fuzzy) return paths.slice(0, SHOWN).map((p): Result => ({ path: p, shown: p }));
    prepared.current ??= paths.map((p) => fuzzy.prepare(p));
    // Matched letters as elements, never as HTML: a path is the repository's text.
    return fuzzy
      .go(query, prepared.current, { limit: SHOWN, threshold: 0.2 })
      .map((r): Result => ({ path: r.target, shown: r.highlight((m, i) => <mark key={i}>{m}</mark>) }));
  }, [paths, fuzzy, query]);

  useEffect(() => setActive(0), [query]);

  function open(path: string) {
    onClose();
    navigate({ path, commit: null });
  }

  function onKeyDown(e: KeyboardEvent) {
    if (e.key === 'ArrowDown') setActive((a) => Math.min(results.length - 1, a + 1));
    else if (e.key === 'ArrowUp') setActive((a) => Math.max(0, a - 1));
    else if (e.key === 'Enter' && results[active]) open(results[active].path);
    else return;
    e.preventDefault();
  }

  useEffect(() => {
    document.querySelector('.goto-results [aria-selected="true"]')?.scrollIntoView({ block: 'nearest' });
  }, [active]);

  return (
    <Modal label="Go to file" class="goto" onClose={onClose}>
      <input
        ref={input}
        type="search"
        placeholder={paths ? `Go to file (${paths.length.toLocaleString()} files)` : 'Reading the file list…'}
        value={query}
        onInput={(e) => setQuery((e.target as HTMLInputElement).value)}
        onKeyDown={onKeyDown}
        aria-label="File name"
        aria-controls="goto-results"
        aria-activedescendant={results[active] ? `goto-${active}` : undefined}
        data-testid="goto-input"
      />
      {error && <p class="error">{error}</p>}
      <div class="goto-results" id="goto-results" role="listbox" data-testid="goto-results">
        {results.map((r, i) => (
          <div
            key={r.path}
            id={`goto-${i}`}
            role="option"
            tabIndex={-1}
            aria-selected={i === active}
            class={i === active ? 'goto-result active' : 'goto-result'}
            onClick={() => open(r.path)}
            onKeyDown={(e) => e.key === 'Enter' && open(r.path)}
            onMouseMove={() => setActive(i)}
          >
            {r.shown}
          </div>
        ))}
        {paths && query && results.length === 0 && <p class="muted">No file matches “{query}”.</p>}
      </div>
    </Modal>
  );
}
