// The steps of an operation as User Timing measures (`blobless:<op>:<step>`), so a profiler, DevTools'
// Performance panel or `npm run bench -- --profile` can say where an operation's time goes without a
// debug build. A measure costs about a microsecond; an operation has a dozen.

const PREFIX = 'blobless:';

/** Runs `work` as one named step of the operation's timeline. */
export async function step<T>(op: string, name: string, work: () => Promise<T>): Promise<T> {
  const start = performance.now();
  try {
    return await work();
  } finally {
    measure(op, name, start);
  }
}

/** Records a step that began at `start` (a `performance.now()`) and ends now. */
export function measure(op: string, name: string, start: number): void {
  // Workers without User Timing (none known) lose the profile, never the operation.
  try {
    performance.measure(`${PREFIX}${op}:${name}`, { start, end: performance.now() });
  } catch {}
}

/** Forgets an operation's earlier measures, so the timeline holds only its latest run. */
export function clearTimeline(op: string): void {
  for (const entry of performance.getEntriesByType('measure')) {
    if (entry.name.startsWith(`${PREFIX}${op}:`)) performance.clearMeasures(entry.name);
  }
}
