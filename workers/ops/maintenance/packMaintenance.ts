// Housekeeping for a partial clone: every lazy blob fetch leaves a small promisor pack, and every read looks
// through every pack's index, so the small ones are merged now and then, the way `git repack --geometric=2`
// keeps the number of packs logarithmic in the number of objects.

import { createWasmSha1 } from '../../pack/objectHash.ts';
import { parsePackIndexV2 } from '../../pack/packIndex.ts';
import { PackIngester } from '../../pack/packIngester.ts';
import { removePackFiles, writePack } from '../../store/gitDir.ts';
import { PACK_DIR, type PackInfo, type PackSet } from '../../store/packSet.ts';
import type { PromiseFs } from '../../store/repoFs.ts';
import type { OpsContext } from '../common/engineContext.ts';
import { abortedError, isRepoGone, OperationError } from '../common/errors.ts';
import { evictPacksFromCache } from '../common/repoAccess.ts';
import { CommitGraphBuilds } from './commitGraphBuilds.ts';
import { ForegroundActivity } from './foregroundActivity.ts';

export interface RepackOptions {
  /** Merge once there are more promisor packs than this. Default 16. */
  threshold?: number;
  signal?: AbortSignal;
  /**
   * The merged pack's size limit: the merge holds its inputs and its output in memory at once, so the
   * roll-up stops before it (and a pack larger than this, the clone's own typically, is never rewritten).
   * Default 64 MiB.
   */
  maxPackBytes?: number;
  /**
   * Test hook, never passed in production (scheduleRepack passes none): awaited once the merged pack is
   * written and before the old packs are deleted, so a test can read while both exist.
   */
  beforeDeletingOldPacks?: () => Promise<void>;
}

export interface RepackResult {
  /** Packs merged into the new one (or dropped as holding nothing the others lack). */
  merged: number;
  /** Packs in the repo afterwards. */
  packs: number;
}

export const REPACK_THRESHOLD = 16;
const MAX_PACK_BYTES = 64 * 1024 * 1024;
// git repack --geometric=2: a pack is kept when it holds at least twice the objects of the one below it.
const SPLIT_FACTOR = 2;

/** One engine's pack maintenance under way: what runs, what is scheduled, what waits for the lock. */
export class MaintenanceState {
  readonly running = new Map<string, Promise<unknown>>();
  readonly scheduled = new Set<string>();
  /** Merges waiting for another operation to let the repo's lock go. */
  readonly deferred = new Map<string, Promise<void>>();
  /** The background commit-graph build's walk and backlog, per repo. */
  readonly graphBuilds = new CommitGraphBuilds();
  /** The calls the page made that background work gives way to. */
  readonly foreground = new ForegroundActivity();
}

export interface MaintenanceContext extends OpsContext {
  readonly maintenance: MaintenanceState;
}

/** Runs maintenance operations of one repo one after the other. */
function serialized<T>(ctx: MaintenanceContext, repoId: string, task: () => Promise<T>): Promise<T> {
  const { running } = ctx.maintenance;
  const previous = running.get(repoId) ?? Promise.resolve();
  const next = previous.catch(() => undefined).then(task);
  running.set(repoId, next);
  const clear = () => {
    if (running.get(repoId) === next) running.delete(repoId);
  };
  next.then(clear, clear);
  return next;
}

/**
 * Starts maybeRepack in the background unless one is already waiting to run. ensureBlobs calls this and
 * does not wait: the blob a view asked for is stored and readable before the merge, which may rewrite
 * megabytes, and readers keep working on the old packs while it runs. Failures are only logged: every
 * step leaves the repo whole (the old packs go only once the new one is written), and the next fetch
 * tries again.
 *
 * The merge runs under the repo's lock, taken only when free: an operation holding it (a checkout that
 * fetched the blobs, or another tab's) is never held up by a merge nor has one inside its batch. The
 * merge then waits, outside `running`, for the lock to be let go, and starts again.
 */
export function scheduleRepack(ctx: MaintenanceContext, repoId: string): void {
  scheduleUnderLock(ctx, repoId, 'merging packs', () => repack(ctx, repoId, {}));
}

/**
 * Runs `task` in the background, after the repo's other maintenance and under its lock taken only when free
 * (see scheduleRepack), unless the same `what` is already waiting to run, once `before` resolves if given.
 * Failures are logged: a task must leave the repo whole when it fails.
 */
