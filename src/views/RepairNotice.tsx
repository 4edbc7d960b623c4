import { useEffect, useState } from 'preact/hooks';
import type { RepairReport } from '../../workers/engine/index.ts';
import { gitClient } from '../gitClient.ts';

/**
 * The worker checks the stored repositories once when it starts (startup repair): what a tab closed
 * mid-write left behind is removed or mended. When it did anything, this says what, until dismissed.
 */
export function RepairNotice() {
  const [report, setReport] = useState<RepairReport | null>(null);
  useEffect(() => {
    gitClient
      .startupRepair()
      .then(
        (r) => setReport(r.removed.length || r.reported.length ? r : null),
        (err: Error) => setReport({ removed: [], reported: [`The storage check failed: ${err.message}`] }),
      )
      // Said on the page for tests that must know the check is behind them.
      .finally(() => {
        document.body.dataset.storageChecked = 'true';
      });
  }, []);
  if (!report) return null;
  return (
    <section class="card repair-notice" role="status" data-testid="repair-report">
      <p>
        <strong>Blobless checked its storage</strong> and found what an interrupted operation (a tab closed
        while it wrote) left behind:
      </p>
      <ul>
        {report.removed.map((line) => (
          <li key={line}>{line}</li>
        ))}
        {report.reported.map((line) => (
          <li key={line} class="muted">
            {line}
          </li>
        ))}
      </ul>
      <button type="button" class="secondary small" onClick={() => setReport(null)}>
        Dismiss
      </button>
    </section>
  );
}
