// Warming the ingester before the first clone. A fresh browser profile runs the inflater, the delta code
// and the hashing cold, a measurable part of a first clone (docs/decisions/warm-up.md, with its figures).
// So when a clone is likely the worker ingests a synthetic pack of tree-like objects and delta chains, in
// slices that an operation stops (`signal`), and V8 has compiled the hot paths by then.

import { deflate } from './deflate.ts';
import { throwIfAborted } from './errors.ts';
import { createWasmSha1 } from './objectHash.ts';
import { entryHeader } from './packEntries.ts';
import { PackIngester } from './packIngester.ts';

/**
 * Distinct sets of one whole tree and its chain of deltas, each compressed once (the platform's deflate is
 * slow per call) and repeated REPEAT times in the pack: the ingester does not mind the same object twice.
 */
const SETS = 30;
const REPEAT = 10;
const CHAIN = 9;
const ENTRIES = 40;

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

/** A delta on a base of `baseSize`: copy its first half, insert a new entry, copy the rest. */
function delta(baseSize: number, insert: Uint8Array): Uint8Array {
  const half = baseSize >>> 1;
  const out: number[] = [];
  varint(baseSize, out);
  varint(baseSize + insert.length, out);
  out.push(0x80 | 0x10 | 0x20, half & 0xff, half >>> 8); // copy [0, half)
  out.push(insert.length, ...insert);
  out.push(
    0x80 | 0x01 | 0x02 | 0x10 | 0x20,
    half & 0xff,
    half >>> 8,
    (baseSize - half) & 0xff,
    (baseSize - half) >>> 8,
  );
  return Uint8Array.from(out);
}

/** The synthetic pack: SETS × REPEAT whole trees, each followed by a chain of CHAIN ofs-deltas. */
export async function warmUpPack(): Promise<Uint8Array> {
  let seed = 0x2545f491;
  const next = () => {
    seed ^= seed << 13;
    seed ^= seed >>> 17;
    seed ^= seed << 5;
    return seed >>> 0;
  };
  // Each set: the whole tree, then its deltas, compressed; the distances back are fixed per set.
  const sets: { base: Uint8Array; baseSize: number; deltas: { header: Uint8Array; data: Uint8Array }[] }[] =
    [];
  for (let set = 0; set < SETS; set++) {
    const base = tree(set, next);
    let size = base.length;
    const deltas = [];
    for (let k = 0; k < CHAIN; k++) {
      const insert = Uint8Array.from({ length: 40 }, () => next() & 0x7f);
      const d = delta(size, insert);
      deltas.push({ header: entryHeader(6, d.length), data: await deflate(d) });
      size += insert.length;
    }
    sets.push({ base: await deflate(base), baseSize: base.length, deltas });
  }
  const bytes: number[] = [0x50, 0x41, 0x43, 0x4b, 0, 0, 0, 2];
  const count = SETS * REPEAT * (1 + CHAIN);
  bytes.push(count >>> 24, (count >>> 16) & 0xff, (count >>> 8) & 0xff, count & 0xff);
  for (let r = 0; r < REPEAT; r++) {
    for (const set of sets) {
      let previous = bytes.length;
      bytes.push(...entryHeader(2, set.baseSize));
      for (const b of set.base) bytes.push(b);
      for (const d of set.deltas) {
        const start = bytes.length;
        bytes.push(...d.header);
        ofsDistance(start - previous, bytes);
        for (const b of d.data) bytes.push(b);
        previous = start;
      }
    }
  }
  const pack = new Uint8Array(bytes.length + 20);
  pack.set(bytes);
  const sha = await createWasmSha1();
  sha.init();
  sha.update(pack.subarray(0, bytes.length));
  sha.digestInto(pack, bytes.length);
  return pack;
}

/**
 * Ingests the synthetic pack `rounds` times, in 64 KiB pushes, yielding between them so that calls to the
 * worker are answered meanwhile; stops (ABORTED) as soon as `signal` says an operation began.
 */
export async function warmUpIngester(rounds: number, signal?: AbortSignal): Promise<void> {
  // No rounds: nothing at all, not even the pack (building it runs deflate and SHA-1, a warm-up of its own).
  if (rounds <= 0) return;
  const pack = await warmUpPack();
  for (let round = 0; round < rounds; round++) {
    const ingester = await PackIngester.create({ signal });
    for (let at = 0; at < pack.length; at += 64 * 1024) {
      ingester.push(pack.subarray(at, at + 64 * 1024));
      // A task, not scheduler.yield (the ingester's yieldToEventLoop): a yield's continuation runs ahead of
      // the calls waiting to be answered, and letting them in is the point here.
      await new Promise((resolve) => setTimeout(resolve, 0));
      throwIfAborted(signal);
    }
    await ingester.finish({ objects: false });
  }
}
