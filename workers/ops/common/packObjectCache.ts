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

interface CachedObject {
  object: Uint8Array;
}
interface PackIndexLike {
  offsetCache: Record<number, CachedObject>;
  readDepth: number;
  readSlice(args: { start: number }): Promise<unknown>;
}

const HELD = Symbol('bytes held in offsetCache');
/** Each loaded pack's bound, set from the engine that opened the repo (engines may differ). */
const LIMIT = Symbol('bound on offsetCache');
/** Marks isomorphic-git's pack reader as patched: the mark is on its prototype, not in a variable here. */
const PATCHED = Symbol('offsetCache turned on');

type Bounded = PackIndexLike & { [HELD]?: number; [LIMIT]?: number };

/**
 * Turns on and bounds the object cache of isomorphic-git's pack reader (once per realm: it patches the
 * reader's prototype, which every engine shares) as soon as `cache` (an isomorphic-git cache object) holds
 * a loaded pack, and bounds each of its loaded packs to `limitBytes`. isomorphic-git keeps packs in a Map
 * under a private symbol named `PackfileCache` (repoAccess.ts reads it too); a version that stores them
 * otherwise is left as it is: reads are then as slow as before, never wrong.
 */
export async function usePackObjectCache(cache: object, limitBytes = PACK_OBJECT_CACHE_BYTES): Promise<void> {
  const record = cache as Record<symbol, unknown>;
  for (const key of Object.getOwnPropertySymbols(record)) {
    const packs = record[key];
    if (key.description !== 'PackfileCache' || !(packs instanceof Map)) continue;
    for (const loading of packs.values()) {
      const index = (await Promise.resolve(loading).catch(() => null)) as Bounded | null;
      if (index && typeof index.readSlice === 'function' && typeof index.offsetCache === 'object') {
        index[LIMIT] = limitBytes;
        patch(Object.getPrototypeOf(index) as PackIndexLike & { [PATCHED]?: true });
      }
    }
  }
}

function patch(proto: PackIndexLike & { [PATCHED]?: true }): void {
  if (proto[PATCHED]) return;
  proto[PATCHED] = true;
  const readSlice = proto.readSlice;
  proto.readSlice = async function (this: Bounded, args) {
    if (!Number.isFinite(this.readDepth)) this.readDepth = 0;
    const had = args.start in this.offsetCache;
    const result = await readSlice.call(this, args);
    if (!had) {
      const added = this.offsetCache[args.start]?.object?.byteLength ?? 0;
      this[HELD] = (this[HELD] ?? 0) + added;
      if (this[HELD] > (this[LIMIT] ?? PACK_OBJECT_CACHE_BYTES)) {
        this.offsetCache = {};
        this[HELD] = 0;
      }
    }
    return result;
  };
}
