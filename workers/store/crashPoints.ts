// Named points inside the writing operations where crash tests stop a worker dead. In production no hook
// is ever set (only tests call setHook), so each point costs one comparison.
//
// In Chromium, an e2e test reaches the worker's global scope through DevTools (Playwright's
// `worker.evaluate`), which no page script can: it sets `__bloblessCrashAt` to a point's name, waits for
// `__bloblessCrashedAt` to say the worker stands there, and closes the tab, which terminates the worker
// for real in the middle of the operation.

export type CrashPoint =
  /** The clone's git directory is written but held, not committed; the registry has no record of it. */
  | 'clone:files-written'
  /** The clone's git directory is committed; the registry has no record of it yet. */
  | 'clone:files-committed'
  /** The checkout's blobs are stored; nothing of the working tree is written yet. */
  | 'checkout:blobs-stored'
  /** The checkout's working tree, index and HEAD are written but held, not committed. */
  | 'checkout:files-written'
  /** The checkout committed; the registry still names the previous branch and commit. */
  | 'checkout:files-committed'
  /** A fetch's pack, refs and shallow list are written but held, not committed. */
  | 'fetch:files-written'
  /** A fetch committed; the registry's record (shallow, sizes) is not updated yet. */
  | 'fetch:files-committed'
  /** A pull's merge commit is committed (nothing names it yet); the branch and working tree are unmoved. */
  | 'pull:merge-committed'
  /** A commit's objects, branch and reflog are written but held, not committed. */
  | 'commit:files-written'
  /** A commit is committed; the registry still names the previous commit. */
  | 'commit:files-committed'
  /** The server took a push; the remote-tracking ref is not moved yet. */
  | 'push:remote-updated'
  /** A push's remote-tracking ref is written but held, not committed. */
  | 'push:tracking-written'
  /** A pack merge's new pack is committed; the packs it replaces are all still there. */
  | 'repack:merged-pack-committed'
  /** A pack merge deleted some of the old packs' files, not yet committed. */
  | 'repack:old-packs-removing';

export type CrashHook = (point: CrashPoint) => Promise<void> | void;

interface CrashGlobals {
  __bloblessCrashAt?: string;
  __bloblessCrashedAt?: string;
}

/** One engine's crash points: the hook a test set, if any. */
export class CrashPoints {
  private hook: CrashHook | undefined;

  /** For tests: `hook` runs at every crash point; it may never resolve, abandoning the operation there. */
  setHook(next: CrashHook | undefined): void {
    this.hook = next;
  }

  async at(point: CrashPoint): Promise<void> {
    if (this.hook) await this.hook(point);
    const globals = globalThis as CrashGlobals;
    if (globals.__bloblessCrashAt === point) {
      globals.__bloblessCrashedAt = point;
      // Never goes on: the test terminates the worker while it waits here.
      await new Promise<never>(() => undefined);
    }
  }
}
