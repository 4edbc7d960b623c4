import { useEffect, useState } from 'preact/hooks';
import type { Presence, RepoRecord } from '../../workers/engine/index.ts';
import { formatBytes } from '../format.ts';
import { gitClient } from '../gitClient.ts';
import { type FillState, startHistoryFill, stopHistoryFill } from '../historyFill.ts';

/** What the partial clone costs and holds: bytes moved so far, and the files of this ref that are here. */
export function StatusLine({
  repoId,
  gitRef,
  tick,
  fill,
}: {
  repoId: string;
  gitRef: string;
  tick: string;
  fill: FillState | null;
}) {
  const [presence, setPresence] = useState<Presence | null>(null);
  const [record, setRecord] = useState<RepoRecord | null>(null);
  useEffect(() => {
    gitClient
      .repo(repoId)
      .presence({ ref: gitRef })
      .then(setPresence, () => setPresence(null));
    gitClient.listRepos().then((all) => setRecord(all.find((r) => r.id === repoId) ?? null));
  }, [repoId, gitRef, tick]);
  return (
    <footer class="status-line muted" data-testid="status-line" aria-live="polite">
      {fill && <FillStatus repoId={repoId} fill={fill} record={record} />}
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

/** Where the background fetch of a first-view clone's history is: running, done, stopped or failed. */
function FillStatus({
  repoId,
  fill,
  record,
}: {
  repoId: string;
  fill: FillState;
  record: RepoRecord | null;
}) {
  const so = `${fill.commits.toLocaleString()} commit${fill.commits === 1 ? '' : 's'}, ${formatBytes(fill.bytes)}`;
  const resume = () => record && startHistoryFill(record);
  return (
    <span class="history-fill" data-testid="history-fill" data-status={fill.status}>
      {fill.status === 'filling' && (
        <>
          Fetching the history: {so} so far{' '}
          <button type="button" class="link" onClick={() => stopHistoryFill(repoId)}>
            Stop
          </button>
        </>
      )}
      {fill.status === 'complete' && <>History complete: {fill.commits.toLocaleString()} commits</>}
      {fill.status === 'elsewhere' && <>Another tab is fetching the history</>}
      {(fill.status === 'stopped' || fill.status === 'failed') && (
        <>
          History incomplete ({so}){fill.status === 'failed' ? `: ${fill.error}` : ''}{' '}
          <button type="button" class="link" onClick={resume} disabled={!record}>
            Resume
          </button>
        </>
      )}
    </span>
  );
}
