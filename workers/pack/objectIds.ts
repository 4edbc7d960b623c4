// Object ids computed in another worker. Hashing every object (SHA-1 of `<type> <size>\0<data>`) is a fifth
// of a clone's work on one core; git's index-pack spreads it over threads. The ingester copies each object
// into a batch and posts it over a MessagePort, the other side hashes and answers with the ids; meanwhile
// the ingester goes on inflating and resolving. Batches travel as transferred ArrayBuffers and come back
// for reuse, so nothing is copied across and nothing is allocated per batch once the pool is full.
//
// A batch: records of [entry: u32][type code: u8][length: u32][length bytes], little-endian.
// An answer: the batch's buffer back, and [entry: u32][id: 20 bytes] per record.

import { PackError, throwIfAborted } from './errors.ts';
import { type GitObjectType, ObjectHasher, type Sha1 } from './objectHash.ts';

/** What a batch carries, and what comes back. */
export interface ObjectIdBatch {
  buffer: ArrayBuffer;
  used: number;
}
export interface ObjectIdAnswer {
  buffer: ArrayBuffer;
  ids: ArrayBuffer;
  count: number;
  /** Set when the hasher failed (it never should): the ingester's error names it. */
  error?: string;
}

/** The end of a MessageChannel (or a Worker) the ingester talks to; only what is used. */
export interface ObjectIdPort<Out, In> {
  postMessage(message: Out, transfer: Transferable[]): void;
  onmessage: ((event: MessageEvent<In>) => void) | null;
  close?(): void;
}

const TYPE_NAMES: readonly GitObjectType[] = ['commit', 'commit', 'tree', 'blob', 'tag'];
const RECORD_HEADER = 9;
const ANSWER_RECORD = 24;

/*
 * Batch size: big enough that a message's cost (a task on each side, ~40 µs measured in Chromium) is small
 * against the hashing in it, small enough that the other side starts early and the pool stays small.
 * medium.git's 79,772 objects (54 MB) make ~210 batches of 256 KiB. Only full batches are posted until
 * settle(): posting what each network chunk completed made a clone of medium.git post thousands of small
 * batches, each in a new buffer because the pool had not come back yet (110 ms of its CPU profile).
 */
const BATCH_BYTES = 256 * 1024;
// Batches posted and not yet answered, at most: 2 MiB held for the other side.
const MAX_IN_FLIGHT = 8;
// Batch buffers kept for reuse: one for each batch out, and the one being filled, so that none is allocated
// once the first nine are (a pool of four allocated a new 256 KiB buffer for most batches: the collector
// then took 11 % of a medium.git clone's profile).
const POOL_BUFFERS = MAX_IN_FLIGHT + 1;
// How long a receive loop waits for an answer due: a batch of 256 KiB hashes in about 0.4 ms.
const ANSWER_WAIT_MS = 2;

/**
 * The ingester's side: `add` copies an object into the current batch (the caller may reuse its bytes at
 * once), `flush` posts the batch, `settle` resolves once every id asked for has been written through
 * `onId(entry, ids, offset)`. Closed on `close()`, after which answers are ignored.
 */
export class RemoteObjectIds {
  private batch: Uint8Array | null = null;
  private view: DataView | null = null;
  private used = 0;
  private pending = 0;
  private readonly spare: ArrayBuffer[] = [];
  private waiters: (() => void)[] = [];
  private failure: Error | null = null;
  private closed = false;
  private answerWaiters: (() => void)[] = [];
  private behind = false;

  constructor(
    private readonly port: ObjectIdPort<ObjectIdBatch, ObjectIdAnswer>,
    private readonly onId: (entry: number, ids: Uint8Array, offset: number) => void,
  ) {
    port.onmessage = (event) => this.answer(event.data);
  }

  /**
   * Takes entry's object to be hashed over there, or answers false when the other side is behind (the
   * caller then hashes it itself): batches piling up in a starved worker would hold the pack's objects a
   * second time, and this side's core would sit idle waiting for them.
   */
  add(entry: number, typeCode: number, data: Uint8Array): boolean {
    const need = RECORD_HEADER + data.length;
    if (this.batch && this.used + need > this.batch.length) {
      if (this.pending >= MAX_IN_FLIGHT) return false;
      this.flush();
    }
    if (!this.batch) this.start(need);
    const view = this.view!;
    const at = this.used;
    view.setUint32(at, entry, true);
    view.setUint8(at + 4, typeCode);
    view.setUint32(at + 5, data.length, true);
    this.batch!.set(data, at + RECORD_HEADER);
    this.used = at + need;
    return true;
  }

  /** Posts what the current batch holds. */
  flush(): void {
    if (!this.batch || this.used === 0 || this.closed) return;
    const buffer = this.batch.buffer as ArrayBuffer;
    this.port.postMessage({ buffer, used: this.used }, [buffer]);
    this.pending++;
    this.batch = null;
    this.view = null;
    this.used = 0;
  }

