// lightning-fs's DefaultBackend and CacheFS, which its package does not export or type; repoFs.ts extends
// the one and makes the other.
declare module '@isomorphic-git/lightning-fs/src/DefaultBackend.js' {
  export default class DefaultBackend {
    init(name: string, options?: object): Promise<void>;
    protected _name: string;
    /** The file contents' store (BatchedIdb). */
    protected _idb: unknown;
    /** The activation lock. */
    protected _mutex: unknown;
    /** The in-memory file tree (CacheFS). */
    protected _cache: { _root: unknown; autoinc(): number };
    protected _opts: object;
    protected _needsWipe: boolean;
  }
}

declare module '@isomorphic-git/lightning-fs/src/CacheFS.js' {
  export default class CacheFS {
    constructor(name: string, options: { uid: number; gid: number });
    _root: unknown;
    autoinc(): number;
  }
}
