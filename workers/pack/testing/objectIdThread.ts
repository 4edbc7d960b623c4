// The object-id worker as a Node worker thread, for tests that need it on another thread as in the browser:
// the port it is handed is served there.
import { parentPort } from 'node:worker_threads';
import { createWasmSha1 } from '../objectHash.ts';
import { type ObjectIdAnswer, type ObjectIdBatch, type ObjectIdPort, serveObjectIds } from '../objectIds.ts';

parentPort!.once('message', async (port: MessagePort) => {
  serveObjectIds(port as unknown as ObjectIdPort<ObjectIdAnswer, ObjectIdBatch>, await createWasmSha1());
  parentPort!.postMessage('ready');
});
