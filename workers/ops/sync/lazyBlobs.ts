// Fetches the blobs a partial clone left on the server, when something needs them (partial-clone: "fetching
// missing objects"). Like git's promisor fetch: v2 `fetch` with `want <oid>` lines and `done`, no negotiation,
// straight to git-upload-pack (the repo was cloned over v2, so no capability GET first). Each reply is a pack,
// stored whole as a promisor pack; missing oids are split into batches sent as overlapping requests.

import { isSha1Hex } from '../../model/objectId.ts';
import { PackError } from '../../pack/errors.ts';
import type { IngestedObject, ObjectHook, PackIngester } from '../../pack/packIngester.ts';
import { writePack } from '../../store/gitDir.ts';
import { looseObjects } from '../../store/looseObjects.ts';
import { TransportError } from '../../transport/errors.ts';
import type { HttpAuth } from '../../transport/gitHttp.ts';
import { formatDelay, retryDelay, retryPolicy, sleep } from '../../transport/retryPolicy.ts';
import { RemoteError, WireError } from '../../wire/errors.ts';
import { buildFetchRequest } from '../../wire/fetchCommand.ts';
import { connect } from '../common/engineContext.ts';
import { abortedError, MissingObjectError, OperationError } from '../common/errors.ts';
import type { Timeline } from '../common/timeline.ts';
import { type MaintenanceContext, scheduleRepack } from '../maintenance/packMaintenance.ts';
import { receivePack } from './receivePack.ts';

export type { IngestedObject, ObjectHook };

/** What an operation that fetches missing blobs tells onProgress while they arrive. */
export type BlobFetchProgress = {
  /** Blobs a partial clone left on the server being fetched. */
  phase: 'fetching-blobs';
  /** Objects of this call's missing blobs received so far (by its own requests or ones it shares). */
  objects: number;
  /** The missing blobs this call waits for. */
  totalObjects: number;
  /** Response bytes received for them so far. */
  bytes: number;
  /** Requests sent for them so far (a large set goes in several batches). */
  requests: number;
  /** Set while a request waits to be sent again (retryPolicy.ts): "… retrying in 2 s…". */
  retrying?: string;
};

export interface BlobFetchConnection {
  /** Overrides the proxy stored with the repo. */
  corsProxy?: string;
  auth?: HttpAuth;
}

export interface BlobFetchHooks {
  onProgress?: (p: BlobFetchProgress) => void;
  signal?: AbortSignal;
  connection?: BlobFetchConnection;
  /**
   * For the benchmark and tests: `size` fixes the blobs per request instead of planBlobBatches; `policy`
   * replaces parts of BLOB_BATCH_POLICY; `concurrency` replaces BLOB_FETCH_CONCURRENCY.
   */
  batching?: { size?: number; concurrency?: number; policy?: Partial<BlobBatchPolicy> };
  /**
   * The caller schedules pack maintenance itself (scheduleRepack) once its own writes are done: a checkout
   * must not have a merge write into its all-or-nothing batch, nor wait for one.
   */
  deferMaintenance?: boolean;
  /**
   * Each pack this call waits for, once checked, while it is being stored and still in memory: a first
   * checkout writes its files from it then (ops/worktree/newWorktree.ts). If the pack cannot be stored,
   * the call throws: the listener's caller drops what it wrote. A pack stored before the call
   * joined its request is not given; its blobs are read from storage as any others. Until the promise it
   * returns settles, the request's place among the BLOB_FETCH_CONCURRENCY is not given to the next one:
   * packs do not pile up in memory when they arrive faster than they are written. A rejection is ignored
   * (the listener reports its own failures).
   */
  onPack?: (pack: StoredBlobPack) => void | Promise<void>;
  /**
   * Each object of the packs this call waits for, as soon as it is inflated and hashed while its pack
   * arrives (ObjectHook: the bytes are valid only during the call), before the pack is checked whole or
   * stored: a first checkout stages its files from here instead of inflating them again from onPack's
   * pack. If the pack is then refused, the call throws and the listener's caller drops what it wrote.
   * Objects of a request this call joined after they arrived, and objects too large to be held whole,
   * are not told (onPack's pack, or storage, has them). Must not throw.
   */
  onObject?: ObjectHook;
  /**
   * The calling operation's timeline: each of this call's requests records receivePack's steps, then
   * `pack-index` (the pack checked and indexed) and `pack-store` (written and flushed; when onPack's work
   * overlaps it, its end waits for that work) in it.
   */
  steps?: Timeline;
}

