// One reading-and-writing operation per repo at a time, across every worker of this browser profile: each
// widget on a page runs its own worker, with its own lightning-fs and pack set in memory. lightning-fs's own
// Web Lock already hands the file system to one worker at a time (it reloads the file tree when it gets it
// back), but between two of its calls another worker may add packs or rewrite `shallow`. Holding this lock
// for the whole operation, and starting from the stored file tree and pack set, makes its look-ups, fetches
// and read-modify-writes one step: no worker fetches again what another just stored (tested), none drops
// another's line of `shallow`. Where Web Locks are missing (Node), a promise chain serializes this worker.

import { forgetPackSet } from './packSet.ts';
import { discardRepoFsChanges } from './repoFs.ts';

const chains = new Map<string, Promise<unknown>>();

interface LockManagerLike {
  request<T>(name: string, callback: () => Promise<T>): Promise<T>;
}

function lockManager(): LockManagerLike | undefined {
  const nav = (globalThis as { navigator?: { locks?: LockManagerLike } }).navigator;
  return nav?.locks;
}

/**
 * Runs `write` while holding the repo's lock. It starts from the stored file tree and pack set (another
 * worker may have added packs since this one read them) and must leave everything flushed.
 */
export async function withRepoLock<T>(repoId: string, write: () => Promise<T>): Promise<T> {
  const run = async () => {
    await discardRepoFsChanges(repoId);
    forgetPackSet(repoId);
    return write();
  };
  const locks = lockManager();
  const locked = async () => {
    if (!locks) return run();
    let ran = false;
    try {
      return await locks.request(`blobless-repo-${repoId}`, () => {
        ran = true;
        return run();
      });
    } catch (err) {
      // A frame denied storage by the browser (third-party storage blocked) is denied locks too.
      if (ran || (err as { name?: string }).name !== 'SecurityError') throw err;
      return run();
    }
  };
  const previous = chains.get(repoId) ?? Promise.resolve();
  const next = previous.then(locked, locked);
  const settled = next.catch(() => undefined);
  chains.set(repoId, settled);
  void settled.then(() => {
    if (chains.get(repoId) === settled) chains.delete(repoId);
  });
  return next;
}
