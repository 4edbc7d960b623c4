import { useEffect, useState } from 'preact/hooks';
import type { CommitSummary } from '../../workers/api.ts';
import { firstLine, formatCommitDate } from '../format.ts';
import { gitClient } from '../gitClient.ts';

const PAGE = 50;

export function CommitList({ repoId, gitRef }: { repoId: string; gitRef: string }) {
  const [commits, setCommits] = useState<CommitSummary[]>([]);
  const [more, setMore] = useState(false);
  const [loading, setLoading] = useState(true);
  const [error, setError] = useState<string | null>(null);

  async function load(skip: number) {
    setLoading(true);
    try {
      const page = await gitClient.log(repoId, gitRef, { limit: PAGE, skip });
      setCommits((prev) => (skip === 0 ? page.commits : [...prev, ...page.commits]));
      setMore(page.more);
    } catch (err) {
      setError((err as Error).message);
    } finally {
      setLoading(false);
    }
  }

  useEffect(() => {
    void load(0);
  }, [repoId, gitRef]);

  return (
    <section class="card commits" aria-label="History">
      <h3>History</h3>
      {error && <p class="error">{error}</p>}
      <ol data-testid="commit-list" class="commit-list">
        {commits.map((c) => (
          <li key={c.oid} data-oid={c.oid}>
            <span class="subject">{firstLine(c.message)}</span>
            <span class="muted">
              {c.author.name} · {formatCommitDate(c.author.timestamp)} · <code>{c.oid.slice(0, 10)}</code>
            </span>
          </li>
        ))}
      </ol>
      {loading && <p class="muted">Reading history…</p>}
      {more && !loading && (
        <button type="button" class="secondary" onClick={() => load(commits.length)}>
          Load more
        </button>
      )}
    </section>
  );
}