/** A pack of blobs just stored: its bytes, whole, and where each of its objects starts. */
export interface StoredBlobPack {
  pack: Uint8Array;
  objects: IngestedObject[];
}

export interface BlobFetchResult {
  /** Objects received by this call's own requests (blobs shared from another call's request not counted). */
  fetched: number;
  requests: number;
  bytes: number;
  objects: IngestedObject[];
}

/*
 * How the missing blobs of one call are split into requests. A blob:none clone knows no blob's size, only
 * how many blobs are wanted; the bytes per blob of the repo's earlier lazy fetches (or, before any, the
 * prior below) turn that count into expected bytes:
 *   - up to `singleRequestBytes` expected in all: one request (a split only adds round trips);
 *   - else a first request of about `firstBytes`, so that a pack arrives, is checked and stored after one
 *     round trip while the server is still packing the rest;
 *   - then the rest in `spread` requests (each `growth` times the one before; 1: even), more only if
 *     one would pass `maxBatchBytes`: a pack is held whole in memory while it is checked.
 * With BLOB_FETCH_CONCURRENCY in flight, the first and the next three start at once, and the last starts
 * when the small first one is done. So a checkout costs `1 + spread` requests up to 4 × maxBatchBytes
 * (git's lazy fetch costs 1 POST, plus its info/refs GET).
 *
 * Measured with bench/lazyBlobs.bench.ts (every blob at HEAD, fixture git http-backend, fake-indexeddb,
 * 2 shared and loaded cores, so times are noisy; median of 3 runs, seconds; "remote" adds 50 ms per request
 * and a 50 Mbit/s link shared by all requests, whose own limit is 1.47 s for medium):
 *   npx tsx bench/lazyBlobs.bench.ts --repo medium --policy            (local)
 *   npx tsx bench/lazyBlobs.bench.ts --repo medium --policy --rtt 50 --mbps 50
 *
 *   (the first row: npx tsx bench/lazyBlobs.bench.ts --repo medium --sizes 250 --concurrency 4 [--rtt 50 --mbps 50])
 *
 *   FIRST_KB/SPREAD/GROWTH         requests   MB    local s (min..max)   remote s (min..max)
 *   fixed 250 blobs, 4 in flight         12   9.2   7.15 (6.85..7.44)    10.48 (7.24..11.10)   (before)
 *   one request (0/1/1)                   1   9.2   7.38 (6.53..7.88)     5.16 (4.46..6.23)
 *   256/4/2                               5   9.2   7.35 (6.78..7.85)
 *   256/4/1.5                             5   9.2   4.65 (3.13..4.91)     3.67 (2.89..4.20)
 *   256/4/1 (chosen)                      5   9.2   4.48 (4.18..5.21)     2.93 (2.62..3.37)
 *   0/4/1                                 4   9.2   4.81 (4.30..5.14)     2.52 (2.18..3.23)
 *
 * Taken on 2 cores at a load above 20: times are noise of about ±30 %, requests and bytes exact. What
 * held whatever the load, and why the small first request stays: docs/decisions/blob-batches.md.
 *
 * Each request costs a round trip and the server's start-up (http-backend, upload-pack, pack-objects);
 * four overlapping requests hide both behind the others' transfer.
 */
export interface BlobBatchPolicy {
  firstBytes: number;
  singleRequestBytes: number;
  maxBatchBytes: number;
  spread: number;
  growth: number;
}

export const BLOB_BATCH_POLICY: Readonly<BlobBatchPolicy> = {
  firstBytes: 256 * 1024,
  singleRequestBytes: 1024 * 1024,
  maxBatchBytes: 32 * 1024 * 1024,
  spread: 4,
  growth: 1,
};
export const BLOB_FETCH_CONCURRENCY = 4;
/**
 * Compressed bytes per blob assumed before a repo's first lazy fetch: what the fixtures' blobs cost in a
 * pack (small-sized 3.2 KB, medium and large 3.1 KB), close to a typical source file.
 */
