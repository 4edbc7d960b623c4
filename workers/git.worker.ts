import './bufferPolyfill.ts';
import * as Comlink from 'comlink';
import { api } from './api.ts';
import { installTransferHandlers, releasingSignals } from './rpc.ts';

installTransferHandlers();
Comlink.expose(releasingSignals(api));
// The worker's start in its own timeline: from its creation to its modules evaluated (`--profile`).
performance.measure('blobless:worker:evaluate', { start: 0, end: performance.now() });
