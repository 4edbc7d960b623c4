import { createEngine } from 'blobless';
import { exposeEngine } from 'blobless/worker';
import { Buffer } from 'buffer';

// isomorphic-git, under the engine, uses Node's Buffer, which browsers lack: give it one before any call.
(globalThis as { Buffer?: unknown }).Buffer ??= Buffer;

exposeEngine(createEngine());
