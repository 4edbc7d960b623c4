import type { TreeLimits } from '../pack/packLimits.ts';
import type { KeyValueStore, Storage, StorageNames } from './storage.ts';

/** What the home screen lists about a stored repo. The objects themselves live in the repo's own database. */
/** What the engine keeps about a stored repo, beside its git directory (the registry database). */
export interface RepoRecord {
  /** The repo's id (`engine.repo(id)`). */
  id: string;
  /** The remote's URL, as the clone normalized it. */
  url: string;
  /**
   * Where info/refs last redirected `url` to, when on the same origin (a renamed repository): the ls-refs
   * sent with the next GET goes there (GitHttpClient.aheadBase), and so does a lazy fetch's POST, which asks
   * no info/refs (forgotten if that address fails: info/refs is then asked at `url`). `url` stays as given,
   * as git keeps `remote.origin.url`; every other request follows the GET's redirect as it is then.
   */
  movedTo?: string;
  /** The CORS proxy the repo was cloned through; later requests to `url` (lazy blob fetches) go through it too. */
  corsProxy?: string;
  /**
   * The CORS proxy the person agreed, having seen its address, to send this repository's token through
   * (the token dialog, the clone form). Without it, no token goes through `corsProxy`.
   */
  tokenProxy?: string;
  /** Only when the person asked to keep them; otherwise credentials live in the worker's memory. Never sent to the page. */
  auth?: {
    /** The user name of the Basic credentials. */
    username: string;
    /** The password or token. */
    password: string;
  };
  /**
   * The repository needed a token: cloned with one, or one was given for it later. What it shows must not
   * reach other sites unasked (its README's external images wait for a click).
   */
  needsToken?: boolean;
  /** The tree limits the clone was given (CloneOptions.limits), for every later walk; defaults where absent. */
  treeLimits?: Partial<TreeLimits>;
  /** A name to show: the URL's last path part without `.git`. */
  name: string;
  /** The branch HEAD is on, or null when detached. */
  branch: string | null;
  /** The commit HEAD pointed at when last stored. */
  headOid: string;
  /** The partial-clone filter (`blob:none`, `tree:0`), or null for a full clone. */
  filter: string | null;
  /** Whether the history stops at a boundary (`.git/shallow` lists commits). */
  shallow: boolean;
  /**
   * Made by readFileMinimal (the widget), not by a clone: depth 1, `tree:0`, holding only the trees and
   * blobs of the paths read. The app's views expect every tree of a commit, so they do not open it.
   */
  minimal?: boolean;
  /**
   * A first-view clone (depth 1, one ref) whose history, branches and tags are still to be fetched: set
   * by the clone, cleared by fillHistory once the repo holds what a normal clone holds. A clone the person
   * asked to be shallow never has it, so it is never filled on its own.
   */
  historyFill?: HistoryFillState;
  /** Bytes the git directory takes in storage (its files' sizes summed). */
  sizeBytes: number;
  /** Response bytes of every request made for this repo: the clone and each lazy fetch since. */
  bytesFetched?: number;
  /** When the repo was cloned, in milliseconds since 1970-01-01 UTC (`Date.now()`). */
  createdAt: number;
  /** When something was last fetched for it, in milliseconds since 1970-01-01 UTC. */
  lastFetchedAt: number;
  /**
   * When a fetch last listed every tag (`tags: 'all'`, the history fill's last step); absent, the clone
   * did, at `createdAt`. A routine fetch lists them all again once this is TAG_LIST_MAX_AGE_MS old.
   */
  tagsListedAt?: number;
}

/** How far a first-view clone's history fill has come (RepoRecord.historyFill). */
export interface HistoryFillState {
  /** The depth reached so far from the tips (1 after the clone); grows with every step. */
  depth: number;
  /** Commits stored so far (the clone's, plus each step's). */
  commits: number;
  /** Response bytes of the fill's steps so far (the clone's are in `bytesFetched`). */
  bytes: number;
}

/** The list of stored repos: one record each, in the engine's registry database. One per engine. */
export class Registry {
  private readonly store: KeyValueStore<RepoRecord>;

  constructor(storage: Storage, names: StorageNames) {
    this.store = storage.keyValue<RepoRecord>(names.registryDatabase, 'repos');
  }

  async put(record: RepoRecord): Promise<void> {
    await this.store.set(record.id, record);
  }

  get(id: string): Promise<RepoRecord | undefined> {
    return this.store.get(id);
  }

  /** Every record, the one fetched last first. */
  async list(): Promise<RepoRecord[]> {
    const all = await this.store.values();
    return all.filter(Boolean).sort((a, b) => b.lastFetchedAt - a.lastFetchedAt);
  }

  async remove(id: string): Promise<void> {
    await this.store.delete(id);
  }

  /** Changes a record in one transaction, so it neither undoes a concurrent update nor revives a deleted repo. */
  async update(id: string, change: (r: RepoRecord) => RepoRecord): Promise<void> {
    await this.store.update(id, (r) => r && change(r));
  }

  /** Adds what a fetch cost to the record, in one transaction so concurrent fetches add up. */
  async addFetched(id: string, bytes: number, storedBytes: number): Promise<void> {
    await this.store.update(
      id,
      (r) =>
        r && {
          ...r,
          bytesFetched: (r.bytesFetched ?? 0) + bytes,
          sizeBytes: r.sizeBytes + storedBytes,
          lastFetchedAt: Date.now(),
        },
    );
  }
}
