import { useEffect, useState } from 'preact/hooks';
import type { Presence, RepoSummary } from '../../workers/engine/index.ts';
import { formatBytes } from '../format.ts';
import { gitClient } from '../gitClient.ts';
import { type FillState, startHistoryFill, stopHistoryFill } from '../historyFill.ts';

/**
 * The bar at the bottom of the window (sticky, so it is on screen however long the page): where the
 * background history fill is, with live commits and bytes; what the partial clone has cost so far; which
 * file contents of this ref are here.
 */
export function StatusBar({
  repo,
  gitRef,
  tick,
  fill,
}: {
  repo: RepoSummary;
  gitRef: string;
  tick: string;
  fill: FillState | null;
}) {
  const [presence, setPresence] = useState<Presence | null>(null);
  const [record, setRecord] = useState<RepoSummary>(repo);
  useEffect(() => {
    gitClient
      .repo(repo.id)
      .presence({ ref: gitRef })
      .then(setPresence, () => setPresence(null));
  }, [repo.id, gitRef, tick]);
  // The record's byte count grows with each lazy fetch and each stored step of the fill.
  useEffect(() => {
    gitClient.listRepos().then((all) => setRecord(all.find((r) => r.id === repo.id) ?? repo));
  }, [repo.id, tick, fill?.stored, fill?.status]);
  const moved = (record.bytesFetched ?? 0) + (fill?.status === 'filling' ? fill.inFlight : 0);
  return (
    <footer class="status-bar muted" data-testid="status-bar">
      {fill && fill.status !== 'pending' && <FillStatus fill={fill} record={record} />}
      <span data-testid="bytes-moved">{formatBytes(moved)} moved over the network</span>
      {presence && (
        <span>
          {presence.present.toLocaleString()} of {presence.blobs.toLocaleString()} file contents of {gitRef}{' '}
          stored
        </span>
      )}
      <span class="status-extra">{formatBytes(record.sizeBytes)} in this browser</span>
      {presence && (
        <span class="status-extra">
          {presence.packs} pack{presence.packs === 1 ? '' : 's'}
        </span>
      )}
    </footer>
  );
}

/** Where the background fetch of a first-view clone's history is: running, done, stopped or failed. */
function FillStatus({ fill, record }: { fill: FillState; record: RepoSummary }) {
  const so = `${fill.commits.toLocaleString()} commit${fill.commits === 1 ? '' : 's'}, ${formatBytes(fill.bytes)}`;
  return (
    <span class="history-fill" data-testid="history-fill" data-status={fill.status}>
      {fill.status === 'filling' && (
        <>
          <span class="spinner" aria-hidden="true" />
          Fetching the history: {so} so far{' '}
          <button type="button" class="link" onClick={() => stopHistoryFill(record.id)}>
            Stop
          </button>
        </>
      )}
      {fill.status === 'complete' && <>History complete: {fill.commits.toLocaleString()} commits</>}
      {fill.status === 'elsewhere' && <>Another tab is fetching the history</>}
      {(fill.status === 'stopped' || fill.status === 'failed') && (
        <>
          History incomplete ({so}){fill.status === 'failed' ? `: ${fill.error}` : ''}{' '}
          <button type="button" class="link" onClick={() => startHistoryFill(record)}>
            Resume
          </button>
        </>
      )}
    </span>
  );
}
