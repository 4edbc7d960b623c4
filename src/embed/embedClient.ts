import * as Comlink from 'comlink';
import type { EmbedApi, MinimalRead } from '../../workers/embedApi.ts';
import { installTransferHandlers, RemoteOperationError } from '../../workers/rpc.ts';
import { loadAppConfig } from '../appConfig.ts';

export type { MinimalRead };
export { RemoteOperationError };

installTransferHandlers();

/** The widget's own worker: reads only (workers/embedApi.ts), nothing of the app's clone or checkout. */
const worker = Comlink.wrap<EmbedApi>(
  new Worker(new URL('../../workers/embed.worker.ts', import.meta.url), { type: 'module', name: 'embed' }),
);

/**
 * One file or folder, straight from the host; when the host refuses the page (no CORS headers: the
 * browser reports a network error), once more through the configured CORS proxy. No credentials ever.
 */
export async function readMinimal(
  repo: string,
  ref: string,
  path: string,
  signal: AbortSignal,
): Promise<MinimalRead> {
  try {
    return await worker.readFileMinimal(repo, ref, path, {}, undefined, signal);
  } catch (err) {
    const { corsProxy } = await loadAppConfig();
    if (!(err instanceof RemoteOperationError && err.code === 'NETWORK_ERROR' && corsProxy)) throw err;
    return worker.readFileMinimal(repo, ref, path, { corsProxy }, undefined, signal);
  }
}
