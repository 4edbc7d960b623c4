// isomorphic-git's pack reader (GitPackIndex.readSlice) resolves a deltified object by reading its whole
// chain of bases again on every read: its cache of read objects (`offsetCache`) is meant to fill once
// `readDepth > 3`, but `readDepth` starts undefined, so the count is NaN and nothing is ever cached
// (isomorphic-git 1.44). A tree at depth 50 of a long history then costs 50 inflates per read, and a file
// history or blame walking 50,000 commits reads hundreds of thousands of them. Starting the count at 0
// turns the cache on; it is then bounded, since isomorphic-git never empties it: past
// PACK_OBJECT_CACHE_BYTES it is emptied and fills again.

/**
 * What one pack's cache of read objects may hold before it is emptied. Measured with `npm run bench --
 * --sizes medium|large --runs 1 --skip isogit,embedOneFile,firstView,noopFetch` (one run each, on a shared
 * machine at load 4-7: the bound's own effect is within the noise; turning the cache on is not):
 *
 * | bound             | blame, medium | blame, large | checkout, large: writing files | checkout peak heap, medium |
 * | ----------------- | ------------- | ------------ | ------------------------------ | -------------------------- |
 * | no cache (before) | 46.2 s        | 275 s        | 5.7-6.2 s                      | 112 MB                     |
 * | 8 MB              | 9.7 s         |              |                                | 134 MB                     |
 * | 32 MB             | 7.6 s         | 47.1 s       | 4.6 s                          | 118 MB                     |
 * | 128 MB            | 9.9 s         |              |                                | 131 MB                     |
 *
 * docs/decisions/pack-object-cache.md.
 */
export const PACK_OBJECT_CACHE_BYTES = 32 * 1024 * 1024;

/** The bound in force: PACK_OBJECT_CACHE_BYTES, lowered by tests to see it work on small fixtures. */
export const packObjectCacheLimit = { bytes: PACK_OBJECT_CACHE_BYTES };

interface CachedObject {
  object: Uint8Array;
}
interface PackIndexLike {
  offsetCache: Record<number, CachedObject>;
  readDepth: number;
  readSlice(args: { start: number }): Promise<unknown>;
}

const HELD = Symbol('bytes held in offsetCache');
let patched = false;

/**
 * Turns on and bounds the object cache of isomorphic-git's pack reader, once for the whole worker, as soon
 * as `cache` (an isomorphic-git cache object) holds a loaded pack. isomorphic-git keeps packs in a Map
 * under a private symbol named `PackfileCache` (repoAccess.ts reads it too); a version that stores them
 * otherwise is left as it is: reads are then as slow as before, never wrong.
 */
export async function usePackObjectCache(cache: object): Promise<void> {
  if (patched) return;
  const record = cache as Record<symbol, unknown>;
  for (const key of Object.getOwnPropertySymbols(record)) {
    const packs = record[key];
    if (key.description !== 'PackfileCache' || !(packs instanceof Map)) continue;
    for (const loading of packs.values()) {
      const index = (await Promise.resolve(loading).catch(() => null)) as PackIndexLike | null;
      if (index && typeof index.readSlice === 'function' && typeof index.offsetCache === 'object') {
        patch(Object.getPrototypeOf(index) as PackIndexLike);
        return;
      }
    }
  }
}

function patch(proto: PackIndexLike): void {
  if (patched) return;
  patched = true;
  const readSlice = proto.readSlice;
  proto.readSlice = async function (this: PackIndexLike & { [HELD]?: number }, args) {
    if (!Number.isFinite(this.readDepth)) this.readDepth = 0;
    const had = args.start in this.offsetCache;
    const result = await readSlice.call(this, args);
    if (!had) {
      const added = this.offsetCache[args.start]?.object?.byteLength ?? 0;
      this[HELD] = (this[HELD] ?? 0) + added;
      if (this[HELD] > packObjectCacheLimit.bytes) {
        this.offsetCache = {};
        this[HELD] = 0;
      }
    }
    return result;
  };
}
