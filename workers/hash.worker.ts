// The object-id worker: computes the ids of the objects a pack brings in (pack/objectIds.ts) on a core of
// its own while the git worker inflates. The page starts it beside the git worker and hands each one end of
// a channel (src/objectIdWorker.ts); over that channel the git worker sends a fresh port per pack.
import { createWasmSha1 } from './pack/objectHash.ts';
import { serveObjectIds } from './pack/objectIds.ts';

// What this worker has done, for DevTools and the end-to-end tests (read with a worker evaluate).
const stats = { packs: 0, batches: 0, objects: 0 };
(self as unknown as { objectIdStats: typeof stats }).objectIdStats = stats;

self.onmessage = async (event: MessageEvent<MessagePort>) => {
  const control = event.data;
  // Compiled once before saying ready, so that the first pack's first batch does not wait for it.
  await createWasmSha1();
  control.onmessage = async (request: MessageEvent<MessagePort>) => {
    stats.packs++;
    serveObjectIds(request.data, await createWasmSha1(), (objects) => {
      stats.batches++;
      stats.objects += objects;
    });
  };
  control.postMessage('ready');
};
