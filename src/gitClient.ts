import { wrapEngine } from '../workers/engine/client.ts';

export type { AuthRequiredError, BloblessError } from '../workers/engine/client.ts';

/** The one git engine of this page, in its worker; every git operation runs there, off the main thread. */
export const gitClient = wrapEngine(
  new Worker(new URL('../workers/git.worker.ts', import.meta.url), { type: 'module', name: 'git' }),
);

// The ingester warms up while the page settles; a clone started first stops it.
void gitClient.warmUp();
