import './bufferPolyfill.ts';
import * as Comlink from 'comlink';
import { api } from './api.ts';
import { stopWarmUp } from './ops/maintenance/ingesterWarmUp.ts';
import { installTransferHandlers, releasingSignals } from './rpc.ts';

installTransferHandlers();
// Any call but the start-up ones stops the page-load warm-up, so that it takes no time from what the person
// asked for (a diff opened right after load waited for it).
const KEEPS_WARMING = new Set(['warmUp', 'listRepos']);
const exposed = Object.fromEntries(
  Object.entries(api).map(([name, fn]) => [
    name,
    KEEPS_WARMING.has(name)
      ? fn
      : (...args: unknown[]) => {
          stopWarmUp();
          return (fn as (...a: unknown[]) => unknown)(...args);
        },
  ]),
) as typeof api;
Comlink.expose(releasingSignals(exposed));
// The worker's start in its own timeline: from its creation to its modules evaluated (`--profile`).
performance.measure('blobless:worker:evaluate', { start: 0, end: performance.now() });