export function scheduleUnderLock(
  ctx: MaintenanceContext,
  repoId: string,
  what: string,
  task: () => Promise<unknown>,
  opts: { before?: () => Promise<void> } = {},
): void {
  const { scheduled, deferred } = ctx.maintenance;
  const key = `${what}\0${repoId}`;
  if (scheduled.has(key) || deferred.has(key)) return;
  scheduled.add(key);
  serialized(ctx, repoId, async () => {
    // Awaited before the lock is asked for (a long task's next step waits for the engine to be quiet).
    await opts.before?.();
    scheduled.delete(key);
    const outcome = await ctx.store.locks.tryRepoLock(repoId, what, task);
    if (outcome === 'busy') deferUntilLockFree(ctx, repoId, key, what, task);
    return outcome;
  }).catch((err) => {
    if (isRepoGone(err)) return;
    console.warn(`Maintenance of ${repoId} (${what}) failed; it will be tried again later.`, err);
  });
}

function deferUntilLockFree(
  ctx: MaintenanceContext,
  repoId: string,
  key: string,
  what: string,
  task: () => Promise<unknown>,
): void {
  const { deferred } = ctx.maintenance;
  const wait = ctx.store.locks.repoLockFree(repoId).then(() => {
    deferred.delete(key);
    scheduleUnderLock(ctx, repoId, what, task);
  });
  deferred.set(key, wait);
}

/**
 * Resolves once no maintenance of the repo runs or waits (for tests). Not to be awaited under the repo's
 * lock: a deferred merge waits for that lock.
 */
export async function maintenanceIdle(ctx: MaintenanceContext, repoId: string): Promise<void> {
  const { running, deferred } = ctx.maintenance;
  for (;;) {
    const waiting = [...deferred.entries()].find(([key]) => key.endsWith(`\0${repoId}`))?.[1];
    const p = running.get(repoId) ?? waiting;
    if (!p) return;
    await p.catch(() => undefined);
  }
}

/**
 * When the repo has more than `threshold` promisor packs, merges the smallest of them into one promisor
 * pack, as `git repack --geometric=2` chooses them. The old packs stay readable until the new one is
 * complete on disk, and are deleted only after every one of their objects was found in it. Returns null
 * when there was nothing to do.
 */
export function maybeRepack(
  ctx: MaintenanceContext,
  repoId: string,
  opts: RepackOptions = {},
): Promise<RepackResult | null> {
  return serialized(ctx, repoId, () =>
    ctx.store.locks.underRepoLock(repoId, 'merging packs', () => repack(ctx, repoId, opts), {
      signal: opts.signal,
    }),
  );
}

async function repack(ctx: OpsContext, repoId: string, opts: RepackOptions): Promise<RepackResult | null> {
  const { store } = ctx;
  const { signal } = opts;
  const threshold = opts.threshold ?? REPACK_THRESHOLD;
  const maxPackBytes = opts.maxPackBytes ?? MAX_PACK_BYTES;
  if (signal?.aborted) throw abortedError();
  const packSet = await store.packs.for(repoId);
  const promisor = packSet.packs.filter((p) => p.promisor);
  if (promisor.length <= threshold) return null;

  const fs = store.repoFs.open(repoId).promises;
  const sized: (PackInfo & { bytes: number })[] = [];
  for (const pack of promisor) {
    sized.push({ ...pack, bytes: (await fs.stat(packPath(pack.checksum, 'pack'))).size });
  }
  sized.sort((a, b) => a.objectCount - b.objectCount || a.bytes - b.bytes);
  const rollup = sized.slice(0, geometricSplit(sized.map((p) => p.objectCount)));
  // Smallest first, so a roll-up cut short at the size limit still merges the packs most worth merging.
  const affordable: PackInfo[] = [];
  let total = 0;
  for (const pack of rollup) {
    total += pack.bytes;
    if (total > maxPackBytes) break;
    affordable.push(pack);
  }
  const { merge, redundant } = chooseDisjoint(packSet, affordable);
  if (merge.length < 2 && redundant.length === 0) return null;

  let created: string | null = null;
  if (merge.length >= 2) {
    const merged = await mergePacks(fs, packSet, merge, signal);
    if (signal?.aborted) throw abortedError();
    await writePack(fs, merged);
    await store.repoFs.flush(repoId);
    packSet.add(merged.checksum, merged.idx, true);
    created = merged.checksum;
    await store.crash.at('repack:merged-pack-committed');
    await opts.beforeDeletingOldPacks?.();
  }

  // From here the old packs' objects are all in the new one: deleting them loses nothing, and is done
  // even if the signal fires, so the repo is never left with both halves of a merge for long.
  const gone = [...(created ? merge : []), ...redundant].map((p) => p.checksum);
  for (const checksum of gone) packSet.remove(checksum);
  evictPacksFromCache(ctx, repoId, gone);
  for (const [i, checksum] of gone.entries()) {
    await removePackFiles(fs, checksum);
    if (i === 0) await store.crash.at('repack:old-packs-removing');
  }
  await store.repoFs.flush(repoId);
  return { merged: gone.length, packs: packSet.packs.length };
}

