// Warming the ingester before the first clone. A fresh browser profile runs the inflater, the delta code
// and the hashing cold, a measurable part of a first clone (docs/decisions/warm-up.md, with its figures).
// So when a clone is likely the worker ingests a synthetic pack of tree-like objects, delta chains and
// text, in slices that an operation stops (`signal`), and V8 has compiled the hot paths by then.

import { deflate } from './deflate.ts';
import { throwIfAborted } from './errors.ts';
import { createWasmSha1, sha1 } from './objectHash.ts';
import { entryHeader, OBJ_OFS_DELTA, TYPE_CODES } from './packEntries.ts';
import { type IngestedPack, PackIngester } from './packIngester.ts';
import { PackReader } from './packReader.ts';

/**
 * Distinct sets of one whole tree and its chain of deltas, each compressed once (the platform's deflate is
 * slow per call) and repeated REPEAT times in the pack: the ingester does not mind the same object twice.
 */
const SETS = 30;
const REPEAT = 6;
const CHAIN = 9;
const ENTRIES = 40;
/** The sizes of the warm-up's pushes, in turn: some 64 KiB, as before, and odd sizes between. */
const PUSH_BYTES: readonly number[] = [64 * 1024, 1021, 64 * 1024, 9973, 64 * 1024, 333, 32771];
/**
 * The pack's first bytes go in pushes of 1 to 7 bytes, so that a stream stops inside every part of itself:
 * mid dynamic header, mid symbol, an end of block within the last bytes received (the inflater's careful
 * path). With 64 KiB pushes those paths had no type feedback, and a clone's first pack, arriving in
 * chunks cut anywhere, made V8 drop the compiled inflater three times (docs/decisions/warm-up.md).
 */
const TINY_PUSHES_BYTES = 24 * 1024;
/** The pack's trailer: pushed alone, as a network chunk may bring it, after the last entry. */
const TRAILER_BYTES = 20;
/** Bytes of a delta's short copy and short insert (see delta). */
const SHORT_OP = 7;
/** Which objects a round reads back (readBack): every this many, some 100 of them, and the blobs. */
const READ_BACK_EVERY = 19;
/** What each round hashes with the synchronous SHA-1, which the ingester does not use. */
const SYNC_SHA1_BYTES = 256 * 1024;
/** How much the warm-up ingests between two yields to the calls waiting for the worker. */
const YIELD_BYTES = 64 * 1024;

/**
 * Blobs of source-like text, each compressed once, all repeated TEXT_REPEAT times. Trees alone leave the
 * inflater's paths for text cold (long matches, long codes, several blocks a stream): after a warm-up of
 * trees only, the first ingest of small's 200 files took more than twice as long as the next one
 * (docs/decisions/warm-up.md, 2026-12-05). Commits are text of that kind too.
 */
const TEXT_BLOBS = 27;
const TEXT_REPEAT = 3;
const WORDS: readonly string[] = [
  'const',
  'return',
  'function',
  'if',
  'else',
  'for',
  'await',
  'export',
  'import',
  'the',
  'of',
  'to',
  'is',
  'in',
  'that',
  'value',
  'data',
  'name',
  'path',
  'file',
  'error',
  'result',
  'options',
  'length',
  'index',
  'new',
  'this',
  'null',
  'true',
];

function varint(n: number, out: number[]): void {
  while (n >= 0x80) {
    out.push((n & 0x7f) | 0x80);
    n = Math.floor(n / 128);
  }
  out.push(n);
}

function ofsDistance(distance: number, out: number[]): void {
  const bytes = [distance & 0x7f];
  let d = distance >>> 7;
  while (d > 0) {
    d -= 1;
    bytes.unshift((d & 0x7f) | 0x80);
    d >>>= 7;
  }
  out.push(...bytes);
}

/** A tree-like object: `ENTRIES` lines of mode, name, NUL and 20 bytes of pseudo-random id. */
function tree(set: number, next: () => number): Uint8Array {
  const parts: number[] = [];
  for (let e = 0; e < ENTRIES; e++) {
    for (const c of `100644 file-${set}-${e}.txt`) parts.push(c.charCodeAt(0));
    parts.push(0);
    for (let k = 0; k < 20; k++) parts.push(next() & 0xff);
  }
  return Uint8Array.from(parts);
}

/**
 * Lines of indented words, names and numbers, as source files and commit messages have them, with what
 * makes a real stream take the inflater's rarer branches: rare characters (literal codes longer than the
 * table's root) and lines repeated from far back (distances with many extra bits). A branch the warm-up never
 * took has no type feedback, and the first stream that takes it throws the compiled loop away.
 */
