/**
 * What a pack from a server may cost us, whatever it declares. A delta of 12 bytes can declare a 1 TiB result,
 * and 265 bytes of delta over a 16 MiB blob of zeros really produce 1 GiB: sizes and amplification are
 * checked before anything is allocated. See docs/ARCHITECTURE.md, "Limits", for where the figures come from.
 */
export interface PackLimits {
  /**
   * The largest object (a whole entry, or the result a delta declares) the ingester will build, in bytes.
   * Default 512 MiB: five times GitHub's hard limit of 100 MiB per file, and git's own core.bigFileThreshold,
   * above which git stores objects whole and never makes deltas of them.
   */
  maxObjectSize: number;
  /**
   * Bytes the pack may inflate to in all (every entry as received, every delta result, re-applied ones
   * included), as a multiple of the pack's own size. Default 1024: real packs inflate 2 to 10 times (measured),
   * a long history of one big file or directory a few hundred times; zlib alone tops out near 1032.
   */
  inflateRatio: number;
  /** The budget never goes below this many bytes, however small the pack. Default 1 GiB. */
  inflateFloor: number;
  /**
   * Bytes of recently received objects kept while the pack arrives, so that a delta is resolved as it
   * arrives while its base is at hand (ARRIVAL_CACHE_BYTES). 0 resolves every delta after the last byte.
   */
  arrivalCacheBytes: number;
}

/*
 * Resolving a delta as it arrives, while its base is still at hand, spares inflating it a second time after
 * the last byte, and fills the time spent waiting for the network (a clone of medium.git in Chromium was idle
 * for 150 of its 390 ms of receiving). Bases are kept by recency; a delta whose base is gone is resolved after
 * the last byte, from its chain's root, as before. Share of deltas resolved on arrival (pack order of git 2.39's
 * pack-objects, blob:none packs of the bench fixtures, LRU over the objects' inflated sizes):
 *
 *   cache       1 MB   2 MB   4 MB   8 MB   16 MB   32 MB
 *   medium.git  83.3   89.6   95.1   98.9   100.0   100.0    (63,727 deltas, 6.8 MB pack)
 *   large.git   50.7   58.3   66.5   75.1    84.7    91.8    (346,783 deltas, 39 MB pack)
 *
 * The cache lives only while receiving, when the pack is not yet whole, so it does not raise the clone's peak.
 */
export const ARRIVAL_CACHE_BYTES = 8 * 1024 * 1024;

export const DEFAULT_PACK_LIMITS: PackLimits = {
  maxObjectSize: 512 * 1024 * 1024,
  inflateRatio: 1024,
  inflateFloor: 1024 * 1024 * 1024,
  arrivalCacheBytes: ARRIVAL_CACHE_BYTES,
};

/** The inflate budget for a pack of `packBytes` bytes. */
export function inflateBudget(limits: PackLimits, packBytes: number): number {
  return Math.max(limits.inflateFloor, limits.inflateRatio * packBytes);
}
