import { useEffect, useRef, useState } from 'preact/hooks';
import type { FileHistoryEntry } from '../../workers/engine/index.ts';
import { withToken } from '../auth/withToken.ts';
import { focusIfLost } from '../focus.ts';
import { firstLine, formatCommitDate } from '../format.ts';
import { type BloblessError, gitClient } from '../gitClient.ts';
import { navigate } from '../route.ts';
import { Breadcrumbs } from './Breadcrumbs.tsx';

const PAGE = 50;

/** The commits that changed one file, following renames, read from trees: no blob until a diff opens. */
export function FileHistoryView({ repoId, gitRef, path }: { repoId: string; gitRef: string; path: string }) {
  const [entries, setEntries] = useState<FileHistoryEntry[]>([]);
  const [more, setMore] = useState(true);
  const [error, setError] = useState<string | null>(null);
  const loading = useRef(false);
  const [busy, setBusy] = useState(false);
  const heading = useRef<HTMLHeadingElement>(null);

  async function load(skip: number) {
    if (loading.current) return;
    loading.current = true;
    setBusy(true);
    try {
      const page = await withToken(() =>
        gitClient.repo(repoId).fileHistory({ ref: gitRef, path, skip, limit: PAGE }),
      );
      setEntries((prev) => (skip === 0 ? page.entries : [...prev, ...page.entries]));
      setMore(page.more);
    } catch (err) {
      setError(`${(err as BloblessError).message}`);
    } finally {
      loading.current = false;
      setBusy(false);
    }
  }

  useEffect(() => {
    setEntries([]);
    setMore(true);
    setError(null);
    void load(0);
    focusIfLost(heading.current);
  }, [repoId, gitRef, path]);

  return (
    <section class="card file-history" aria-labelledby="file-history-title">
      <Breadcrumbs path={path} />
      <div class="view-tabs">
        <button type="button" class="link" onClick={() => navigate({ view: null })}>
          ← File
        </button>
        <h2 class="view-title" id="file-history-title" ref={heading} tabIndex={-1}>
          History of {path.slice(path.lastIndexOf('/') + 1)}
        </h2>
      </div>
      {error && <p class="error">{error}</p>}
      <ol class="history-entries" data-testid="file-history">
        {entries.map((e) => (
          <li key={e.commit.oid} data-oid={e.commit.oid}>
            <button type="button" class="link subject" onClick={() => navigate({ commit: e.commit.oid })}>
              {firstLine(e.commit.message)}
            </button>
            <span class="muted">
              {e.commit.author.name} · {formatCommitDate(e.commit.author.timestamp)} ·{' '}
              <code>{e.commit.oid.slice(0, 10)}</code>
              {(e.status === 'renamed' || e.status === 'copied') && (
                <span class="badge" title={`${e.similarity} % similar to ${e.renamedFrom}`}>
                  {e.status} from {e.renamedFrom} ({e.similarity} %)
                </span>
              )}
              {e.status === 'added' && <span class="badge">added</span>}
              {e.status === 'deleted' && <span class="badge">deleted</span>}
            </span>
          </li>
        ))}
      </ol>
      {busy && <p class="muted">Reading history…</p>}
      {!busy && entries.length === 0 && !error && <p class="muted">No commit changed this path.</p>}
      {more && !busy && entries.length > 0 && (
        <button type="button" class="secondary" onClick={() => load(entries.length)}>
          Older changes
        </button>
      )}
    </section>
  );
}