export const PRIOR_BYTES_PER_BLOB = 3 * 1024;

/**
 * Sizes (blob counts) of the requests fetching `count` blobs of about `bytesPerBlob` bytes each, in the
 * order they are sent. Pure: the same inputs give the same plan.
 */
export function planBlobBatches(
  count: number,
  bytesPerBlob: number,
  policy: Readonly<BlobBatchPolicy> = BLOB_BATCH_POLICY,
): number[] {
  if (count <= 0) return [];
  const perBlob = Math.max(1, bytesPerBlob);
  if (count * perBlob <= policy.singleRequestBytes) return [count];
  const first =
    policy.firstBytes > 0 ? Math.min(count, Math.max(1, Math.round(policy.firstBytes / perBlob))) : 0;
  const rest = count - first;
  if (rest === 0) return [first];
  const spread = Math.min(rest, Math.max(1, Math.floor(policy.spread)));
  const growth = Math.max(1, policy.growth);
  let weights = Array.from({ length: spread }, (_, i) => growth ** i);
  let sum = weights.reduce((a, b) => a + b, 0);
  // When the biggest (the last) would pass maxBatchBytes: equal requests, each under it.
  if ((rest * perBlob * weights[spread - 1]) / sum > policy.maxBatchBytes) {
    const parts = Math.min(rest, Math.max(spread, Math.ceil((rest * perBlob) / policy.maxBatchBytes)));
    weights = new Array<number>(parts).fill(1);
    sum = parts;
  }
  const sizes = first > 0 ? [first] : [];
  let given = 0;
  let acc = 0;
  for (const weight of weights) {
    acc += weight;
    // Rounded running totals: the sizes add up to exactly `rest`, none is empty.
    const upTo = Math.max(given + 1, Math.round((rest * acc) / sum));
    sizes.push(upTo - given);
    given = upTo;
  }
  sizes[sizes.length - 1] += rest - given;
  return sizes.filter((n) => n > 0);
}

/** One engine's lazy blob fetches: the batches in flight, and what each repo's blobs have cost so far. */
export class BlobFetchState {
  /** Bytes received and blobs received by a repo's lazy fetches in this session, for planBlobBatches. */
  readonly bytesByRepo = new Map<string, { bytes: number; blobs: number }>();
  /** Batches being fetched, by wanted oid, per repo. */
  readonly inFlightByRepo = new Map<string, Map<string, Batch>>();

  inFlightFor(repoId: string): Map<string, Batch> {
    let map = this.inFlightByRepo.get(repoId);
    if (!map) {
      map = new Map();
      this.inFlightByRepo.set(repoId, map);
    }
    return map;
  }

  /** Expected bytes per blob of the repo's next lazy fetch: its earlier ones', else PRIOR_BYTES_PER_BLOB. */
  estimate(repoId: string): number {
    const seen = this.bytesByRepo.get(repoId);
    return seen && seen.blobs > 0 ? seen.bytes / seen.blobs : PRIOR_BYTES_PER_BLOB;
  }

  record(repoId: string, bytes: number, blobs: number): void {
    if (blobs === 0) return;
    const seen = this.bytesByRepo.get(repoId) ?? { bytes: 0, blobs: 0 };
    seen.bytes += bytes;
    seen.blobs += blobs;
    this.bytesByRepo.set(repoId, seen);
  }
}

export interface BlobContext extends MaintenanceContext {
  readonly blobs: BlobFetchState;
}

interface BatchOutcome {
  objects: IngestedObject[];
  requests: number;
  bytes: number;
}

type BatchState = 'queued' | 'running' | 'settled';

/** One request for some blobs, shared by every call that waits for any of them. */
class Batch {
  state: BatchState = 'queued';
  /** Calls still waiting for it; when the last one leaves before it settles, it is cancelled. */
  waiters = 0;
  received = 0;
  bytes = 0;
  requests = 0;
  /** Its pack was written (some maintenance is due). */
  stored = false;
  /** Why and when it is sent again, while it waits to be (progress shows it). */
  retrying: string | undefined;
  readonly controller = new AbortController();
  readonly listeners = new Set<() => void>();
  /** Told of the batch's pack once it is stored (BlobFetchHooks.onPack). */
  readonly packListeners = new Set<(pack: StoredBlobPack) => void | Promise<void>>();
  /** Told of each object as its pack arrives (BlobFetchHooks.onObject). */
  readonly objectListeners = new Set<ObjectHook>();
  readonly done: Promise<BatchOutcome>;
  #resolve!: (o: BatchOutcome) => void;
  #reject!: (e: unknown) => void;

