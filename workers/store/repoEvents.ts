// What the workers of every tab say to each other and to the pages about a repository, over one
// BroadcastChannel per engine namespace (StorageNames.eventsChannel). The UI takes the type from here and
// the channel's name from engine.repoEvents().

/**
 * A message on the namespace's repo-events BroadcastChannel (`engine.repoEvents()`): what an engine in this
 * or another tab does to a repo. `origin` is the sending engine's id; `repoId` the repo concerned.
 */
export type RepoEvent =
  /** A worker took the repo's write lock and runs `what` (e.g. "checkout of main"). */
  | {
      /** The lock was taken. */
      type: 'busy';
      /** The repo concerned. */
      repoId: string;
      /** What runs, for people ("checkout of main"). */
      what: string;
      /** The sending engine's id (RepoEventsChannel.origin): a page skips its own engine's events. */
      origin: string;
    }
  /** That worker let the lock go. */
  | {
      /** The lock was let go. */
      type: 'idle';
      /** The repo concerned. */
      repoId: string;
      /** The sending engine's id. */
      origin: string;
    }
  /** A write committed: pages showing the repo read it again; the list of repos may have changed. */
  | {
      /** Something was stored. */
      type: 'changed';
      /** The repo concerned. */
      repoId: string;
      /** What changed it, for people ("fetch", "commit"). */
      what: string;
      /** The sending engine's id. */
      origin: string;
    }
  /** A worker waiting for the lock asks the holder to say `busy` again (it may have started before). */
  | {
      /** Who holds the lock? */
      type: 'who';
      /** The repo concerned. */
      repoId: string;
      /** The sending engine's id. */
      origin: string;
    };

/** The channel, or null where there is none (very old browsers). */
export function openRepoEvents(name: string): BroadcastChannel | null {
  return typeof BroadcastChannel === 'function' ? new BroadcastChannel(name) : null;
}