function text(bytes: number, next: () => number): Uint8Array {
  const lines: string[] = [];
  let length = 0;
  while (length < bytes) {
    let line: string;
    if (lines.length > 64 && next() % 8 === 0) {
      line = lines[next() % (lines.length >>> 1)];
    } else {
      line = '  '.repeat(next() % 4);
      const words = 3 + (next() % 9);
      for (let w = 0; w < words; w++) {
        const kind = next() % 20;
        if (kind < 13) line += WORDS[next() % WORDS.length];
        else if (kind < 17) line += `name${next() % 500}`;
        else if (kind < 19) line += String(next() % 10000);
        else line += String.fromCharCode(0x21 + (next() % 94), 0xa1 + (next() % 0x15e));
        line += ' .,;(=:'[next() % 7];
      }
    }
    lines.push(line);
    length += line.length + 1;
  }
  return new TextEncoder().encode(`${lines.join('\n')}\n`);
}

/** One entry of the pack: its header, its compressed data, and its size inflated. */
interface Entry {
  header: Uint8Array;
  data: Uint8Array;
  size: number;
}

/** `content` as an entry of type `type` (gitformat-pack object types), compressed once. */
async function compressed(type: number, content: Uint8Array): Promise<Entry> {
  return { header: entryHeader(type, content.length), data: await deflate(content), size: content.length };
}

/**
 * A delta on a base of `baseSize`: copy its first half, insert a new entry, copy the rest. The first copy
 * and the insert are each split in a short instruction and a long one: applyDelta copies under 32 bytes in a
 * loop and longer runs with `set`, and real deltas have both.
 */
function delta(baseSize: number, insert: Uint8Array): Uint8Array {
  const half = baseSize >>> 1;
  const out: number[] = [];
  varint(baseSize, out);
  varint(baseSize + insert.length, out);
  out.push(0x80 | 0x10, SHORT_OP); // copy [0, SHORT_OP)
  out.push(0x80 | 0x01 | 0x10 | 0x20, SHORT_OP, (half - SHORT_OP) & 0xff, (half - SHORT_OP) >>> 8); // copy [SHORT_OP, half)
  out.push(SHORT_OP, ...insert.subarray(0, SHORT_OP));
  out.push(insert.length - SHORT_OP, ...insert.subarray(SHORT_OP));
  out.push(
    0x80 | 0x01 | 0x02 | 0x10 | 0x20,
    half & 0xff,
    half >>> 8,
    (baseSize - half) & 0xff,
    (baseSize - half) >>> 8,
  );
  return Uint8Array.from(out);
}

/**
 * The synthetic pack: SETS × REPEAT whole trees, each followed by a chain of CHAIN ofs-deltas, then
 * TEXT_REPEAT times the blobs (text, short text, noise) and a delta on the first tree, far back.
 */
export async function warmUpPack(): Promise<Uint8Array> {
  let seed = 0x2545f491;
  const next = () => {
    seed ^= seed << 13;
    seed ^= seed >>> 17;
    seed ^= seed << 5;
    return seed >>> 0;
  };
  // Each set: the whole tree, then its deltas, compressed; the distances back are fixed per set.
  const sets: { base: Entry; deltas: Entry[] }[] = [];
  for (let set = 0; set < SETS; set++) {
    const base = tree(set, next);
    let size = base.length;
    const deltas = [];
    for (let k = 0; k < CHAIN; k++) {
      const insert = Uint8Array.from({ length: 40 }, () => next() & 0x7f);
      deltas.push(await compressed(OBJ_OFS_DELTA, delta(size, insert)));
      size += insert.length;
    }
    sets.push({ base: await compressed(TYPE_CODES.tree, base), deltas });
  }
  const blobs: Entry[] = [];
  for (let b = 0; b < TEXT_BLOBS; b++) {
    // 256 bytes to 64 KiB: past 16 KiB a stream has several blocks, each with its own codes.
    blobs.push(await compressed(TYPE_CODES.blob, text(256 << (b % 9), next)));
  }
  // Short ones, which zlib codes with its fixed table, and noise, which it stores as is (in blocks of up
  // to 64 KiB), as it does with binary files.
  for (let b = 0; b < 3; b++) blobs.push(await compressed(TYPE_CODES.blob, text(100 + (next() % 200), next)));
  for (const size of [1024, 80 * 1024]) {
    blobs.push(
      await compressed(
        TYPE_CODES.blob,
        Uint8Array.from({ length: size }, () => next() & 0xff),
      ),
    );
  }
  // A delta on the pack's first tree, from after the text: its distance back takes three bytes.
  const firstTree = sets[0].base;
  const farDelta = await compressed(
    OBJ_OFS_DELTA,
    delta(
      firstTree.size,
      Uint8Array.from({ length: 40 }, () => next() & 0x7f),
    ),
  );
  const bytes: number[] = [0x50, 0x41, 0x43, 0x4b, 0, 0, 0, 2];
  const count = SETS * REPEAT * (1 + CHAIN) + (blobs.length + 1) * TEXT_REPEAT;
  bytes.push(count >>> 24, (count >>> 16) & 0xff, (count >>> 8) & 0xff, count & 0xff);
  /** Appends `entry` (an ofs-delta on the entry at `base`); returns where it starts. */
  const append = (entry: Entry, base?: number): number => {
    const start = bytes.length;
    bytes.push(...entry.header);
    if (base !== undefined) ofsDistance(start - base, bytes);
    for (const b of entry.data) bytes.push(b);
    return start;
  };
  const firstTreeAt = bytes.length;
  for (let r = 0; r < REPEAT; r++) {
    for (const set of sets) {
      let previous = append(set.base);
      for (const d of set.deltas) previous = append(d, previous);
    }
  }
  for (let r = 0; r < TEXT_REPEAT; r++) {
    for (const b of blobs) append(b);
    append(farDelta, firstTreeAt);
  }
  const pack = new Uint8Array(bytes.length + 20);
  pack.set(bytes);
  const sha = await createWasmSha1();
  sha.init();
  sha.update(pack.subarray(0, bytes.length));
  sha.digestInto(pack, bytes.length);
  return pack;
}