  constructor(readonly oids: string[]) {
    this.done = new Promise<BatchOutcome>((resolve, reject) => {
      this.#resolve = resolve;
      this.#reject = reject;
    });
    // A batch nobody waits for any more may still fail; that is not an unhandled rejection.
    this.done.catch(() => undefined);
  }

  notify(): void {
    for (const listener of this.listeners) listener();
  }

  settle(inFlight: Map<string, Batch>, outcome: { ok: BatchOutcome } | { error: unknown }): void {
    if (this.state === 'settled') return;
    this.state = 'settled';
    forget(inFlight, this);
    if ('ok' in outcome) this.#resolve(outcome.ok);
    else this.#reject(outcome.error);
    this.notify();
    this.listeners.clear();
    this.packListeners.clear();
    this.objectListeners.clear();
  }
}

/**
 * Makes sure the repo holds every object in `oids`, fetching those no pack has. Blobs already stored cost no
 * request; blobs another call is already fetching are waited for, not fetched again. Throws
 * MissingObjectError when the network or server fails or the server lacks one, OperationError ABORTED when
 * the signal fires; either way every pack is stored whole or not at all. Once something was fetched, pack
 * maintenance is scheduled in the background (see packMaintenance.ts).
 */
export async function ensureBlobs(
  ctx: BlobContext,
  repoId: string,
  oids: string[],
  hooks: BlobFetchHooks = {},
): Promise<BlobFetchResult> {
  const { signal, onProgress } = hooks;
  const { store } = ctx;
  if (signal?.aborted) throw abortedError();
  const packSet = await store.packs.for(repoId);
  const result: BlobFetchResult = { fetched: 0, requests: 0, bytes: 0, objects: [] };
  const notPacked = packSet.missing(normalize(oids));
  if (notPacked.length === 0) return result;
  // Objects made here (staged files, commits, merges) are loose, and the server has never seen them.
  const loose = await looseObjects(store.repoFs.open(repoId).promises, notPacked);
  const wanted = notPacked.filter((oid) => !loose.has(oid));
  if (wanted.length === 0) return result;

  const record = await store.registry.get(repoId);
  if (!record) {
    throw new OperationError('REPO_NOT_FOUND', `No stored repository "${repoId}". It may have been deleted.`);
  }
  if (signal?.aborted) throw abortedError();

  // From here to the registration of the new batches nothing awaits, so no other call can slip in between
  // the look-up of an oid and the registration of the batch that fetches it.
  const inFlight = ctx.blobs.inFlightFor(repoId);
  const missing = packSet.missing(wanted);
  const joined = new Set<Batch>();
  const fresh: string[] = [];
  for (const oid of missing) {
    const batch = inFlight.get(oid);
    if (batch) joined.add(batch);
    else fresh.push(oid);
  }
  const own: Batch[] = [];
  let start = 0;
  for (const size of batchSizes(ctx, repoId, fresh.length, hooks.batching)) {
    const batch = new Batch(fresh.slice(start, start + size));
    start += size;
    for (const oid of batch.oids) inFlight.set(oid, batch);
    own.push(batch);
  }
  const waitedFor = [...own, ...joined];
  for (const batch of waitedFor) batch.waiters++;

  const report = () => {
    let objects = 0;
    let bytes = 0;
    let requests = 0;
    let retrying: string | undefined;
    for (const b of waitedFor) {
      objects += b.state === 'settled' ? b.oids.length : Math.min(b.received, b.oids.length);
      bytes += b.bytes;
      requests += b.requests;
      retrying ??= b.state === 'settled' ? undefined : b.retrying;
    }
    onProgress?.({
      phase: 'fetching-blobs',
      objects,
      totalObjects: missing.length,
      bytes,
      requests,
      ...(retrying ? { retrying } : {}),
    });
  };
  if (onProgress) for (const batch of waitedFor) batch.listeners.add(report);
  const onPack = hooks.onPack;
  if (onPack) for (const batch of waitedFor) batch.packListeners.add(onPack);
  const onObject = hooks.onObject;
  if (onObject) for (const batch of waitedFor) batch.objectListeners.add(onObject);

  // The call's own batches go out `concurrency` at a time. The pumps are not tied to this call: a batch
  // another call joined is still sent if this one is cancelled.
  const connection = {
    ...hooks.connection,
    corsProxy: hooks.connection?.corsProxy ?? record.corsProxy,
    auth: hooks.connection?.auth ?? store.credentials.for(record),
  };
  const context: BatchContext = {
    ctx,
    repoId,
    url: record.url,
    movedTo: record.movedTo,
    connection,
    inFlight,
    steps: hooks.steps,
  };
  const concurrency = Math.max(1, Math.floor(hooks.batching?.concurrency ?? BLOB_FETCH_CONCURRENCY));
  const queue = [...own];
  let failed = false;
  const pump = async () => {
    for (let batch = queue.shift(); batch; batch = queue.shift()) {
      if (batch.state !== 'queued') continue;
      // After a failure, a batch only this call wants is given up rather than sent to a failing server.
      if (failed && batch.waiters <= 1) {
        cancel(inFlight, batch);
        continue;
      }
      await runBatch(context, batch);
      await batch.done.catch((err) => {
        if (!isAbort(err)) failed = true;
      });
    }
  };
  // Listened to before the pumps start: a batch's first progress report (a caller may abort from inside
  // it) can come before their first await.
  let onAbort: (() => void) | undefined;
  const aborted = new Promise<'aborted'>((resolve) => {
    onAbort = () => resolve('aborted');
    signal?.addEventListener('abort', onAbort, { once: true });
  });
  for (let i = 0; i < Math.min(concurrency, own.length); i++) void pump();
  // After the listener: a caller may abort from inside this first progress call.
  if (onProgress) report();
  try {
    const settled = Promise.allSettled(waitedFor.map((b) => b.done));
    const outcomes = await Promise.race([settled, aborted]);
    if (outcomes === 'aborted' || signal?.aborted) {
      // Leave every batch; those nobody else wants are cancelled. Wait for them to stop, so that no pack of
      // this call is written after it returns.
      for (const batch of waitedFor) leave(inFlight, batch);
      await Promise.allSettled(waitedFor.filter((b) => b.waiters <= 0).map((b) => b.done));
      throw abortedError();
    }
    for (const batch of waitedFor) batch.waiters--;
    for (let i = 0; i < own.length; i++) {
      const outcome = outcomes[i];
      if (outcome.status !== 'fulfilled') continue;
      result.fetched += outcome.value.objects.length;
      result.requests += outcome.value.requests;
      result.bytes += outcome.value.bytes;
      for (const object of outcome.value.objects) result.objects.push(object);
    }
    // The pack set as it is now: another tab's commit seen on taking the lock replaces the one read above,
    // and the packs just fetched were added to the new one.
    const stillMissing = (await store.packs.for(repoId)).missing(missing);
    if (stillMissing.length > 0) throw missingError(stillMissing, waitedFor, outcomes);
    return result;
  } finally {
    if (onAbort) signal?.removeEventListener('abort', onAbort);
    for (const batch of waitedFor) batch.listeners.delete(report);
    if (onPack) for (const batch of waitedFor) batch.packListeners.delete(onPack);
    if (onObject) for (const batch of waitedFor) batch.objectListeners.delete(onObject);
    if (own.some((b) => b.stored) && !hooks.deferMaintenance) scheduleRepack(ctx, repoId);
  }
}

