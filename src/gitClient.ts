import { wrapEngine } from '../workers/engine/client.ts';
import { startUp } from './startup.ts';

export type { AuthRequiredError, BloblessError } from '../workers/engine/client.ts';

/** The one git engine of this page, in its worker; every git operation runs there, off the main thread. */
export const gitClient = wrapEngine(
  new Worker(new URL('../workers/git.worker.ts', import.meta.url), { type: 'module', name: 'git' }),
);

/** This page load's start-up calls (startup.ts), made as soon as the worker exists; views take their answers. */
export const startup = startUp(gitClient);
