import { formatBytes, PackError } from './errors.ts';

/**
 * What a pack from a server may cost us, whatever it declares. A delta of 12 bytes can declare a 1 TiB result,
 * and 265 bytes of delta over a 16 MiB blob of zeros really produce 1 GiB: sizes and amplification are
 * checked before anything is allocated. Where the figures come from: docs/decisions/pack-limits.md.
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
 * the last byte, and fills time spent waiting for the network (a Chromium CPU profile of a medium.git clone
 * showed the git worker idle for about 65 ms of its ~400 ms of receiving). Recent objects are kept in a ring
 * (arrivalRing.ts); a delta whose base is gone is resolved after the last byte, from its chain's
 * root, as before. Share of deltas resolved on arrival, and the ingest's CPU time (Node, median of 3, the
 * bench fixtures' blob:none packs pushed in 64 KiB chunks, quiet machine; `npx tsx bench/pack/arrivalRing.bench.ts`):
 *
 *   ring              0      1 MiB   2 MiB   4 MiB   8 MiB   16 MiB
 *   medium.git  %     0.0    81.7    89.0    94.6    98.9    100.0    (63,727 deltas, 6.8 MB pack)
 *               ms    394    342     337     336     331     336
 *   large.git   %     0.0    50.1    57.1    65.2    73.6    83.1     (346,783 deltas, 39 MB pack)
 *               ms    2413   2184    2098    2185    2143    2147
 *
 * On one core the share past 1 MiB barely matters; in the browser, where the receive waits for the network,
 * resolving more of it on arrival leaves less for after the last byte. But the ring (and 4 bytes an object to
 * find things in it) is held at the clone's peak heap, the end of receiving: 4 MiB, not 8, kept large.git's
 * clone under twice its pack (issue 12: the peak, pack 37.4 MB + tables 19.3 + ring + the rest, was 76 MB).
 * What it changed in a clone: docs/decisions/arrival-ring.md.
 */
export const ARRIVAL_CACHE_BYTES = 4 * 1024 * 1024;

export const DEFAULT_PACK_LIMITS: Readonly<PackLimits> = Object.freeze({
  maxObjectSize: 512 * 1024 * 1024,
  inflateRatio: 1024,
  inflateFloor: 1024 * 1024 * 1024,
  arrivalCacheBytes: ARRIVAL_CACHE_BYTES,
});

/** The inflate budget for a pack of `packBytes` bytes. */
export function inflateBudget(limits: PackLimits, packBytes: number): number {
  return Math.max(limits.inflateFloor, limits.inflateRatio * packBytes);
}

/** Counts what a pack inflates to against its budget, so that the caller can refuse before it allocates. */
export class InflateMeter {
  /** Bytes inflated so far: entries as received, then delta results. */
  private inflated = 0;

  constructor(private readonly limits: PackLimits) {}

  /**
   * Counts `bytes` more inflated against the budget for a pack of `packBytes` (what has arrived so far while
   * receiving, the whole pack while resolving); throws PACK_INFLATE_BUDGET, before the caller allocates.
   */
  spend(bytes: number, packBytes: number): void {
    this.inflated += bytes;
    const budget = inflateBudget(this.limits, packBytes);
    if (this.inflated > budget) {
      throw new PackError(
        'PACK_INFLATE_BUDGET',
        `The pack inflates to more than ${formatBytes(budget)} from ${formatBytes(packBytes)} received: over the ` +
          `limit of ${this.limits.inflateRatio} times its size, at least ${formatBytes(this.limits.inflateFloor)} ` +
          '(inflateRatio, inflateFloor).',
        { limit: 'inflateRatio' },
      );
    }
  }
}
