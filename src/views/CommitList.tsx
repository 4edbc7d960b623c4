import { useEffect, useRef, useState } from 'preact/hooks';
import type { CommitSummary } from '../../workers/engine/index.ts';
import { firstLine, formatCommitDate } from '../format.ts';
import { gitClient } from '../gitClient.ts';
import { navigate, routeHref } from '../route.ts';

const PAGE = 200;
const ROW = 52;
const OVERSCAN = 10;

/**
 * History of any length: rows are a fixed height and only the visible ones are in the DOM, and pages are
 * read from the worker (which keeps its walk) as the list scrolls near the end of what is loaded.
 */
export function CommitList({
  repoId,
  gitRef,
  selected,
  grown = 0,
}: {
  repoId: string;
  gitRef: string;
  selected: string | null;
  /** Goes up when the background history fill stored more commits: a list that ended may go on. */
  grown?: number;
}) {
  const [commits, setCommits] = useState<CommitSummary[]>([]);
  const [more, setMore] = useState(true);
  const [error, setError] = useState<string | null>(null);
  const [scroll, setScroll] = useState({ top: 0, height: 600 });
  const loading = useRef(false);
  const box = useRef<HTMLDivElement>(null);

  async function load(skip: number) {
    if (loading.current) return;
    loading.current = true;
    try {
      const page = await gitClient.repo(repoId).log({ ref: gitRef, limit: PAGE, skip });
      setCommits((prev) => (skip === 0 ? page.commits : [...prev, ...page.commits]));
      setMore(page.more);
    } catch (err) {
      setError((err as Error).message);
    } finally {
      loading.current = false;
    }
  }

  useEffect(() => {
    setCommits([]);
    setMore(true);
    box.current?.scrollTo(0, 0);
    void load(0);
  }, [repoId, gitRef]);

  // The walk ended at the shallow boundary; the commits beyond it have arrived since. The worker started
  // a new walk, which skips what the list holds: the order above the old boundary does not change.
  useEffect(() => {
    if (grown > 0) setMore(true);
  }, [grown]);

  const first = Math.max(0, Math.floor(scroll.top / ROW) - OVERSCAN);
  const last = Math.min(commits.length, Math.ceil((scroll.top + scroll.height) / ROW) + OVERSCAN);
  useEffect(() => {
    if (more && !loading.current && commits.length > 0 && last >= commits.length - OVERSCAN)
      void load(commits.length);
  }, [last, commits.length, more, grown]);

  return (
    <section class="card commits" aria-labelledby="commits-title">
      <h2 id="commits-title">
        Commits on{' '}
        <span class="ref-inline">{/^[0-9a-f]{40}$/.test(gitRef) ? gitRef.slice(0, 10) : gitRef}</span>
      </h2>
      {error && <p class="error">{error}</p>}
      <div
        class="commit-scroll"
        ref={box}
        onScroll={(e) => setScroll({ top: e.currentTarget.scrollTop, height: e.currentTarget.clientHeight })}
      >
        <ol
          data-testid="commit-list"
          data-count={commits.length}
          class="commit-list"
          style={{ height: `${commits.length * ROW}px` }}
        >
          {commits.slice(first, last).map((c, i) => (
            <li
              key={c.oid}
              data-oid={c.oid}
              style={{ top: `${(first + i) * ROW}px`, height: `${ROW}px` }}
              class={c.oid === selected ? 'selected' : undefined}
            >
              <a
                class="subject"
                href={routeHref({ commit: c.oid })}
                onClick={(e) => {
                  e.preventDefault();
                  navigate({ commit: c.oid });
                }}
              >
                {firstLine(c.message)}
              </a>
              <span class="muted">
                {c.author.name} · {formatCommitDate(c.author.timestamp)} · <code>{c.oid.slice(0, 10)}</code>
              </span>
            </li>
          ))}
        </ol>
      </div>
      <p class="muted count">
        {commits.length} commit{commits.length === 1 ? '' : 's'}
        {more ? ' loaded, scroll for more' : ''}
      </p>
    </section>
  );
}
