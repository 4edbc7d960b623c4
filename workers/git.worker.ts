import './bufferPolyfill.ts';
import * as Comlink from 'comlink';
import { api } from './api.ts';
import { asForeground } from './ops/maintenance/foregroundActivity.ts';
import { stopWarmUp } from './ops/maintenance/ingesterWarmUp.ts';
import { installTransferHandlers, releasingSignals } from './rpc.ts';

installTransferHandlers();
// Any call but the start-up ones stops the page-load warm-up, so that it takes no time from what the person
// asked for (a diff opened right after load waited for it).
const KEEPS_WARMING = new Set(['warmUp', 'listRepos']);
// The calls that hold background work back while they run (foregroundActivity.ts): not those that wait for
// it (commitGraphStatus) or last as long as a page (repoEvents), nor the history fill, itself background.
const NOT_FOREGROUND = new Set(['warmUp', 'listRepos', 'commitGraphStatus', 'repoEvents', 'fillHistory']);
const exposed = Object.fromEntries(
  Object.entries(api).map(([name, fn]) => {
    const call = fn as (...a: unknown[]) => unknown;
    const counted = NOT_FOREGROUND.has(name)
      ? call
      : (...args: unknown[]) => asForeground(() => call(...args));
    return [
      name,
      KEEPS_WARMING.has(name)
        ? counted
        : (...args: unknown[]) => {
            stopWarmUp();
            return counted(...args);
          },
    ];
  }),
) as typeof api;
Comlink.expose(releasingSignals(exposed));
// The worker's start in its own timeline: from its creation to its modules evaluated (`--profile`).
performance.measure('blobless:worker:evaluate', { start: 0, end: performance.now() });
