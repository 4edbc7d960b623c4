// The steps of an operation as User Timing measures (`<namespace>:<op>:<step>`, `blobless:` by default), so a
// profiler, DevTools' Performance panel or `npm run bench -- --profile` can say where an operation's time
// goes without a debug build. A measure costs about a microsecond; an operation has a dozen.

import type { OpsContext } from './engineContext.ts';

export interface Timeline {
  /** Runs `work` as one named step of the operation's timeline. */
  step<T>(name: string, work: () => Promise<T>): Promise<T>;
  /** Records a step that began at `start` (a `performance.now()`) and ends now. */
  measure(name: string, start: number): void;
  /** Forgets the operation's earlier measures, so the timeline holds only its latest run. */
  clear(): void;
}

/** The timeline of operation `op` (`clone`, `checkout`) of the engine. */
export function timeline(ctx: Pick<OpsContext, 'settings'>, op: string): Timeline {
  const prefix = `${ctx.settings.timelinePrefix}${op}:`;
  const measure = (name: string, start: number) => {
    // Workers without User Timing (none known) lose the profile, never the operation.
    try {
      performance.measure(`${prefix}${name}`, { start, end: performance.now() });
    } catch {}
  };
  return {
    async step(name, work) {
      const start = performance.now();
      try {
        return await work();
      } finally {
        measure(name, start);
      }
    },
    measure,
    clear() {
      for (const entry of performance.getEntriesByType('measure')) {
        if (entry.name.startsWith(prefix)) performance.clearMeasures(entry.name);
      }
    },
  };
}