/**
 * How many of the packs (object counts, ascending) to merge: git's repack.c split_pack_geometry. From the
 * top, the largest packs that each hold at least twice the one below stay; the rest are rolled up, and the
 * roll-up absorbs the next pack up while that one is under twice its size.
 */
export function geometricSplit(counts: number[], factor = SPLIT_FACTOR): number {
  let i = counts.length - 1;
  for (; i > 0; i--) {
    if (counts[i] < factor * counts[i - 1]) break;
  }
  let split = i > 0 ? i + 1 : 0;
  let total = 0;
  for (let k = 0; k < split; k++) total += counts[k];
  for (let k = split; k < counts.length; k++) {
    if (counts[k] >= factor * total) break;
    total += counts[k];
    split++;
  }
  return split;
}

/**
 * Packs to merge must not share objects: a pack holding an object twice has an index git rejects. A pack
 * whose every object is already in the merge is redundant and just deleted; one that overlaps in part waits
 * for a later round. (Only two writers fetching the same blob, such as two tabs, make overlaps.)
 */
function chooseDisjoint(
  packSet: PackSet,
  candidates: PackInfo[],
): { merge: PackInfo[]; redundant: PackInfo[] } {
  const seen = new Set<string>();
  const merge: PackInfo[] = [];
  const redundant: PackInfo[] = [];
  for (const pack of candidates) {
    const oids = packSet.index(pack.checksum)?.oids() ?? [];
    const shared = oids.filter((oid) => seen.has(oid)).length;
    if (shared === 0) {
      merge.push(pack);
      for (const oid of oids) seen.add(oid);
    } else if (shared === oids.length) {
      redundant.push(pack);
    }
  }
  return { merge, redundant };
}

/**
 * One pack holding every entry of `packs`, copied byte for byte: each pack's entries stay together and in
 * order, so an ofs-delta's distance to its base (gitformat-pack: "offset encoding") is unchanged, and a
 * ref-delta names its base by id. PackIngester then checks every object's hash and writes the index.
 */
async function mergePacks(
  fs: PromiseFs,
  packSet: PackSet,
  packs: PackInfo[],
  signal: AbortSignal | undefined,
): Promise<{ checksum: string; pack: Uint8Array; idx: Uint8Array; promisor: string }> {
  const bodies: Uint8Array[] = [];
  const promisorLines = new Set<string>();
  let count = 0;
  let length = 12 + 20;
  for (const info of packs) {
    const pack = (await fs.readFile(packPath(info.checksum, 'pack'))) as Uint8Array;
    const view = new DataView(pack.buffer, pack.byteOffset, pack.byteLength);
    const objects = pack.length >= 32 ? view.getUint32(8) : -1;
    if (
      pack.length < 32 ||
      view.getUint32(0) !== 0x5041434b ||
      view.getUint32(4) !== 2 ||
      objects !== info.objectCount
    ) {
      throw new OperationError(
        'INTERNAL',
        `The stored pack ${info.checksum} does not match its index; not merging it.`,
      );
    }
    bodies.push(pack.subarray(12, pack.length - 20));
    count += objects;
    length += pack.length - 32;
    const promisor = await fs.readFile(packPath(info.checksum, 'promisor'), 'utf8').catch(() => '');
    // git's repack writes an empty .promisor (a NEEDSWORK in repack.c says the refs are lost); we keep them.
    for (const line of (promisor as string).split('\n')) if (line) promisorLines.add(line);
    if (signal?.aborted) throw abortedError();
  }

  const merged = new Uint8Array(length);
  const header = new DataView(merged.buffer);
  header.setUint32(0, 0x5041434b); // "PACK"
  header.setUint32(4, 2);
  header.setUint32(8, count);
  let at = 12;
  for (const body of bodies) {
    merged.set(body, at);
    at += body.length;
  }
  const sha = await createWasmSha1();
  sha.init();
  sha.update(merged.subarray(0, at));
  sha.digestInto(merged, at);

  const ingester = await PackIngester.create({ signal, expectedSizeHint: merged.length });
  ingester.push(merged);
  const result = await ingester.finish();

  // Nothing is deleted unless the new pack provably holds every object of the old ones.
  const index = parsePackIndexV2(result.idx, { verifyChecksum: false });
  for (const info of packs) {
    for (const oid of packSet.index(info.checksum)?.oids() ?? []) {
      if (!index.has(oid)) {
        throw new OperationError('INTERNAL', `Merging packs lost object ${oid}; the old packs were kept.`);
      }
    }
  }
  const promisor = promisorLines.size ? `${[...promisorLines].join('\n')}\n` : '';
  return { checksum: result.checksum, pack: result.pack, idx: result.idx, promisor };
}

function packPath(checksum: string, ext: 'pack' | 'idx' | 'promisor'): string {
  return `${PACK_DIR}/pack-${checksum}.${ext}`;
}