  /**
   * Reads the answers that are due when half the batches allowed out are unanswered. Answers arrive as
   * message tasks, and a receive loop whose next chunk is already buffered never leaves its microtasks:
   * without this, a clone of medium.git read 11 of its ~210 answers before the end, and with 8 batches out
   * (the limit) hashed the rest itself. It waits for the next answer up to ANSWER_WAIT_MS; an answer that
   * takes longer means the other side is behind (no core for it), and until one comes the loop goes on
   * without waiting: past the limit, objects are hashed here.
   */
  async receiveAnswers(signal?: AbortSignal): Promise<void> {
    if (this.pending < MAX_IN_FLIGHT / 2 || this.closed || this.failure || this.behind) return;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const answered = new Promise<void>((resolve) => this.answerWaiters.push(resolve));
    const late = new Promise<void>((resolve) => {
      timer = setTimeout(() => {
        this.behind = true;
        resolve();
      }, ANSWER_WAIT_MS);
    });
    await Promise.race(signal ? [answered, late, aborted(signal)] : [answered, late]);
    clearTimeout(timer);
    throwIfAborted(signal);
  }

  /**
   * Resolves once every object added has its id written; rejects if the other side failed, or on `signal`
   * (a hasher that died would otherwise be waited for forever).
   */
  async settle(signal?: AbortSignal): Promise<void> {
    this.flush();
    const onAbort = () => {
      for (const wake of this.waiters.splice(0)) wake();
    };
    signal?.addEventListener('abort', onAbort);
    try {
      while (this.pending > 0 && !this.failure && !this.closed) {
        throwIfAborted(signal);
        await new Promise<void>((resolve) => this.waiters.push(resolve));
      }
      throwIfAborted(signal);
      if (this.failure) throw this.failure;
      if (this.pending > 0) throw new Error('RemoteObjectIds.settle after close');
    } finally {
      signal?.removeEventListener('abort', onAbort);
    }
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.port.onmessage = null;
    this.port.close?.();
    for (const wake of this.answerWaiters.splice(0)) wake();
    for (const wake of this.waiters.splice(0)) wake();
  }

  private start(need: number): void {
    let buffer = this.spare.pop();
    if (!buffer || buffer.byteLength < need) buffer = new ArrayBuffer(Math.max(BATCH_BYTES, need));
    this.batch = new Uint8Array(buffer);
    this.view = new DataView(buffer);
    this.used = 0;
  }

  private answer(answer: ObjectIdAnswer): void {
    if (this.closed) return;
    this.pending--;
    this.behind = false;
    if (answer.error) {
      this.failure = new PackError('PACK_HASH_FAILED', `Computing object ids failed: ${answer.error}`);
    } else {
      const ids = new Uint8Array(answer.ids);
      const view = new DataView(answer.ids);
      for (let k = 0; k < answer.count; k++) {
        const at = k * ANSWER_RECORD;
        this.onId(view.getUint32(at, true), ids, at + 4);
      }
    }
    // Big one-off batches are not kept.
    if (this.spare.length < POOL_BUFFERS && answer.buffer.byteLength === BATCH_BYTES)
      this.spare.push(answer.buffer);
    for (const wake of this.answerWaiters.splice(0)) wake();
    if (this.pending === 0 || this.failure) for (const wake of this.waiters.splice(0)) wake();
  }
}

function aborted(signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) resolve();
    else signal.addEventListener('abort', () => resolve(), { once: true });
  });
}

/** The hashing side: answers every batch that arrives on `port` with its objects' ids. */
export function serveObjectIds(
  port: ObjectIdPort<ObjectIdAnswer, ObjectIdBatch>,
  sha1: Sha1,
  onBatch?: (objects: number) => void,
): void {
  const hasher = new ObjectHasher(sha1);
  port.onmessage = (event) => {
    const { buffer, used } = event.data;
    const bytes = new Uint8Array(buffer, 0, used);
    const view = new DataView(buffer, 0, used);
    let count = 0;
    for (let at = 0; at < used; at = at + RECORD_HEADER + view.getUint32(at + 5, true)) count++;
    const ids = new ArrayBuffer(count * ANSWER_RECORD);
    const out = new Uint8Array(ids);
    const outView = new DataView(ids);
    try {
      let k = 0;
      for (let at = 0; at < used; k++) {
        const length = view.getUint32(at + 5, true);
        const start = at + RECORD_HEADER;
        outView.setUint32(k * ANSWER_RECORD, view.getUint32(at, true), true);
        hasher.hash(
          TYPE_NAMES[bytes[at + 4]],
          bytes.subarray(start, start + length),
          out,
          k * ANSWER_RECORD + 4,
        );
        at = start + length;
      }
      port.postMessage({ buffer, ids, count }, [buffer, ids]);
      onBatch?.(count);
    } catch (e) {
      port.postMessage({ buffer, ids, count: 0, error: (e as Error).message }, [buffer]);
    }
  };
}
