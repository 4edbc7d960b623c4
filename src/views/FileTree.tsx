import { useEffect, useState } from 'preact/hooks';
import type { TreeEntry, TreeListing } from '../../workers/api.ts';
import { gitClient } from '../gitClient.ts';
import { navigate } from '../route.ts';

const KIND: Record<string, string> = {
  '040000': 'dir',
  '100755': 'exec',
  '120000': 'link',
  '160000': 'submodule',
};

/** One directory at a time, read from trees alone: browsing needs no file contents. */
export function FileTree({ repoId, gitRef, path }: { repoId: string; gitRef: string; path: string }) {
  const [listing, setListing] = useState<TreeListing | null>(null);
  const [error, setError] = useState<string | null>(null);

  useEffect(() => {
    setListing(null);
    setError(null);
    gitClient
      .readTree(repoId, gitRef, path)
      .then(setListing)
      .catch((err: Error) => setError(err.message));
  }, [repoId, gitRef, path]);

  const parts = path ? path.split('/') : [];
  const open = (entry: TreeEntry) => entry.type === 'tree' && navigate({ path: entry.path });

  return (
    <section class="card file-tree" aria-label="Files">
      <nav class="crumbs" aria-label="Path">
        <button type="button" class="link" onClick={() => navigate({ path: '' })}>
          root
        </button>
        {parts.map((part, i) => (
          <span key={parts.slice(0, i + 1).join('/')}>
            {' / '}
            <button
              type="button"
              class="link"
              onClick={() => navigate({ path: parts.slice(0, i + 1).join('/') })}
            >
              {part}
            </button>
          </span>
        ))}
      </nav>
      {error && <p class="error">{error}</p>}
      {!listing && !error && <p class="muted">Reading tree…</p>}
      {listing && (
        <ul data-testid="file-tree" class="entries">
          {listing.entries.map((entry) => (
            <li key={entry.path} data-type={entry.type}>
              {entry.type === 'tree' ? (
                <button
                  type="button"
                  class="link entry"
                  onClick={() => open(entry)}
                  aria-label={`Open folder ${entry.name}`}
                >
                  <span class="icon" aria-hidden="true">
                    ▸
                  </span>
                  {entry.name}/
                </button>
              ) : (
                <span class="entry">
                  <span class="icon" aria-hidden="true">
                    ·
                  </span>
                  {entry.name}
                </span>
              )}
              {KIND[entry.mode] && KIND[entry.mode] !== 'dir' && (
                <span class="badge">{KIND[entry.mode]}</span>
              )}
              <code class="muted oid">{entry.oid.slice(0, 10)}</code>
            </li>
          ))}
        </ul>
      )}
    </section>
  );
}
