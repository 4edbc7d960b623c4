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
}

export const DEFAULT_PACK_LIMITS: PackLimits = {
  maxObjectSize: 512 * 1024 * 1024,
  inflateRatio: 1024,
  inflateFloor: 1024 * 1024 * 1024,
};

/** The inflate budget for a pack of `packBytes` bytes. */
export function inflateBudget(limits: PackLimits, packBytes: number): number {
  return Math.max(limits.inflateFloor, limits.inflateRatio * packBytes);
}
