import '../../workers/bufferPolyfill.ts';
import FS from '@isomorphic-git/lightning-fs';
import * as Comlink from 'comlink';
import git from 'isomorphic-git';
import http from 'isomorphic-git/http/web';

/**
 * isomorphic-git's clone as people run it in a browser today: a full clone (every branch, tag and blob)
 * with a checkout, over `isomorphic-git/http/web`, into lightning-fs. The page terminates this worker at
 * the time cap, since isomorphic-git's clone cannot be cancelled.
 */
const api = {
  ping(): boolean {
    return true;
  },

  async clone(url: string): Promise<{ ms: number }> {
    const fs = new FS('isogit-bench', { wipe: true });
    const started = performance.now();
    await git.clone({ fs, http, dir: '/repo', url });
    // Blobless flushes lightning-fs's superblock at the end of its clone; the same here.
    await fs.promises.flush();
    return { ms: performance.now() - started };
  },
};

export type IsogitWorkerApi = typeof api;

Comlink.expose(api);
