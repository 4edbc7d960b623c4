import * as Comlink from 'comlink';
import type { GitApi } from '../workers/api.ts';
import { installTransferHandlers, RemoteOperationError } from '../workers/rpc.ts';

export { RemoteOperationError };

installTransferHandlers();

/** The one git worker of this page; every git operation runs there, off the main thread. */
export const gitClient: Comlink.Remote<GitApi> = Comlink.wrap<GitApi>(
  new Worker(new URL('../workers/git.worker.ts', import.meta.url), { type: 'module', name: 'git' }),
);

// The ingester warms up while the page settles; a clone started first stops it.
void gitClient.warmUp();

export const proxy = Comlink.proxy;
