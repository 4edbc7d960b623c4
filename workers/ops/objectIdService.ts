import type { ObjectIdAnswer, ObjectIdBatch, ObjectIdPort } from '../pack/objectIds.ts';

// The channel to the object-id worker (workers/hash.worker.ts), once the page has connected one and the
// worker has said it is ready. Until then, and where there is none (tests under Node, the widget), packs
// compute their ids in this worker.
let control: MessagePort | null = null;
let ready = false;

/**
 * Takes the git worker's end of the page's channel to the object-id worker; resolves once that worker is
 * ready (its SHA-1 compiled). Packs that start before then are hashed here.
 */
export function connectObjectIds(port: MessagePort): Promise<void> {
  control?.close();
  control = port;
  ready = false;
  return new Promise((resolve) => {
    port.onmessage = (event) => {
      if (event.data !== 'ready' || control !== port) return;
      ready = true;
      resolve();
    };
  });
}

/** A port of its own for one pack's ids, or undefined when no object-id worker is ready. */
export function objectIdPort(): ObjectIdPort<ObjectIdBatch, ObjectIdAnswer> | undefined {
  if (!control || !ready) return undefined;
  const { port1, port2 } = new MessageChannel();
  control.postMessage(port2, [port2]);
  return port1;
}
