// The widget's worker (embed.html): the engine, offering the page one thing, readFileMinimal: no clone, no
// write, no credentials, so a page embedding the widget can do nothing else through it.
import './bufferPolyfill.ts';
import { createEngine } from './engine/engine.ts';
import { exposeEngine } from './engine/worker.ts';
import { indexedDbAvailable, indexedDbStorage } from './storage/indexedDb.ts';
import { memoryStorage } from './storage/memory.ts';

// A widget is often a cross-site iframe, where the browser may refuse it storage (third-party storage
// blocked: IndexedDB says "The user denied permission", Web Locks throw SecurityError). Then it keeps what
// it fetched in memory, for as long as it lives.
const engine = indexedDbAvailable('blobless-storage-probe').then((ok) =>
  createEngine({ storage: ok ? indexedDbStorage() : memoryStorage() }),
);
exposeEngine(engine, undefined, { engineMethods: ['readFileMinimal'], repoMethods: [] });
