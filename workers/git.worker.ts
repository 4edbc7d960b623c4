// The app's git worker: the engine, exposed to the page (src/gitClient.ts wraps it). The Buffer polyfill is
// this entry's, not the library's: isomorphic-git needs `globalThis.Buffer`, which browsers lack.
import './bufferPolyfill.ts';
import { createEngine } from './engine/engine.ts';
import { exposeEngine } from './engine/worker.ts';

exposeEngine(createEngine());
// The worker's start in its own timeline: from its creation to its modules evaluated (`--profile`).
performance.measure('blobless:worker:evaluate', { start: 0, end: performance.now() });
