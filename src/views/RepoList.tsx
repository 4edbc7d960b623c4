import type { RepoSummary } from '../../workers/engine/index.ts';
import { askConfirm } from '../ask.ts';
import { formatBytes, formatDate } from '../format.ts';
import { gitClient } from '../gitClient.ts';
import { navigate, routeHref } from '../route.ts';

export function RepoList({ repos, onChanged }: { repos: RepoSummary[]; onChanged: () => void }) {
  if (repos.length === 0) {
    return (
      <p class="muted">No repositories yet. Clone one above; it stays in this browser for offline use.</p>
    );
  }
  async function remove(repo: RepoSummary) {
    const sure = await askConfirm({
      title: `Delete ${repo.name} from this browser?`,
      message: `Its ${formatBytes(repo.sizeBytes)} here go, commits not pushed included. The remote keeps its own copy.`,
      confirm: 'Delete',
      danger: true,
    });
    if (!sure) return;
    await gitClient.repo(repo.id).delete();
    onChanged();
  }
  return (
    <ul class="repo-list" data-testid="repo-list">
      {repos.map((repo) => (
        <li key={repo.id}>
          <div class="repo-main">
            <a
              href={routeHref({ repo: repo.url, path: '' })}
              onClick={(e) => {
                e.preventDefault();
                navigate({ repo: repo.url, path: '' });
              }}
              class="repo-name"
            >
              {repo.name}
            </a>
            <span class="muted repo-url">{repo.url}</span>
          </div>
          <div class="repo-meta muted">
            <span>{repo.branch ?? repo.headOid.slice(0, 10)}</span>
            <span>{repo.filter ? `partial (${repo.filter})` : 'full'}</span>
            {repo.shallow && <span>shallow</span>}
            <span>{formatBytes(repo.sizeBytes)}</span>
            <span>fetched {formatDate(repo.lastFetchedAt)}</span>
          </div>
          <button
            type="button"
            class="danger"
            onClick={() => remove(repo)}
            aria-label={`Delete ${repo.name}`}
          >
            Delete
          </button>
        </li>
      ))}
    </ul>
  );
}
