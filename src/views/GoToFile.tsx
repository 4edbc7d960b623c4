import * as Comlink from 'comlink';
import type { ComponentChildren } from 'preact';
import { useEffect, useRef, useState } from 'preact/hooks';
import { type BloblessError, gitClient } from '../gitClient.ts';
import { navigate } from '../route.ts';
import type { PathMatch, PathSearch } from '../search/pathSearch.worker.ts';
import { Modal } from './Modal.tsx';

// One search worker for the page, started with the first go-to-file: the fuzzy matching of 100,000 paths
// runs there, never on the main thread.
let searcher: Comlink.Remote<PathSearch> | null = null;
function pathSearch(): Comlink.Remote<PathSearch> {
  searcher ??= Comlink.wrap<PathSearch>(
    new Worker(new URL('../search/pathSearch.worker.ts', import.meta.url), {
      type: 'module',
      name: 'path-search',
    }),
  );
  return searcher;
}

// Paths already read in this page, by repo and commit: opening the finder twice on one commit asks the
// git worker once.
const pathCache = new Map<string, string>();

const SHOWN = 50;

/** The path with its matched characters marked, as elements: a path is the repository's text, never HTML. */
function marked(match: PathMatch): ComponentChildren {
  if (!match.indexes.length) return match.path;
  const hit = new Set(match.indexes);
  const out: ComponentChildren[] = [];
  let run = '';
  let inHit = false;
  const flush = (i: number) => {
    if (run) out.push(inHit ? <mark key={i}>{run}</mark> : run);
    run = '';
  };
  for (let i = 0; i < match.path.length; i++) {
    if (hit.has(i) !== inHit) {
      flush(i);
      inHit = !inHit;
    }
    run += match.path[i];
  }
  flush(match.path.length);
  return out;
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
  const [key, setKey] = useState<string | null>(null);
  const [total, setTotal] = useState<number | null>(null);
  const [first, setFirst] = useState<string[]>([]);
  const [query, setQuery] = useState('');
  const [results, setResults] = useState<PathMatch[]>([]);
  const [active, setActive] = useState(0);
  const [error, setError] = useState<string | null>(null);
  const input = useRef<HTMLInputElement>(null);
  const asked = useRef(0);

  useEffect(() => {
    input.current?.focus();
    const cacheKey = `${repoId}\0${gitRef}`;
    const ready = (paths: string) => {
      const list = paths ? paths.split('\n') : [];
      setTotal(list.length);
      setFirst(list.slice(0, SHOWN));
      void pathSearch()
        .load(cacheKey, paths)
        .then(() => setKey(cacheKey));
    };
    const cached = pathCache.get(cacheKey);
    if (cached !== undefined) ready(cached);
    else
      gitClient
        .repo(repoId)
        .listPaths({ ref: gitRef })
        .then(({ paths }) => {
          pathCache.set(cacheKey, paths);
          ready(paths);
        })
        .catch((err: BloblessError) => setError(err.message));
  }, [repoId, gitRef]);

  useEffect(() => {
    setActive(0);
    if (!query.trim() || !key) return;
    // Answers can come back out of order; only the newest question's is shown.
    const n = ++asked.current;
    void pathSearch()
      .search(key, query, SHOWN)
      .then((found) => n === asked.current && setResults(found));
  }, [query, key]);

  const shown: PathMatch[] = query.trim() ? results : first.map((path) => ({ path, indexes: [] }));

  function open(path: string) {
    onClose();
    navigate({ path, commit: null });
  }

  function onKeyDown(e: KeyboardEvent) {
    if (e.key === 'ArrowDown') setActive((a) => Math.min(shown.length - 1, a + 1));
    else if (e.key === 'ArrowUp') setActive((a) => Math.max(0, a - 1));
    else if (e.key === 'Enter' && shown[active]) open(shown[active].path);
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
        placeholder={
          total === null ? 'Reading the file list…' : `Go to file (${total.toLocaleString()} files)`
        }
        value={query}
        onInput={(e) => setQuery((e.target as HTMLInputElement).value)}
        onKeyDown={onKeyDown}
        aria-label="File name"
        aria-controls="goto-results"
        aria-activedescendant={shown[active] ? `goto-${active}` : undefined}
        data-testid="goto-input"
      />
      {error && <p class="error">{error}</p>}
      <div class="goto-results" id="goto-results" role="listbox" data-testid="goto-results">
        {shown.map((r, i) => (
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
            {marked(r)}
          </div>
        ))}
        {key && query.trim() && results.length === 0 && <p class="muted">No file matches “{query}”.</p>}
      </div>
    </Modal>
  );
}
