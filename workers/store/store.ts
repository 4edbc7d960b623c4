import { CrashPoints } from './crashPoints.ts';
import { Credentials } from './credentials.ts';
import { PackSets } from './packSet.ts';
import { Registry } from './registry.ts';
import { RepoFileSystems } from './repoFs.ts';
import { RepoLocks } from './repoLock.ts';
import { type Storage, StorageNames } from './storage.ts';

/**
 * One engine's hold on its storage: the repos' file systems and pack sets, the registry, the locks, the
 * session's credentials and the crash points. Everything a repo keeps in memory between operations at
 * this layer lives here, so two engines (two namespaces) share nothing.
 */
export class Store {
  readonly names: StorageNames;
  readonly repoFs: RepoFileSystems;
  readonly packs: PackSets;
  readonly registry: Registry;
  readonly locks: RepoLocks;
  readonly credentials: Credentials;
  readonly crash = new CrashPoints();

  constructor(
    readonly storage: Storage,
    namespace: string,
  ) {
    this.names = new StorageNames(namespace);
    this.locks = new RepoLocks(storage.locks, this.names, () => this.repoFs);
    this.repoFs = new RepoFileSystems(storage, this.names, (repoId) => this.locks.heldHereNow(repoId));
    this.packs = new PackSets(this.repoFs);
    this.registry = new Registry(storage, this.names);
    this.credentials = new Credentials(this.registry);
  }

  /** Forgets what is kept of a repo between operations (its pack set); read again on next use. */
  forgetRepo(repoId: string): void {
    this.packs.forget(repoId);
  }

  /**
   * Stores what is pending, lets go of every file system, the channel, and the session's credentials. The
   * storage itself stays as it is (a memory storage keeps its data for as long as it is referenced).
   */
  async close(): Promise<void> {
    await this.repoFs.close();
    this.locks.close();
    this.credentials.clear();
  }
}
