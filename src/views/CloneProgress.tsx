import { useRef } from 'preact/hooks';
import type { CloneProgress as Progress } from '../../workers/api.ts';
import { formatBytes } from '../format.ts';

const LABELS: Record<Progress['phase'], string> = {
  connecting: 'Negotiating with the server',
  remote: 'Server preparing objects',
  receiving: 'Receiving objects',
  resolving: 'Resolving deltas',
  writing: 'Writing to browser storage',
};

export function CloneProgress({ progress }: { progress: Progress }) {
  const start = useRef<{ t: number; bytes: number } | null>(null);
  let value: number | undefined;
  let max: number | undefined;
  let detail = '';
  if (progress.phase === 'receiving') {
    start.current ??= { t: performance.now(), bytes: progress.bytes };
    const secs = (performance.now() - start.current.t) / 1000;
    const rate = secs > 0.2 ? (progress.bytes - start.current.bytes) / secs : 0;
    value = progress.objects;
    max = progress.totalObjects || undefined;
    detail = `${progress.objects} / ${progress.totalObjects} objects · ${formatBytes(progress.bytes)}${rate ? ` · ${formatBytes(rate)}/s` : ''}`;
  } else if (progress.phase === 'resolving') {
    value = progress.resolved;
    max = progress.total || undefined;
    detail = `${progress.resolved} / ${progress.total} deltas`;
  } else if (progress.phase === 'remote') {
    value = progress.loaded;
    max = progress.total;
    detail = progress.text;
  }
  return (
    <div class="progress" data-testid="progress" role="status" aria-live="polite">
      <div class="progress-label">
        <span>{LABELS[progress.phase]}</span>
        <span class="muted">{detail}</span>
      </div>
      <progress value={max ? value : undefined} max={max} aria-label={LABELS[progress.phase]} />
    </div>
  );
}