function batchSizes(
  ctx: BlobContext,
  repoId: string,
  count: number,
  batching: BlobFetchHooks['batching'],
): number[] {
  const fixed = batching?.size;
  if (fixed !== undefined) {
    const size = Math.max(1, Math.floor(fixed));
    return Array.from({ length: Math.ceil(count / size) }, (_, i) => Math.min(size, count - i * size));
  }
  return planBlobBatches(count, ctx.blobs.estimate(repoId), { ...BLOB_BATCH_POLICY, ...batching?.policy });
}

/**
 * Cancels every blob fetch of the repo, whoever asked for it, and resolves once they have stopped: call it
 * before deleting the repo, so that no pack is written into it afterwards. A call waiting on a cancelled
 * request fails with MISSING_OBJECT whose cause is ABORTED ("the request fetching it was cancelled").
 */
export async function cancelBlobFetches(ctx: BlobContext, repoId: string): Promise<void> {
  const { bytesByRepo, inFlightByRepo } = ctx.blobs;
  bytesByRepo.delete(repoId);
  const inFlight = inFlightByRepo.get(repoId);
  if (!inFlight) return;
  inFlightByRepo.delete(repoId);
  const batches = new Set(inFlight.values());
  for (const batch of batches) cancel(inFlight, batch);
  await Promise.allSettled([...batches].map((b) => b.done));
}

