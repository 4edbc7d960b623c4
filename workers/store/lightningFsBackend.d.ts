// lightning-fs's DefaultBackend, which its package does not export or type; repoFs.ts extends it.
declare module '@isomorphic-git/lightning-fs/src/DefaultBackend.js' {
  export default class DefaultBackend {
    init(name: string, options?: object): Promise<void>;
    /** The in-memory file tree (CacheFS). */
    protected _cache: {
      _root: unknown;
      autoinc(): number;
      mkdir(filepath: string, opts: { mode: number }): void;
      writeStat(filepath: string, size: number, opts: { mode: number }): unknown;
    };
  }
}
