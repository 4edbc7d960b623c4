import { type BloblessError, type MinimalRead, wrapEngine } from '../../workers/engine/client.ts';
import { loadAppConfig } from '../appConfig.ts';

export type { BloblessError, MinimalEntry, MinimalRead } from '../../workers/engine/client.ts';

/** The widget's own worker: reads only (workers/embed.worker.ts), nothing of the app's clone or checkout. */
const engine = wrapEngine(
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
    return await engine.readFileMinimal({ url: repo, ref, path }, { signal });
  } catch (err) {
    const { corsProxy } = await loadAppConfig();
    if (!((err as BloblessError).code === 'NETWORK_ERROR' && corsProxy)) throw err;
    return engine.readFileMinimal({ url: repo, ref, path, corsProxy }, { signal });
  }
}
