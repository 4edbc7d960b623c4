import {
  type MinimalProgress,
  type MinimalRead,
  type ReadMinimalOptions,
  readFileMinimal,
} from './ops/read/readFileMinimal.ts';

import type { StorageMode } from './storageFallback.ts';

export type { MinimalEntry, MinimalProgress, MinimalRead } from './ops/read/readFileMinimal.ts';

/**
 * What the widget (embed.html) may ask of its worker: reads only. No clone, no write, no credentials, so
 * its worker bundle carries none of that code and a page embedding it can do nothing else through it.
 */
export const embedApi = {
  readFileMinimal(
    url: string,
    ref: string,
    path: string,
    options?: Pick<ReadMinimalOptions, 'corsProxy'>,
    onProgress?: (p: MinimalProgress) => void,
    signal?: AbortSignal,
  ): Promise<MinimalRead> {
    return readFileMinimal(url, ref, path, { corsProxy: options?.corsProxy }, { onProgress, signal });
  },
};

/** What the widget's worker exposes: embedApi, and whether it could keep what it fetched. */
export type EmbedApi = typeof embedApi & { storage(): Promise<StorageMode> };