function normalize(oids: string[]): string[] {
  const out = new Set<string>();
  for (const raw of oids) {
    const oid = raw.toLowerCase();
    if (!isSha1Hex(oid)) {
      throw new OperationError(
        'INVALID_OBJECT_ID',
        `${JSON.stringify(raw)} is not an object id (40 hexadecimal digits).`,
      );
    }
    out.add(oid);
  }
  return [...out];
}

function isAbort(err: unknown): boolean {
  return err instanceof OperationError && err.code === 'ABORTED';
}

/** A call stops waiting for a batch; the last one to leave cancels it if it is not done. */
function leave(inFlight: Map<string, Batch>, batch: Batch): void {
  batch.waiters--;
  if (batch.waiters <= 0 && batch.state !== 'settled') cancel(inFlight, batch);
}

function cancel(inFlight: Map<string, Batch>, batch: Batch): void {
  // New calls must not join a batch that is going away: they start their own.
  forget(inFlight, batch);
  batch.controller.abort();
  if (batch.state === 'queued') batch.settle(inFlight, { error: abortedError() });
}

function forget(inFlight: Map<string, Batch>, batch: Batch): void {
  for (const oid of batch.oids) if (inFlight.get(oid) === batch) inFlight.delete(oid);
}

interface BatchContext {
  ctx: BlobContext;
  repoId: string;
  url: string;
  /** RepoRecord.movedTo: where the repository's info/refs landed when it was last asked. */
  movedTo: string | undefined;
  connection: BlobFetchConnection;
  inFlight: Map<string, Batch>;
  steps: Timeline | undefined;
}

/** Sends one batch's request and stores its pack; settles the batch and never throws. */
async function runBatch(context: BatchContext, batch: Batch): Promise<void> {
  batch.state = 'running';
  try {
    batch.settle(context.inFlight, { ok: await fetchResuming(context, batch) });
  } catch (err) {
    batch.settle(context.inFlight, { error: batch.controller.signal.aborted ? abortedError() : err });
  }
}

/**
 * A batch whose pack broke off half way (the connection cut, stalled or closed early) is not sent again
 * as it was: it asks for the blobs of the batch still not stored, after the retry policy's wait, within
 * its attempts. (Each pack is stored whole or not at all, so today that is the batch again unless another
 * call stored some meanwhile; the request is rebuilt from the store, never repeated blindly.) Transient
 * answers before any byte (5xx, 429, a reset) are retried inside the transport.
 */
async function fetchResuming(context: BatchContext, batch: Batch): Promise<BatchOutcome> {
  const signal = batch.controller.signal;
  const policy = retryPolicy(context.ctx.settings.retry);
  const total: BatchOutcome = { objects: [], requests: 0, bytes: 0 };
  let wants = batch.oids;
  for (let attempt = 1; ; attempt++) {
    try {
      const outcome = await fetchBatch(context, batch, wants);
      total.objects.push(...outcome.objects);
      total.requests += outcome.requests;
      total.bytes += outcome.bytes;
      return total;
    } catch (err) {
      if (!brokeMidTransfer(err) || attempt >= policy.attempts || signal.aborted) throw err;
      wants = (await context.ctx.store.packs.for(context.repoId)).missing(batch.oids);
      if (wants.length === 0) return total;
      const delayMs = retryDelay(attempt, err instanceof TransportError ? err : {}, policy);
      batch.retrying = `The transfer broke off (${(err as Error).message.split('(')[0].trim()}); asking again for the ${wants.length} blob${wants.length === 1 ? '' : 's'} still missing in ${formatDelay(delayMs)}… (attempt ${attempt + 1} of ${policy.attempts})`;
      batch.notify();
      await sleep(delayMs, signal).catch(() => {
        throw abortedError();
      });
      batch.retrying = undefined;
    }
  }
}

