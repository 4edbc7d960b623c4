import * as Comlink from 'comlink';
import type { GitApi } from '../workers/api.ts';

/**
 * Starts the object-id worker beside the git worker and gives each one end of a channel: the git worker
 * then has the objects of big packs hashed there, on another core (workers/pack/objectIds.ts). Created by
 * the page, not by the git worker, so that it is a worker of the page as the git worker is (DevTools and
 * the benchmark's heap sampler see it the same way).
 */
export function startObjectIdWorker(git: Comlink.Remote<GitApi>): Promise<void> {
  const worker = new Worker(new URL('../workers/hash.worker.ts', import.meta.url), {
    type: 'module',
    name: 'hash',
  });
  const { port1, port2 } = new MessageChannel();
  worker.postMessage(port1, [port1]);
  // Resolves once the object-id worker is ready; the app does not wait (a clone before then hashes in the
  // git worker), the benchmark does, as a person who types a URL after the page loaded never sees it.
  return git.connectObjectIds(Comlink.transfer(port2, [port2]));
}