/** Reads every READ_BACK_EVERY-th object and every blob of the ingested pack back out of it, as a checkout does. */
function readBack(ingested: IngestedPack): void {
  const offsets = new Map(ingested.objects.map((o) => [o.oid, o.offset]));
  const reader = new PackReader(ingested.pack, (oid) => offsets.get(oid));
  ingested.objects.forEach((o, i) => {
    // The blobs too: text in several blocks, and noise in stored ones.
    if (i % READ_BACK_EVERY === 0 || o.type === 'blob') reader.read(o.offset);
  });
}

/** How many bytes the warm-up's push number `push`, at `at` of a pack of `length`, takes. */
export function pushSize(at: number, push: number, length: number): number {
  if (at < TINY_PUSHES_BYTES) return 1 + (push % 7);
  const trailerAt = length - TRAILER_BYTES;
  return Math.min(PUSH_BYTES[push % PUSH_BYTES.length], at < trailerAt ? trailerAt - at : TRAILER_BYTES);
}

/**
 * Ingests the synthetic pack `rounds` times, in pushes of uneven sizes, yielding every 64 KiB so that calls
 * to the worker are answered meanwhile; stops (ABORTED) as soon as `signal` says an operation began.
 */
export async function warmUpIngester(rounds: number, signal?: AbortSignal): Promise<void> {
  // No rounds: nothing at all, not even the pack (building it runs deflate and SHA-1, a warm-up of its own).
  if (rounds <= 0) return;
  const pack = await warmUpPack();
  for (let round = 0; round < rounds; round++) {
    // The second round as a checkout's: each object handed to a hook, and no delta resolved on arrival
    // (a base that left the arrival cache is inflated again at the end). A path the warm-up never took made
    // V8 drop the compiled inflater in the first checkout after a clone.
    const asCheckout = round === 1;
    const ingester = await PackIngester.create({
      signal,
      ...(asCheckout ? { onObject: () => undefined, limits: { arrivalCacheBytes: 0 } } : {}),
    });
    // Pushes of uneven sizes, as the network delivers them: a stream then stops at every kind of place,
    // mid-symbol too, and the inflater's resuming paths are compiled as well.
    for (let at = 0, push = 0, sinceYield = 0; at < pack.length; push++) {
      const size = pushSize(at, push, pack.length);
      ingester.push(pack.subarray(at, at + size));
      at += size;
      sinceYield += size;
      // Every 64 KiB, not every push: nested timers wait at least 4 ms each in a browser.
      if (sinceYield < YIELD_BYTES && at < pack.length) continue;
      sinceYield = 0;
      // A task, not scheduler.yield (the ingester's yieldToEventLoop): a yield's continuation runs ahead of
      // the calls waiting to be answered, and letting them in is the point here.
      await new Promise((resolve) => setTimeout(resolve, 0));
      throwIfAborted(signal);
    }
    const ingested = await ingester.finish({ objects: asCheckout });
    // A checkout reads trees back from the stored pack, through the same inflater: from a buffer of a
    // kind the receive never hands it (fixed-length, not growable), which V8 tells apart.
    if (asCheckout) readBack(ingested);
    // The synchronous SHA-1 that ends a written .idx and the index (store/indexFile.ts): the ingester's own
    // hashing is WebAssembly, so without this the first index took 3.5 ms to hash its 20 KB in Node after
    // the warm-up, 0.1 ms once warm.
    sha1(pack.subarray(0, SYNC_SHA1_BYTES));
    throwIfAborted(signal);
  }
}
