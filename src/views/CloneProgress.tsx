import { useRef } from 'preact/hooks';
import type { FlowProgress } from '../cloneFlow.ts';
import { formatBytes } from '../format.ts';

const LABELS: Record<FlowProgress['phase'], string> = {
  connecting: 'Negotiating with the server',
  remote: 'Server preparing objects',
  receiving: 'Receiving objects',
  resolving: 'Resolving deltas',
  writing: 'Writing to browser storage',
  retrying: 'Retrying',
  'fetching-blobs': 'Checking out: fetching file contents',
  'writing-files': 'Checking out: writing files',
  'waiting-for-lock': 'Busy in another tab: waiting',
};

export function CloneProgress({ progress }: { progress: FlowProgress }) {
  const start = useRef<{ phase: string; t: number; bytes: number } | null>(null);
  let value: number | undefined;
  let max: number | undefined;
  let detail = '';
  const rate = (bytes: number) => {
    if (start.current?.phase !== progress.phase)
      start.current = { phase: progress.phase, t: performance.now(), bytes };
    const secs = (performance.now() - start.current.t) / 1000;
    const r = secs > 0.2 ? (bytes - start.current.bytes) / secs : 0;
    return r ? ` · ${formatBytes(r)}/s` : '';
  };
  switch (progress.phase) {
    case 'receiving':
      value = progress.objects;
      max = progress.totalObjects || undefined;
      detail = `${progress.objects} / ${progress.totalObjects} objects · ${formatBytes(progress.bytes)}${rate(progress.bytes)}`;
      break;
    case 'resolving':
      value = progress.resolved;
      max = progress.total || undefined;
      detail = `${progress.resolved} / ${progress.total} deltas`;
      break;
    case 'remote':
      value = progress.loaded;
      max = progress.total;
      detail = progress.text;
      break;
    case 'retrying':
      detail = progress.text;
      break;
    case 'fetching-blobs':
      value = progress.objects;
      max = progress.totalObjects || undefined;
      detail =
        progress.retrying ??
        `${progress.objects} / ${progress.totalObjects} blobs · ${formatBytes(progress.bytes)}${rate(progress.bytes)}`;
      break;
    case 'waiting-for-lock':
      detail = progress.what ?? 'another operation on this repository';
      break;
    case 'writing-files':
      value = progress.files;
      max = progress.totalFiles || undefined;
      detail = `${progress.files} / ${progress.totalFiles} files`;
      break;
  }
  return (
    <div class="progress" data-testid="progress" data-phase={progress.phase} role="status" aria-live="polite">
      <div class="progress-label">
        <span>{LABELS[progress.phase]}</span>
        <span class="muted">{detail}</span>
      </div>
      <progress value={max ? value : undefined} max={max} aria-label={LABELS[progress.phase]} />
    </div>
  );
}
