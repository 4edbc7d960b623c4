import type { ObjectIdAnswer, ObjectIdBatch, ObjectIdPort } from '../objectIds.ts';

/** `port` as the ingester sees it, counting the batches posted through it (`posted`, their sizes). */
export function countingPort(port: MessagePort): ObjectIdPort<ObjectIdBatch, ObjectIdAnswer> & {
  posted: number[];
} {
  const posted: number[] = [];
  return {
    posted,
    postMessage: (message, transfer) => {
      posted.push(message.used);
      port.postMessage(message, transfer);
    },
    set onmessage(handler) {
      port.onmessage = handler;
    },
    get onmessage() {
      return port.onmessage;
    },
    close: () => port.close(),
  };
}
