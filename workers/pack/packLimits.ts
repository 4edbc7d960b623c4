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
  /**
   * Entries one tree may hold (TREE_TOO_WIDE). git sets no cap; GitHub recommends 3,000 and lists 1,000. A
   * tree is parsed and checked in one synchronous step, so this bounds how long the worker is deaf to other
   * calls while one tree is read. See TREE_ENTRY_LIMIT for the measurements.
   */
  maxTreeEntries: number;
  /**
   * How many folders deep a tree may sit below the root (TREE_TOO_DEEP): git's core.maxTreeDepth, 4096
   * (git 2.44 made it its fail-safe against trees that exhaust its stack). Every tree walk and path lookup
   * stops at it.
   */
  maxTreeDepth: number;
  /**
   * Bytes of a symbolic link's target (SYMLINK_TOO_LONG): PATH_MAX, 4096 with its NUL, bounds what the file
   * system gives git, so git never writes a longer one. The link walk costs at most 41 targets per link.
   */
  maxSymlinkTargetBytes: number;
}

/** The limits that bound a tree walk and a checkout's links (pack/treeCheck.ts), not the pack itself. */
export type TreeLimits = Pick<PackLimits, 'maxTreeEntries' | 'maxTreeDepth' | 'maxSymlinkTargetBytes'>;

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

/*
 * How wide real trees are, against what checking one costs. git sets no cap on a tree's entries; GitHub
 * recommends at most 3,000 per folder and lists 1,000 ("Repository limits", docs.github.com). The widest
 * trees found here (`git ls-tree <tree> | wc -l` on the largest trees of each repository): pyenv (the one
 * real clone on this machine) 1,046 entries; this project 41; the fixtures 110 (large.git), 39 (medium.git).
 * Checking a tree is one synchronous step of the worker; its CPU time by width (`npx tsx
 * bench/pack/treeWidth.bench.ts 7`, least / median, 2 shared cores at load 18):
 *
 *   entries        10,000     50,000      100,000       200,000
 *   check, ms      7.4/8.6    52/74       122/174       273/302     (1.2 µs an entry)
 *   parse only     4.9/6.2    25/39       40/76         106/155
 *
 * 100,000 is a hundred times the widest real tree found and thirty times GitHub's advice, and keeps one
 * tree's check near a tenth of a second, well inside the second a second call may wait. A wider tree
 * (hostile-wide.git's 200,000 entries) is refused after 100,001 entries, in the time of 100,000.
 * docs/decisions/tree-limits.md has the measurements.
 */
export const TREE_ENTRY_LIMIT = 100_000;

export const DEFAULT_TREE_LIMITS: Readonly<TreeLimits> = Object.freeze({
  maxTreeEntries: TREE_ENTRY_LIMIT,
  maxTreeDepth: 4096,
  maxSymlinkTargetBytes: 4095,
});

export const DEFAULT_PACK_LIMITS: Readonly<PackLimits> = Object.freeze({
  maxObjectSize: 512 * 1024 * 1024,
  inflateRatio: 1024,
  inflateFloor: 1024 * 1024 * 1024,
  arrivalCacheBytes: ARRIVAL_CACHE_BYTES,
  ...DEFAULT_TREE_LIMITS,
});

/**
 * The limits with `overrides` applied, always as an object of one shape: the parser reads them per entry,
 * and a caller's object with other keys (an engine's wider limits, spread in) gave V8 a second shape there,
 * which undid the warm-up's compiled code in a clone's first ingest (docs/decisions/warm-up.md).
 */
export function packLimits(overrides: Partial<PackLimits> = {}): PackLimits {
  const pick = <K extends keyof PackLimits>(key: K): PackLimits[K] =>
    overrides[key] ?? DEFAULT_PACK_LIMITS[key];
  return {
    maxObjectSize: pick('maxObjectSize'),
    inflateRatio: pick('inflateRatio'),
    inflateFloor: pick('inflateFloor'),
    arrivalCacheBytes: pick('arrivalCacheBytes'),
    maxTreeEntries: pick('maxTreeEntries'),
    maxTreeDepth: pick('maxTreeDepth'),
    maxSymlinkTargetBytes: pick('maxSymlinkTargetBytes'),
  };
}

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
