import { useEffect, useState } from 'preact/hooks';
import type { Presence, RepoRecord } from '../../workers/api.ts';
import { formatBytes } from '../format.ts';
import { gitClient } from '../gitClient.ts';

/** What the partial clone costs and holds: bytes moved so far, and the files of this ref that are here. */
export function StatusLine({ repoId, gitRef, tick }: { repoId: string; gitRef: string; tick: string }) {
  const [presence, setPresence] = useState<Presence | null>(null);
  const [record, setRecord] = useState<RepoRecord | null>(null);
  useEffect(() => {
    gitClient.presence(repoId, gitRef).then(setPresence, () => setPresence(null));
    gitClient.listRepos().then((all) => setRecord(all.find((r) => r.id === repoId) ?? null));
  }, [repoId, gitRef, tick]);
  return (
    <footer class="status-line muted" data-testid="status-line" aria-live="polite">
      {record?.bytesFetched !== undefined && (
        <span>{formatBytes(record.bytesFetched)} moved over the network</span>
      )}
      {presence && (
        <span>
          {presence.present.toLocaleString()} of {presence.blobs.toLocaleString()} file contents of {gitRef}{' '}
          stored
        </span>
      )}
      {record && <span>{formatBytes(record.sizeBytes)} in this browser</span>}
      {presence && (
        <span>
          {presence.packs} pack{presence.packs === 1 ? '' : 's'}
        </span>
      )}
    </footer>
  );
}
