import * as Comlink from 'comlink';
import type { GitApi } from '../workers/api.ts';
import { installTransferHandlers, RemoteOperationError } from '../workers/rpc.ts';
import { startUp } from './startup.ts';

export { RemoteOperationError };

installTransferHandlers();

/** The one git worker of this page; every git operation runs there, off the main thread. */
export const gitClient: Comlink.Remote<GitApi> = Comlink.wrap<GitApi>(
  new Worker(new URL('../workers/git.worker.ts', import.meta.url), { type: 'module', name: 'git' }),
);

/** This page load's start-up calls (startup.ts), made as soon as the worker exists; views take their answers. */
export const startup = startUp(gitClient);

export const proxy = Comlink.proxy;