/** A response that began and then broke off: the connection, not what the server sent, failed. */
function brokeMidTransfer(err: unknown): err is TransportError | WireError {
  if (err instanceof TransportError)
    return (err.code === 'NETWORK_ERROR' && !err.beforeResponse) || err.code === 'TIMEOUT';
  return err instanceof WireError && (err.code === 'RESPONSE_TRUNCATED' || err.code === 'PKT_LINE_TRUNCATED');
}

async function fetchBatch(context: BatchContext, batch: Batch, wants: string[]): Promise<BatchOutcome> {
  const { ctx, repoId, connection } = context;
  const { store } = ctx;
  const signal = batch.controller.signal;
  const client = connect(ctx, context.url, {
    // Straight to where the repository moved on its host: the address given would answer 301, and cost a
    // GET and the POST again (docs/decisions/clone-fixed-costs.md).
    movedTo: context.movedTo,
    corsProxy: connection.corsProxy,
    auth: connection.auth,
    signal,
    protocol: 'version=2',
    onRetry: (notice) => {
      batch.retrying = notice.text;
      batch.notify();
    },
  });
  // As git's promisor fetch (promisor-remote.c fetch_objects, fetch-pack.c): no haves, so `done` at once;
  // no thin pack, so every pack stands alone. git also sends `filter blob:none`, which changes nothing for
  // wanted blobs; we leave it out.
  const request = buildFetchRequest({ wants, done: true, ofsDelta: true, noProgress: true });
  batch.requests++;
  batch.notify();
  let ingester: PackIngester | null;
  try {
    ({ ingester } = await receivePack(client, request, {
      limits: ctx.settings.limits,
      signal,
      steps: context.steps,
      // Only a call that listens pays for the ids in hex.
      onObject:
        batch.objectListeners.size > 0
          ? (object) => {
              for (const listener of batch.objectListeners) listener(object);
            }
          : undefined,
      onPackProgress: (p) => {
        batch.retrying = undefined;
        if (p.phase !== 'receiving') return;
        batch.received = p.objects;
        batch.bytes = client.bytesReceived;
        batch.notify();
      },
    }));
  } finally {
    batch.retrying = undefined;
    batch.bytes = client.bytesReceived;
  }
  if (!ingester) return { objects: [], requests: 1, bytes: client.bytesReceived };
  const indexStarted = performance.now();
  const pack = await ingester.finish();
  context.steps?.measure('pack-index', indexStarted);
  ctx.blobs.record(repoId, client.bytesReceived, pack.objects.length);
  // Last point of cancellation: from here the pack is written whole (.pack, .promisor, .idx last).
  if (signal.aborted) throw abortedError();
  // The listeners (a first checkout staging its files) read the pack in memory while IndexedDB stores it:
  // their CPU work and the store's transaction overlap, instead of one waiting for the other. They start
  // once that transaction is under way (started earlier, their work would hold up its start to the end).
  // What they write is dropped by their caller if the store fails (ensureBlobs then throws).
  let mayListen = () => {};
  const listening = new Promise<void>((resolve) => {
    mayListen = resolve;
  })
    .then(() =>
      Promise.all(
        [...batch.packListeners].map(async (listener) =>
          listener({ pack: pack.pack, objects: pack.objects }),
        ),
      ),
    )
    .catch(() => undefined);
  // One writer per repo: under the lock of the operation that asked, or of its own (waiting, cancellable).
  const storeStarted = performance.now();
  const storing = store.locks.underRepoLock(
    repoId,
    'fetching blobs',
    async () => {
      // The repo's current pack set: a failed checkout, or another tab, may have replaced the one this
      // batch started with.
      const current = await store.packs.for(repoId);
      if (pack.objects.length === 0 || current.index(pack.checksum)) return;
      // git writes an empty .promisor for a lazy fetch (2.39: fetch --stdin names no refs).
      await writePack(store.repoFs.open(repoId).promises, {
        checksum: pack.checksum,
        pack: pack.pack,
        idx: pack.idx,
        promisor: '',
      });
      const flushing = store.repoFs.flush(repoId);
      // The transaction is made and filled in microtasks: after one task it is IndexedDB's to run.
      void afterTask().then(mayListen);
      await flushing;
      current.add(pack.checksum, pack.idx, true);
      batch.stored = true;
      // Counted once stored: inside an operation's all-or-nothing batch (a checkout) that is when the
      // operation commits, and a discarded batch is not counted at all.
      const count = (stored: boolean) =>
        stored
          ? store.registry.addFetched(repoId, client.bytesReceived, pack.pack.length + pack.idx.length)
          : undefined;
      const committed = store.repoFs.committed(repoId);
      if (store.repoFs.held(repoId)) void committed.then(count);
      else await count(await committed);
    },
    { signal },
  );
  // Not stored (already there, or failed): the listeners start all the same.
  void storing
    .finally(() => {
      context.steps?.measure('pack-store', storeStarted);
      mayListen();
    })
    .catch(() => undefined);
  const [stored] = await Promise.allSettled([storing, listening]);
  if (stored.status === 'rejected') throw stored.reason;
  return { objects: pack.objects, requests: 1, bytes: client.bytesReceived };
}

