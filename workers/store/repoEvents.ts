// What the workers of every tab say to each other and to the pages about a repository, over one
// BroadcastChannel per engine namespace (StorageNames.eventsChannel). The UI takes the type from here and
// the channel's name from engine.repoEvents().

export type RepoEvent =
  /** A worker took the repo's write lock and runs `what` (e.g. "checkout of main"). */
  | { type: 'busy'; repoId: string; what: string; origin: string }
  /** That worker let the lock go. */
  | { type: 'idle'; repoId: string; origin: string }
  /** A write committed: pages showing the repo read it again; the list of repos may have changed. */
  | { type: 'changed'; repoId: string; what: string; origin: string }
  /** A worker waiting for the lock asks the holder to say `busy` again (it may have started before). */
  | { type: 'who'; repoId: string; origin: string };

/** The channel, or null where there is none (very old browsers). */
export function openRepoEvents(name: string): BroadcastChannel | null {
  return typeof BroadcastChannel === 'function' ? new BroadcastChannel(name) : null;
}