/**
 * Names a blob still missing, with the reason its batch gave: a real failure rather than a batch given up
 * after it, so the message says what went wrong.
 */
function missingError(
  stillMissing: string[],
  batches: Batch[],
  outcomes: PromiseSettledResult<BatchOutcome>[],
): Error {
  const others = stillMissing.length - 1;
  const missing = new Set(stillMissing);
  let failure: { oid: string; err: unknown } | undefined;
  for (let i = 0; i < batches.length; i++) {
    const outcome = outcomes[i];
    if (outcome.status === 'fulfilled') continue;
    const oid = batches[i].oids.find((o) => missing.has(o));
    if (oid === undefined) continue;
    if (!failure || (isAbort(failure.err) && !isAbort(outcome.reason)))
      failure = { oid, err: outcome.reason };
  }
  if (!failure) {
    return new MissingObjectError(stillMissing[0], 'the server answered without it', {
      notOnServer: true,
      others,
    });
  }
  const { oid, err } = failure;
  if (isAbort(err)) {
    return new MissingObjectError(oid, 'the request fetching it was cancelled', { others, cause: err });
  }
  if (err instanceof RemoteError) {
    const notOnServer = /not our ref|not found|no such/i.test(err.remoteMessage);
    // Not the network: "connect and try again" would send the person looking in the wrong place.
    return new MissingObjectError(oid, err.message, {
      notOnServer,
      others,
      cause: err,
      advice: notOnServer ? undefined : 'Try again later; if it keeps failing, the server has a problem.',
    });
  }
  if (err instanceof TransportError) {
    if (err.code === 'OFFLINE')
      return new MissingObjectError(oid, err.message, { offline: true, others, cause: err, advice: '' });
    // A 401 or 403 message already says what to do, and so does an HTTP error or a stall.
    const auth =
      err.code === 'HTTP_UNAUTHORIZED' ||
      err.code === 'HTTP_FORBIDDEN' ||
      err.code === 'HTTP_ERROR' ||
      err.code === 'TIMEOUT';
    return new MissingObjectError(oid, err.message, { others, cause: err, advice: auth ? '' : undefined });
  }
  // A limit of the engine's (an endless reply, a delta bomb) is not a transfer to try again: the error names
  // the setting, and the server is the one to doubt.
  if ((err instanceof WireError || err instanceof PackError) && err.limit !== undefined) return err;
  if (err instanceof WireError || err instanceof PackError) {
    return new MissingObjectError(oid, `the server's reply was cut short or damaged (${err.message})`, {
      others,
      cause: err,
      advice: 'Try again; if it keeps failing, the server or a proxy in front of it sends broken data.',
    });
  }
  // Storage failures and bugs are not about the network: they keep their own type.
  return err instanceof Error ? err : new Error(String(err));
}

/** Resolves after the current task: every microtask queued before it has run. */
function afterTask(): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, 0));
}
