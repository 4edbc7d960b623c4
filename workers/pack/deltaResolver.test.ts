import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PackError } from './errors.ts';
import type { PackIngesterOptions, PackProgress } from './packIngester.ts';
import { type GitIndexOfPack, gitIndexPack, makeSmallRepo, type SampleRepo } from './testing/gitPacks.ts';
import { expectSameAsGit, failureOf, ingest } from './testing/ingest.ts';
import {
  buildPack,
  buildPackAt,
  entryTypes,
  makeDelta,
  objectId,
  type PackEntry,
} from './testing/packBuilder.ts';

// The resolving half of the ingester (deltaResolver.ts), driven through PackIngester with small packs, made by
// git or by hand: every delta tree resolved as `git index-pack` resolves it, on arrival, after the last byte,
// or both, whatever the caches keep; thin packs completed as `index-pack --fix-thin` completes them.

const enc = new TextEncoder();
const blob = (data: Uint8Array): PackEntry => ({ type: 'blob', data });
const text = (n: number, tag: string) => {
  let s = '';
  for (let i = 0; i < n; i++) s += `${tag} line ${i}\n`;
  return enc.encode(s);
};

/** The PackError thrown by push or finish. */
async function errorOf(
  pack: Uint8Array,
  options: PackIngesterOptions = {},
  chunk = 65536,
): Promise<PackError> {
  try {
    await ingest(pack, chunk, options);
  } catch (e) {
    if (e instanceof PackError) return e;
    throw e;
  }
  throw new Error('the pack was accepted');
}

// Every way the caches can be set: the arrival ring off, tiny (it drops bases), default; the delta base cache
// tiny (every base rebuilt from its chain) or default.
const CACHES: PackIngesterOptions[] = [
  {},
  { limits: { arrivalCacheBytes: 0 } },
  { limits: { arrivalCacheBytes: 1024 } },
  { limits: { arrivalCacheBytes: 0 }, deltaBaseCacheLimit: 1 },
  { deltaBaseCacheLimit: 1 },
];

// Completing a thin pack depends on the caches only through the resolving it ends with: the ring off and on.
const THIN_CACHES: PackIngesterOptions[] = [{}, { limits: { arrivalCacheBytes: 0 }, deltaBaseCacheLimit: 1 }];

/** A delta from `base` to `result`: the common prefix and suffix copied, the middle inserted. */
function deltaBetween(base: Uint8Array, result: Uint8Array): Uint8Array {
  let pre = 0;
  while (pre < base.length && pre < result.length && base[pre] === result[pre]) pre++;
  let suf = 0;
  while (
    suf < base.length - pre &&
    suf < result.length - pre &&
    base[base.length - 1 - suf] === result[result.length - 1 - suf]
  )
    suf++;
  const ops: Parameters<typeof makeDelta>[1] = [];
  if (pre > 0) ops.push({ copy: [0, pre] });
  if (result.length - pre - suf > 0) ops.push({ insert: result.subarray(pre, result.length - suf) });
  if (suf > 0) ops.push({ copy: [base.length - suf, suf] });
  return makeDelta(base.length, ops);
}

const edit = (data: Uint8Array, at: number, what: string) => {
  const out = new Uint8Array(data.length + what.length);
  out.set(data.subarray(0, at));
  out.set(enc.encode(what), at);
  out.set(data.subarray(at), at + what.length);
  return out;
};

/**
 * Ingests `pack` in chunks of `chunk` through a 1 KiB arrival ring (it keeps objects up to 256 bytes), expects
 * what git index-pack made of it, and returns the resolving events: what the ring resolved, then the walk.
 */
async function expectIdxLikeGit(
  pack: Uint8Array,
  oracle: GitIndexOfPack,
  chunk = 65536,
  options: PackIngesterOptions = {},
): Promise<PackProgress[]> {
  const events: PackProgress[] = [];
  const result = await ingest(pack, chunk, {
    ...options,
    limits: { arrivalCacheBytes: 1024 },
    onProgress: (p) => events.push(p),
  });
  expectSameAsGit(result, oracle);
  return events.filter((e) => e.phase === 'resolving');
}

describe('DeltaResolver: delta trees, as git index-pack resolves them', () => {
  let small: SampleRepo;
  beforeAll(() => {
    small = makeSmallRepo();
  });
  afterAll(() => small.cleanup());

  it("resolves git's own packs of ofs-deltas and of ref-deltas alike with every cache setting", async () => {
    const refs = small.git(['for-each-ref', '--format=%(objectname)']);
    const packs = [
      small.pack(),
      new Uint8Array(small.git(['pack-objects', '--revs', '--stdout', '-q'], { input: refs })),
    ];
    expect(entryTypes(packs[0])).toContain(6);
    expect(entryTypes(packs[1])).toContain(7);
    for (const pack of packs) {
      const oracle = gitIndexPack(small.git, small.root, pack, 'git');
      for (const options of CACHES) expectSameAsGit(await ingest(pack, 97, options), oracle);
    }
  });

  it('walks a branching tree of ofs-deltas, and ref-deltas within it, whatever the caches drop', async () => {
    // v0 ← v1 ← v2 ← v3 ← v4 (a chain), v0 ← w1 ← w2 (a branch), v2 ← x1 (a ref-delta in the chain),
    // x1 ← x2 (an ofs-delta on a ref-delta), a second tree of deltas on another base, after the first.
    const v0 = text(60, 'v');
    const v1 = edit(v0, 30, 'one ');
    const v2 = edit(v1, 100, 'two ');
    const v3 = edit(v2, 200, 'three ');
    const v4 = edit(v3, 10, 'four ');
    const w1 = edit(v0, 50, 'branch ');
    const w2 = edit(w1, 400, 'leaf ');
    const x1 = edit(v2, 300, 'by id ');
    const x2 = edit(x1, 5, 'below ');
    const u0 = text(30, 'u');
    const u1 = edit(u0, 20, 'other ');
    const entries: PackEntry[] = [
      blob(v0), // 0
      { ofsDelta: 0, delta: deltaBetween(v0, v1) }, // 1
      { ofsDelta: 1, delta: deltaBetween(v1, v2) }, // 2
      { ofsDelta: 0, delta: deltaBetween(v0, w1) }, // 3
      { ofsDelta: 2, delta: deltaBetween(v2, v3) }, // 4
      { refDelta: objectId('blob', v2), delta: deltaBetween(v2, x1) }, // 5
      { ofsDelta: 3, delta: deltaBetween(w1, w2) }, // 6
      { ofsDelta: 4, delta: deltaBetween(v3, v4) }, // 7
      { ofsDelta: 5, delta: deltaBetween(x1, x2) }, // 8
      blob(u0), // 9
      { ofsDelta: 9, delta: deltaBetween(u0, u1) }, // 10
    ];
    const pack = buildPack(entries);
    const oracle = gitIndexPack(small.git, small.root, pack, 'tree');
    expect(oracle.objects.map((o) => o.oid)).toEqual(
      [v0, v1, v2, w1, v3, x1, w2, v4, x2, u0, u1].map((d) => objectId('blob', d)),
    );
    for (const options of CACHES) {
      for (const chunk of [13, 65536]) expectSameAsGit(await ingest(pack, chunk, options), oracle);
    }
  });

  it('resolves only ofs-deltas whose base the ring lost, after the last byte, from their chain', async () => {
    // A 1 KiB ring keeps objects up to 256 bytes: the 900-byte base is never kept, its small children are.
    const big = text(40, 'big').subarray(0, 900);
    const a1 = big.subarray(0, 200);
    const a2 = edit(a1, 10, 'x');
    const a3 = edit(a2, 20, 'y');
    const s0 = text(5, 's');
    const s1 = edit(s0, 4, 'kept ');
    const entries: PackEntry[] = [
      blob(big),
      { ofsDelta: 0, delta: deltaBetween(big, a1) },
      { ofsDelta: 1, delta: deltaBetween(a1, a2) },
      { ofsDelta: 2, delta: deltaBetween(a2, a3) },
      blob(s0),
      { ofsDelta: 4, delta: deltaBetween(s0, s1) },
    ];
    const pack = buildPack(entries);
    const oracle = gitIndexPack(small.git, small.root, pack, 'ring');
    // Only s1 was resolved on arrival; a1, a2, a3 after the last byte.
    expect(await expectIdxLikeGit(pack, oracle, 50)).toEqual([
      { phase: 'resolving', resolved: 1, total: 4 },
      { phase: 'resolving', resolved: 2, total: 4 },
      { phase: 'resolving', resolved: 3, total: 4 },
      { phase: 'resolving', resolved: 4, total: 4 },
    ]);
  });

  it('resolves ref-deltas sent before their base, on a delta, and twice on one base', async () => {
    const b0 = text(20, 'b');
    const b1 = edit(b0, 7, 'first ');
    const b2 = edit(b1, 70, 'second ');
    const b3 = edit(b0, 90, 'third ');
    const entries: PackEntry[] = [
      { refDelta: objectId('blob', b1), delta: deltaBetween(b1, b2) }, // before its base, itself a delta
      { refDelta: objectId('blob', b0), delta: deltaBetween(b0, b3) }, // before its base
      blob(b0),
      { ofsDelta: 2, delta: deltaBetween(b0, b1) },
    ];
    const pack = buildPack(entries);
    const oracle = gitIndexPack(small.git, small.root, pack, 'refs');
    for (const options of CACHES) expectSameAsGit(await ingest(pack, 11, options), oracle);
  });

  it('reports resolving from what arrival resolved, every total/256 deltas, up to the total', async () => {
    const base = text(10, 'p');
    // 600 children of one base: step 2.
    const entries: PackEntry[] = [blob(base)];
    const results: Uint8Array[] = [];
    for (let k = 0; k < 601; k++) {
      const r = edit(base, k % base.length, `${k} `);
      results.push(r);
      entries.push({ ofsDelta: 0, delta: deltaBetween(base, r) });
    }
    const pack = buildPack(entries);
    const events: PackProgress[] = [];
    const result = await ingest(pack, 65536, {
      limits: { arrivalCacheBytes: 0 },
      onProgress: (p) => events.push(p),
    });
    expect(result.objects.slice(1).map((o) => o.oid)).toEqual(results.map((r) => objectId('blob', r)));
    const resolving = events.filter((e) => e.phase === 'resolving').map((e) => e.resolved);
    expect(resolving).toEqual([...Array.from({ length: 301 }, (_, k) => k * 2), 601]);
    expect(events.filter((e) => e.phase === 'resolving').every((e) => e.total === 601)).toBe(true);
    // The last of the 601 is past the last step: reported at the end, to no one without a listener.
    const quiet = await ingest(pack, 65536, { limits: { arrivalCacheBytes: 0 } });
    expect(quiet.objects.map((o) => o.oid)).toEqual(result.objects.map((o) => o.oid));
    // All on arrival: one event, at the total. No delta: none.
    const onArrival: PackProgress[] = [];
    await ingest(pack, 65536, { onProgress: (p) => onArrival.push(p) });
    expect(onArrival.filter((e) => e.phase === 'resolving')).toEqual([
      { phase: 'resolving', resolved: 601, total: 601 },
    ]);
    const none: PackProgress[] = [];
    await ingest(buildPack([blob(base)]), 65536, { onProgress: (p) => none.push(p) });
    expect(none.filter((e) => e.phase === 'resolving')).toEqual([]);
  });

  it('moves a base the ring is about to overwrite ahead of the result it makes (arrival, 1 KiB ring)', async () => {
    // A 1 KiB ring keeps objects up to 256 bytes. The base is placed, 800 bytes of other blobs after it, then
    // its delta arrives: the base is in the half overwritten next, and the result (which starts with an
    // insert, so it writes before it reads) would land on it. Twice: the base at the ring's start (the result
    // would overwrite it in place), and 100 bytes in (moved to the start, over part of where it was).
    const filler = (k: number, size: number) => blob(text(20, `filler ${k}`).subarray(0, size));
    for (const first of [[], [filler(9, 100)]]) {
      const base = text(20, 'ring base').subarray(0, 200);
      const child = edit(base, 0, 'new ');
      const fillers = Array.from({ length: first.length ? 3 : 4 }, (_, k) => filler(k, 200));
      const entries: PackEntry[] = [...first, blob(base), ...fillers];
      entries.push({ ofsDelta: first.length, delta: deltaBetween(base, child) });
      const pack = buildPack(entries);
      const oracle = gitIndexPack(small.git, small.root, pack, 'moved');
      expect(oracle.objects.at(-1)?.oid).toBe(objectId('blob', child));
      // Resolved on arrival, from the ring.
      expect(await expectIdxLikeGit(pack, oracle)).toEqual([{ phase: 'resolving', resolved: 1, total: 1 }]);
    }
  });

  it('resolves on arrival a result larger than the ring keeps, and one just small enough to be kept', async () => {
    // 1 KiB ring: objects of 256 bytes at most. One base, a 70,000-byte child (past the ring and past the
    // 64 KiB scratch first made), a 300-byte child (the scratch again), and a 256-byte child with a child of
    // its own, resolved on arrival only if the 256 bytes were kept.
    const base = text(10, 'scratch base').subarray(0, 100);
    const copies = (n: number) => Array.from({ length: n }, () => ({ copy: [0, 100] as [number, number] }));
    const huge = makeDelta(100, copies(700));
    const mid = makeDelta(100, [...copies(3)]);
    const edge = makeDelta(100, [...copies(2), { insert: 'x'.repeat(56) }]);
    const edgeResult = new Uint8Array(256);
    edgeResult.set(base);
    edgeResult.set(base, 100);
    edgeResult.set(enc.encode('x'.repeat(56)), 200);
    const grand = edit(edgeResult, 3, 'below ');
    const entries: PackEntry[] = [
      blob(base),
      { ofsDelta: 0, delta: huge },
      { ofsDelta: 0, delta: mid },
      { ofsDelta: 0, delta: edge },
      { ofsDelta: 3, delta: deltaBetween(edgeResult, grand) },
      { ofsDelta: 1, delta: makeDelta(70000, [{ copy: [50, 300] }]) },
    ];
    const pack = buildPack(entries);
    const oracle = gitIndexPack(small.git, small.root, pack, 'scratch');
    expect(oracle.sizes.get(oracle.objects[1].oid)).toBe(70000);
    expect(oracle.objects[4].oid).toBe(objectId('blob', grand));
    // A 1-byte cache also drops the base while the 70,000 bytes' child is walked: the base's other children,
    // resolved on arrival, are then skipped, and the walk leaves the base holding nothing.
    for (const [chunk, options] of [
      [97, {}],
      [65536, {}],
      [65536, { deltaBaseCacheLimit: 1 }],
    ] as const) {
      // All but the child of the 70,000 bytes (never kept) resolved on arrival; it after the last byte, through
      // the 70,000 bytes (known already, so counted once).
      expect(await expectIdxLikeGit(pack, oracle, chunk, options)).toEqual([
        { phase: 'resolving', resolved: 4, total: 5 },
        { phase: 'resolving', resolved: 5, total: 5 },
      ]);
    }
    // A whole object of exactly 256 bytes is kept too: its delta resolves on arrival.
    const whole = text(30, 'whole').subarray(0, 256);
    const kept = buildPack([
      blob(whole),
      { ofsDelta: 0, delta: deltaBetween(whole, edit(whole, 9, 'kept ')) },
    ]);
    const keptOracle = gitIndexPack(small.git, small.root, kept, 'kept');
    expect(await expectIdxLikeGit(kept, keptOracle)).toEqual([{ phase: 'resolving', resolved: 1, total: 1 }]);
  });

  it('resolves after the last byte a delta past twice the first scratch, which grows to its size', async () => {
    // The walk inflates deltas into a 64 KiB scratch that doubles, or grows to the delta when that is more: a
    // delta of some 141,000 bytes (140,000 inserted) is past both. On arrival the parser's scratch holds it.
    const base = text(10, 'small base');
    const inserted = text(7000, 'inserted').subarray(0, 140_000);
    const grown = new Uint8Array(base.length + inserted.length);
    grown.set(base);
    grown.set(inserted, base.length);
    const delta = deltaBetween(base, grown);
    expect(delta.length).toBeGreaterThan(2 * 64 * 1024);
    const pack = buildPack([blob(base), { ofsDelta: 0, delta }]);
    const oracle = gitIndexPack(small.git, small.root, pack, 'big-delta');
    expect(oracle.sizes.get(objectId('blob', grown))).toBe(grown.length);
    for (const options of CACHES) expectSameAsGit(await ingest(pack, 65536, options), oracle);
  });

  it('rebuilds a dropped ref-delta base through the object its id named', async () => {
    // r0 ← x (a ref-delta) ← c1 ← d, and x ← c2: with a 1-byte cache, x's bytes are dropped while c1's
    // subtree is walked, and rebuilt for c2 from r0, the base x named by id.
    const r0 = text(15, 'r0');
    const x = edit(r0, 9, 'by id ');
    const c1 = edit(x, 40, 'c1 ');
    const d = edit(c1, 60, 'd ');
    const c2 = edit(x, 80, 'c2 ');
    const entries: PackEntry[] = [
      { refDelta: objectId('blob', r0), delta: deltaBetween(r0, x) },
      blob(r0),
      { ofsDelta: 0, delta: deltaBetween(x, c1) },
      { ofsDelta: 2, delta: deltaBetween(c1, d) },
      { ofsDelta: 0, delta: deltaBetween(x, c2) },
    ];
    const pack = buildPack(entries);
    const oracle = gitIndexPack(small.git, small.root, pack, 'rebuild');
    for (const options of CACHES) expectSameAsGit(await ingest(pack, 65536, options), oracle);
  });

  it('charges a delta resolved on arrival to the inflate budget once: the walk after the last byte skips it', async () => {
    // 1 KiB ring (objects up to 256 bytes). r1 and its child r1a resolve on arrival; 1,000 bytes of other
    // blobs then push r out of the ring, so r's second child r2 waits for the walk, which must apply neither
    // r1 nor r1a again: the pack passes a budget of exactly what it inflates to, as with the ring off.
    const r = text(20, 'root').subarray(0, 200);
    const r1 = edit(r, 3, 'early ');
    const r1a = edit(r1, 7, 'below ');
    const r2 = edit(r, 9, 'late ');
    const fillers = Array.from({ length: 5 }, (_, k) => blob(text(20, `push ${k}`).subarray(0, 200)));
    const entries: PackEntry[] = [
      blob(r),
      { ofsDelta: 0, delta: deltaBetween(r, r1) },
      { ofsDelta: 1, delta: deltaBetween(r1, r1a) },
      ...fillers,
      { ofsDelta: 0, delta: deltaBetween(r, r2) },
    ];
    const pack = buildPack(entries);
    const oracle = gitIndexPack(small.git, small.root, pack, 'charged');
    // What the pack inflates to, each entry and delta result once.
    let inflated = 0;
    for (const e of entries) inflated += 'data' in e ? e.data.length : e.delta.length;
    for (const result of [r1, r1a, r2]) inflated += result.length;
    expect(pack.length).toBeLessThan(inflated);
    for (const arrivalCacheBytes of [0, 1024]) {
      const limits = { arrivalCacheBytes, inflateRatio: 1, inflateFloor: inflated };
      const events: PackProgress[] = [];
      const result = await ingest(pack, 65536, { limits, onProgress: (p) => events.push(p) });
      expectSameAsGit(result, oracle);
      // With the ring, r1 and r1a resolved on arrival, r2 after the last byte.
      expect(events.filter((e) => e.phase === 'resolving').map((e) => e.resolved)).toEqual(
        arrivalCacheBytes ? [2, 3] : [0, 1, 2, 3],
      );
      const over = await errorOf(pack, { limits: { ...limits, inflateFloor: inflated - 1 } });
      expect(over.code).toBe('PACK_INFLATE_BUDGET');
    }
  });

  it('drops a base past deltaBaseCacheLimit and charges its rebuilding to the inflate budget', async () => {
    // v0 ← v1 ← v2 ← v3 and v1 ← x2, all after the last byte. With a 1-byte cache, v1 is dropped while v2's
    // subtree is walked and rebuilt from v0 for x2: that work counts, so the budget of what the pack inflates
    // to, which it passes with git's 96 MiB cache, refuses it; one rebuild of v1 more passes.
    const v0 = text(20, 'cached');
    const v1 = edit(v0, 5, 'one ');
    const v2 = edit(v1, 50, 'two ');
    const v3 = edit(v2, 90, 'three ');
    const x2 = edit(v1, 120, 'other ');
    const entries: PackEntry[] = [
      blob(v0),
      { ofsDelta: 0, delta: deltaBetween(v0, v1) },
      { ofsDelta: 1, delta: deltaBetween(v1, v2) },
      { ofsDelta: 1, delta: deltaBetween(v1, x2) },
      { ofsDelta: 2, delta: deltaBetween(v2, v3) },
    ];
    const pack = buildPack(entries);
    const oracle = gitIndexPack(small.git, small.root, pack, 'rebuilt');
    let inflated = 0;
    for (const e of entries) inflated += 'data' in e ? e.data.length : e.delta.length;
    for (const result of [v1, v2, x2, v3]) inflated += result.length;
    expect(pack.length).toBeLessThan(inflated);
    const limits = { arrivalCacheBytes: 0, inflateRatio: 1, inflateFloor: inflated };
    expectSameAsGit(await ingest(pack, 65536, { limits }), oracle);
    const dropping = { limits, deltaBaseCacheLimit: 1 };
    expect((await errorOf(pack, dropping)).code).toBe('PACK_INFLATE_BUDGET');
    const rebuilt = { ...dropping, limits: { ...limits, inflateFloor: inflated + v1.length } };
    expectSameAsGit(await ingest(pack, 65536, rebuilt), oracle);
    // v1 and v2 are held together at most: a cache of exactly that drops nothing, as git's prune_base_data
    // keeps what is not over the limit; a byte less drops v1.
    const held = v1.length + v2.length;
    expectSameAsGit(await ingest(pack, 65536, { limits, deltaBaseCacheLimit: held }), oracle);
    const under = await errorOf(pack, { limits, deltaBaseCacheLimit: held - 1 });
    expect(under.code).toBe('PACK_INFLATE_BUDGET');
  });

  it('drops the oldest bases only until what it holds is within the cache limit', async () => {
    // r0 ← a ← b ← c ← c1, b ← b2, a ← a2, all after the last byte. When c is pushed, a, b and c are held;
    // a cache of b and c drops a alone (rebuilt for a2, which the budget charges), and b stays for b2.
    const r0 = text(20, 'oldest');
    const a = edit(r0, 5, 'a ');
    const b = edit(a, 40, 'b ');
    const c = edit(b, 80, 'c ');
    const results = [a, b, c, edit(c, 120, 'c1 '), edit(b, 160, 'b2 '), edit(a, 200, 'a2 ')];
    const entries: PackEntry[] = [
      blob(r0),
      { ofsDelta: 0, delta: deltaBetween(r0, a) },
      { ofsDelta: 1, delta: deltaBetween(a, b) },
      { ofsDelta: 2, delta: deltaBetween(b, c) },
      { ofsDelta: 3, delta: deltaBetween(c, results[3]) },
      { ofsDelta: 2, delta: deltaBetween(b, results[4]) },
      { ofsDelta: 1, delta: deltaBetween(a, results[5]) },
    ];
    const pack = buildPack(entries);
    const oracle = gitIndexPack(small.git, small.root, pack, 'oldest');
    let inflated = 0;
    for (const e of entries) inflated += 'data' in e ? e.data.length : e.delta.length;
    for (const result of results) inflated += result.length;
    const limits = { arrivalCacheBytes: 0, inflateRatio: 1, inflateFloor: inflated + a.length };
    const options = { limits, deltaBaseCacheLimit: b.length + c.length };
    expectSameAsGit(await ingest(pack, 65536, options), oracle);
    const over = await errorOf(pack, {
      ...options,
      limits: { ...limits, inflateFloor: inflated + a.length - 1 },
    });
    expect(over.code).toBe('PACK_INFLATE_BUDGET');
  });

  it('counts a base popped after its skipped children as no longer held', async () => {
    // 1 KiB ring (objects up to 256 bytes). r0 ← r, whose children are x, w and v. On arrival: r, x, y (294
    // bytes, not kept), z and w (416 bytes, not kept) resolve; y' and w' cannot (their bases were not kept),
    // nor v (fillers pushed r out). The walk skips z, so x is popped holding its bytes, after its children:
    // with a cache of exactly r and w, w is pushed without dropping r, and v needs no rebuild of r (which
    // the budget would charge).
    const r0 = text(20, 'ring root').subarray(0, 100);
    const r = edit(r0, 5, 'r ');
    const x = edit(r, 10, 'x ');
    const y = edit(x, 20, 'y '.repeat(95));
    const z = edit(x, 30, 'z ');
    const w = edit(r, 40, 'w '.repeat(157));
    const v = edit(r, 50, 'v ');
    const below = (base: Uint8Array, tag: string) => edit(base, 60, tag);
    const results = [r, x, y, below(y, "y' "), z, w, below(w, "w' "), v];
    // y and w are past what the ring keeps; r, x and y fit in a cache of r and w.
    expect([x.length, y.length, w.length]).toEqual([104, 294, 416]);
    const fillers = Array.from({ length: 5 }, (_, k) => blob(text(20, `push ${k}`).subarray(0, 200)));
    const entries: PackEntry[] = [
      blob(r0),
      { ofsDelta: 0, delta: deltaBetween(r0, r) },
      { ofsDelta: 1, delta: deltaBetween(r, x) },
      { ofsDelta: 2, delta: deltaBetween(x, y) },
      { ofsDelta: 3, delta: deltaBetween(y, results[3]) },
      { ofsDelta: 2, delta: deltaBetween(x, z) },
      { ofsDelta: 1, delta: deltaBetween(r, w) },
      { ofsDelta: 6, delta: deltaBetween(w, results[6]) },
      ...fillers,
      { ofsDelta: 1, delta: deltaBetween(r, v) },
    ];
    const pack = buildPack(entries);
    const oracle = gitIndexPack(small.git, small.root, pack, 'skipped');
    // Each entry inflated once, the five results made on arrival, and every result but z's again in the walk.
    let inflated = 0;
    for (const e of entries) inflated += 'data' in e ? e.data.length : e.delta.length;
    for (const result of [r, x, y, z, w]) inflated += result.length;
    for (const result of results) if (result !== z) inflated += result.length;
    const limits = { arrivalCacheBytes: 1024, inflateRatio: 1, inflateFloor: inflated };
    const events: PackProgress[] = [];
    const options = { limits, deltaBaseCacheLimit: r.length + w.length };
    expectSameAsGit(await ingest(pack, 65536, { ...options, onProgress: (p) => events.push(p) }), oracle);
    expect(events.filter((e) => e.phase === 'resolving').map((e) => e.resolved)).toEqual([5, 6, 7, 8]);
    const over = await errorOf(pack, { ...options, limits: { ...limits, inflateFloor: inflated - 1 } });
    expect(over.code).toBe('PACK_INFLATE_BUDGET');
  });

  it('lets go of a base when its last child is taken, before walking that child', async () => {
    // r0 ← p, whose children are q (← c ← c1) and p2, all after the last byte; the cache holds p and c. q
    // is let go when c, its only child, is taken, so pushing c drops nothing, and p2 needs no rebuild of p.
    const r0 = text(20, 'let go');
    const p = edit(r0, 5, 'p ');
    const q = edit(p, 30, 'q ');
    const c = edit(q, 60, 'c longer ');
    const results = [p, q, c, edit(c, 90, 'c1 '), edit(p, 120, 'p2 ')];
    const entries: PackEntry[] = [
      blob(r0),
      { ofsDelta: 0, delta: deltaBetween(r0, p) },
      { ofsDelta: 1, delta: deltaBetween(p, q) },
      { ofsDelta: 2, delta: deltaBetween(q, c) },
      { ofsDelta: 3, delta: deltaBetween(c, results[3]) },
      { ofsDelta: 1, delta: deltaBetween(p, results[4]) },
    ];
    const pack = buildPack(entries);
    const oracle = gitIndexPack(small.git, small.root, pack, 'let-go');
    let inflated = 0;
    for (const e of entries) inflated += 'data' in e ? e.data.length : e.delta.length;
    for (const result of results) inflated += result.length;
    const limits = { arrivalCacheBytes: 0, inflateRatio: 1, inflateFloor: inflated };
    const options = { limits, deltaBaseCacheLimit: p.length + c.length };
    expectSameAsGit(await ingest(pack, 65536, options), oracle);
    const over = await errorOf(pack, { ...options, limits: { ...limits, inflateFloor: inflated - 1 } });
    expect(over.code).toBe('PACK_INFLATE_BUDGET');
  });

  it('keeps a rebuilt base for its next children, and counts it held', async () => {
    // r0 ← a, whose children are b (← b1), a2, a3 (← a3c) and a4, all after the last byte; the cache holds
    // b exactly. Pushing b drops a; a2 rebuilds it and keeps it, so a3 needs no rebuild, but pushing a3 (held
    // with a, over the cache) drops it again, and a4 rebuilds it: two rebuilds, each charged to the budget.
    const r0 = text(20, 'rebuilt');
    const a = edit(r0, 5, 'a ');
    const b = edit(a, 30, 'b ');
    const a3 = edit(a, 90, 'a3 long ');
    const results = [
      a,
      b,
      edit(b, 60, 'b1 '),
      edit(a, 70, 'a2 '),
      a3,
      edit(a3, 110, 'a3c '),
      edit(a, 130, 'a4 '),
    ];
    const entries: PackEntry[] = [
      blob(r0),
      { ofsDelta: 0, delta: deltaBetween(r0, a) },
      { ofsDelta: 1, delta: deltaBetween(a, b) },
      { ofsDelta: 2, delta: deltaBetween(b, results[2]) },
      { ofsDelta: 1, delta: deltaBetween(a, results[3]) },
      { ofsDelta: 1, delta: deltaBetween(a, a3) },
      { ofsDelta: 5, delta: deltaBetween(a3, results[5]) },
      { ofsDelta: 1, delta: deltaBetween(a, results[6]) },
    ];
    const pack = buildPack(entries);
    const oracle = gitIndexPack(small.git, small.root, pack, 'kept');
    let inflated = 0;
    for (const e of entries) inflated += 'data' in e ? e.data.length : e.delta.length;
    for (const result of results) inflated += result.length;
    const limits = { arrivalCacheBytes: 0, inflateRatio: 1, inflateFloor: inflated + 2 * a.length };
    const options = { limits, deltaBaseCacheLimit: b.length };
    expectSameAsGit(await ingest(pack, 65536, options), oracle);
    const over = await errorOf(pack, {
      ...options,
      limits: { ...limits, inflateFloor: limits.inflateFloor - 1 },
    });
    expect(over.code).toBe('PACK_INFLATE_BUDGET');
  });

  it('stops resolving at the next delta once aborted', async () => {
    const base = text(10, 'q');
    const entries: PackEntry[] = [blob(base)];
    for (let k = 0; k < 40; k++) entries.push({ ofsDelta: 0, delta: deltaBetween(base, edit(base, k, 'z')) });
    const controller = new AbortController();
    const seen: number[] = [];
    const failure = await failureOf(buildPack(entries), 65536, {
      signal: controller.signal,
      limits: { arrivalCacheBytes: 0 },
      onProgress: (p) => {
        if (p.phase !== 'resolving') return;
        seen.push(p.resolved);
        if (p.resolved === 3) controller.abort();
      },
    });
    expect(failure.code).toBe('ABORTED');
    expect(seen).toEqual([0, 1, 2, 3]);
  });
});

describe('DeltaResolver: deltas that do not resolve', () => {
  const base = enc.encode('0123456789abcdef'.repeat(4));

  it('names the offset of a delta that does not apply, on arrival and after the last byte', async () => {
    const bad = makeDelta(base.length, [{ copy: [60, 10] }]);
    const { pack, offsets } = buildPackAt([blob(base), blob(enc.encode('x\n')), { ofsDelta: 0, delta: bad }]);
    for (const options of CACHES) {
      const e = await errorOf(pack, options);
      expect(e.code).toBe('PACK_DELTA_INVALID');
      expect(e.message).toMatch(
        new RegExp(`^The delta at offset ${offsets[2]} does not apply to its base\\. \\S`),
      );
    }
  });

  it('refuses a delta result past maxObjectSize, and counts one at it against the inflate budget', async () => {
    const zeros = new Uint8Array(1000);
    const whole = makeDelta(zeros.length, [{ copy: [0, 1000] }]);
    const pack = buildPack([blob(zeros), { ofsDelta: 0, delta: whole }]);
    for (const options of CACHES) {
      const limits = { ...options.limits, maxObjectSize: 999 };
      // The base itself is over 999 bytes: the limit is on the delta only when the base passes it.
      const tooLarge = await errorOf(
        buildPack([
          blob(zeros.subarray(0, 500)),
          { ofsDelta: 0, delta: makeDelta(500, [{ copy: [0, 500] }, { copy: [0, 500] }]) },
        ]),
        { ...options, limits },
      );
      expect(tooLarge.code).toBe('PACK_OBJECT_TOO_LARGE');
      expect(tooLarge.limit).toBe('maxObjectSize');
      expect(tooLarge.message).toMatch(/^The delta at offset \d+ does not apply to its base\. /);
      // At the limit, the result is built and counted: 1000 received + 1000 built passes a budget of 1500.
      const budget = await errorOf(pack, {
        ...options,
        limits: { ...options.limits, maxObjectSize: 1000, inflateRatio: 1, inflateFloor: 1500 },
      });
      expect(budget.code).toBe('PACK_INFLATE_BUDGET');
      expect(budget.limit).toBe('inflateRatio');
      expect(
        (
          await ingest(pack, 65536, {
            ...options,
            limits: { ...options.limits, inflateRatio: 1, inflateFloor: 2100 },
          })
        ).objects,
      ).toHaveLength(2);
    }
    // A result declared far past the limit is refused for its size, never counted against the budget.
    const huge = makeDelta(zeros.length, [{ copy: [0, 1000] }], { resultSize: 2 ** 40 });
    const e = await errorOf(buildPack([blob(zeros), { ofsDelta: 0, delta: huge }]));
    expect(e.code).toBe('PACK_OBJECT_TOO_LARGE');
  });

  it('names the first ref-delta left unresolved, past those resolved', async () => {
    const missing = objectId('blob', enc.encode('never sent\n'));
    const { pack, offsets } = buildPackAt([
      blob(base),
      { refDelta: objectId('blob', base), delta: makeDelta(base.length, [{ copy: [0, 9] }]) },
      { refDelta: missing, delta: makeDelta(11, [{ copy: [0, 5] }]) },
    ]);
    for (const options of CACHES) {
      const e = await errorOf(pack, options);
      expect(e.message).toMatch(
        new RegExp(
          `^The delta at offset ${offsets[2]} needs object ${missing}, which is not in the pack\\. `,
        ),
      );
    }
  });

  it('names the delta and the object a missing base is, and where it was looked for', async () => {
    const missing = objectId('blob', enc.encode('never sent\n'));
    const alsoMissing = objectId('blob', enc.encode('not sent either\n'));
    const { pack, offsets } = buildPackAt([
      blob(base),
      { ofsDelta: 0, delta: makeDelta(base.length, [{ copy: [0, 5] }]) },
      { refDelta: alsoMissing, delta: makeDelta(16, [{ copy: [0, 5] }]) },
      { refDelta: missing, delta: makeDelta(11, [{ copy: [0, 5] }]) },
    ]);
    for (const options of CACHES) {
      const e = await errorOf(pack, options);
      expect(e.code).toBe('PACK_DELTA_BASE_MISSING');
      // The first unresolved in pack order.
      expect(e.message).toMatch(
        new RegExp(
          `^The delta at offset ${offsets[2]} needs object ${alsoMissing}, which is not in the pack\\. `,
        ),
      );
      const withRepo = await errorOf(pack, { ...options, externalBase: async () => null });
      expect(withRepo.message).toMatch(
        new RegExp(
          `^The delta at offset ${offsets[2]} needs object ${alsoMissing}, which is not in the pack nor in the repository\\. `,
        ),
      );
    }
  });
});

describe('DeltaResolver: a ref-delta reached from two objects of one id, refused as git refuses it', () => {
  let small: SampleRepo;
  beforeAll(() => {
    small = makeSmallRepo();
  });
  afterAll(() => small.cleanup());

  /** git index-pack's refusal of `pack`: the offset of the delta it names and the base id. */
  function gitDuplicateBase(pack: Uint8Array): { offset: number; base: string } {
    const dir = mkdtempSync(join(small.root, 'dup-'));
    writeFileSync(join(dir, 'x.pack'), pack);
    let refusal = '';
    try {
      small.git(['index-pack', '-o', join(dir, 'x.idx'), join(dir, 'x.pack')], { cwd: dir });
    } catch (e) {
      refusal = String(e);
    }
    const m = /REF_DELTA at offset (\d+) already resolved \(duplicate base ([0-9a-f]{40})\?\)/.exec(refusal);
    if (!m) throw new Error(`git did not refuse the pack as a duplicate base: ${refusal || 'accepted'}`);
    return { offset: Number(m[1]), base: m[2] };
  }

  it('refuses a base sent twice under a ref-delta, and a delta whose result is its own base', async () => {
    const twice = enc.encode('sent twice\n');
    const twiceId = objectId('blob', twice);
    const emptyId = objectId('blob', new Uint8Array(0));
    const packs = [
      buildPack([
        blob(twice),
        blob(twice),
        { refDelta: twiceId, delta: makeDelta(twice.length, [{ copy: [0, 4] }]) },
      ]),
      buildPack([
        blob(new Uint8Array(0)),
        // Sizes 0 and 0 in two bytes each (varints git reads too): the 4 bytes git asks of any delta.
        { refDelta: emptyId, delta: Uint8Array.of(0x80, 0x00, 0x80, 0x00) },
        { refDelta: emptyId, delta: makeDelta(0, [{ insert: 'x' }]) },
      ]),
    ];
    for (const [n, pack] of packs.entries()) {
      const git = gitDuplicateBase(pack);
      expect(git.base).toBe([twiceId, emptyId][n]);
      for (const options of CACHES) {
        const e = await errorOf(pack, options);
        expect(e.code).toBe('PACK_DELTA_INVALID');
        expect(e.message).toMatch(
          new RegExp(
            `^The delta at offset ${git.offset} was already resolved: two objects of the pack have its base's id, ${git.base}\\. `,
          ),
        );
      }
    }
    // The same object twice with no ref-delta on it: git index-pack accepts it (verify-pack does not), and so
    // does the ingester, with the same .idx.
    const plain = buildPack([
      blob(twice),
      blob(twice),
      { ofsDelta: 1, delta: makeDelta(twice.length, [{ copy: [0, 4] }]) },
    ]);
    const dir = mkdtempSync(join(small.root, 'plain-'));
    writeFileSync(join(dir, 'x.pack'), plain);
    small.git(['index-pack', '-o', join(dir, 'x.idx'), join(dir, 'x.pack')], { cwd: dir });
    const gitIdx = readFileSync(join(dir, 'x.idx'));
    for (const options of CACHES) {
      const result = await ingest(plain, 65536, options);
      expect(Buffer.from(result.idx).equals(gitIdx)).toBe(true);
    }
  });
});

describe('DeltaResolver: thin packs, completed as git index-pack --fix-thin does', () => {
  let small: SampleRepo;
  beforeAll(() => {
    small = makeSmallRepo();
  });
  afterAll(() => small.cleanup());

  /** The ids of git's own completion of `thin`, from the repo's objects. */
  function gitFixThin(thin: Uint8Array): string[] {
    const fixed = small
      .git(['index-pack', '--fix-thin', '--stdin'], { input: thin })
      .toString()
      .trim()
      .replace(/^pack\s+/, '');
    const idx = readFileSync(join(small.repo, '.git/objects/pack', `pack-${fixed}.idx`));
    return small
      .git(['show-index'], { input: idx })
      .toString()
      .trim()
      .split('\n')
      .map((l) => l.split(' ')[1])
      .sort();
  }

  const fromRepo =
    (asked: string[]): PackIngesterOptions['externalBase'] =>
    async (oid) => {
      asked.push(oid);
      const known = small.git(['cat-file', '--batch-check'], { input: `${oid}\n` }).toString();
      if (known.includes('missing')) return null;
      const type = small.git(['cat-file', '-t', oid]).toString().trim() as 'blob';
      return { type, data: new Uint8Array(small.git(['cat-file', type, oid])) };
    };

  it("completes git's thin pack from the repo into a pack git indexes alone, with git's objects", async () => {
    const thin = small.pack(['--thin'], 'HEAD\n^HEAD~2\n');
    expect(entryTypes(thin)).toContain(7);
    const theirs = gitFixThin(thin);
    let oracle: ReturnType<typeof gitIndexPack> | undefined;
    for (const options of THIN_CACHES) {
      const asked: string[] = [];
      const result = await ingest(thin, 64, { ...options, externalBase: fromRepo(asked) });
      expect(result.appendedBases).toBe(new Set(asked).size);
      expect(asked.length).toBe(new Set(asked).size);
      expect(result.appendedBases).toBeGreaterThan(0);
      // The completed pack is the same whatever the caches: git indexes it alone as we did.
      oracle ??= gitIndexPack(small.git, small.root, result.pack, 'fixed');
      expectSameAsGit(result, oracle);
      expect(new DataView(result.pack.buffer).getUint32(8)).toBe(result.objects.length);
      expect(result.objects.map((o) => o.oid).sort()).toEqual(theirs);
    }
  });

  it('appends a base once for all its deltas, and none for a delta whose base another delta gives', async () => {
    const outside = text(30, 'outside');
    const outsideId = small.git(['hash-object', '-w', '--stdin'], { input: outside }).toString().trim();
    expect(outsideId).toBe(objectId('blob', outside));
    const c1 = edit(outside, 12, 'one ');
    const c2 = edit(outside, 40, 'two ');
    const c3 = edit(c1, 80, 'three ');
    const also = text(3, 'elsewhere');
    const alsoId = small.git(['hash-object', '-w', '--stdin'], { input: also }).toString().trim();
    const neverId = objectId('blob', enc.encode('in no repository\n'));
    const thin = buildPack([
      blob(text(3, 'plain')),
      { refDelta: outsideId, delta: deltaBetween(outside, c1) },
      { refDelta: objectId('blob', c1), delta: deltaBetween(c1, c3) }, // on a delta of the pack
      { refDelta: outsideId, delta: deltaBetween(outside, c2) },
      { refDelta: alsoId, delta: deltaBetween(also, edit(also, 3, 'x')) },
    ]);
    const theirs = gitFixThin(thin);
    let oracle: ReturnType<typeof gitIndexPack> | undefined;
    for (const options of THIN_CACHES) {
      const asked: string[] = [];
      const result = await ingest(thin, 65536, { ...options, externalBase: fromRepo(asked) });
      expect(asked).toEqual([outsideId, alsoId]);
      expect(result.appendedBases).toBe(2);
      oracle ??= gitIndexPack(small.git, small.root, result.pack, 'fixed');
      expectSameAsGit(result, oracle);
      expect(result.objects.map((o) => o.oid).sort()).toEqual(theirs);
      // The appended bases follow the pack's own entries, whole, in the order their deltas came.
      expect(result.objects.slice(5).map((o) => [o.oid, o.type])).toEqual([
        [outsideId, 'blob'],
        [alsoId, 'blob'],
      ]);
    }
    // A base the repo lacks is not appended; the delta on it is still missing its base.
    const lacking = buildPack([
      { refDelta: neverId, delta: makeDelta(18, [{ copy: [0, 4] }]) },
      { refDelta: outsideId, delta: deltaBetween(outside, c2) },
    ]);
    const asked: string[] = [];
    const e = await errorOf(lacking, { externalBase: fromRepo(asked) });
    expect(e.code).toBe('PACK_DELTA_BASE_MISSING');
    expect(e.message).toMatch(
      new RegExp(`needs object ${neverId}, which is not in the pack nor in the repository`),
    );
    expect(asked).toEqual([neverId, outsideId]);
    // A pack the repo cannot complete at all is left as it came.
    const none = await errorOf(lacking, { externalBase: async () => null });
    expect(none.code).toBe('PACK_DELTA_BASE_MISSING');
  });

  it('leaves a ref-delta on the null id unresolved past a base appended after it, as git does', async () => {
    // Room is made for both bases up front and only one is appended: the tables reach past the last entry,
    // where the unused row reads as an object whose id is all zeros. Nothing may take it for that object.
    const outside = text(30, 'outside');
    const outsideId = small.git(['hash-object', '-w', '--stdin'], { input: outside }).toString().trim();
    const nullId = '0'.repeat(40);
    const { pack: thin, offsets } = buildPackAt([
      { refDelta: nullId, delta: makeDelta(18, [{ copy: [0, 4] }]) },
      { refDelta: outsideId, delta: deltaBetween(outside, edit(outside, 5, 'x')) },
    ]);
    let refusal = '';
    try {
      small.git(['index-pack', '--fix-thin', '--stdin'], { input: thin });
    } catch (e) {
      refusal = String(e);
    }
    expect(refusal).toMatch(/pack has 1 unresolved delta/);
    for (const options of THIN_CACHES) {
      const asked: string[] = [];
      const e = await errorOf(thin, { ...options, externalBase: fromRepo(asked) });
      expect(asked).toEqual([nullId, outsideId]);
      expect(e.code).toBe('PACK_DELTA_BASE_MISSING');
      expect(e.message).toMatch(
        new RegExp(
          `^The delta at offset ${offsets[0]} needs object ${nullId}, which is not in the pack nor in the repository\\. `,
        ),
      );
    }
  });

  it('stops completing a thin pack once aborted while a base is looked up', async () => {
    const thin = small.pack(['--thin'], 'HEAD\n^HEAD~2\n');
    const controller = new AbortController();
    const lookups: string[] = [];
    const lookup = fromRepo(lookups)!;
    const failure = await failureOf(thin, 65536, {
      signal: controller.signal,
      externalBase: async (oid) => {
        const found = await lookup(oid);
        controller.abort();
        return found;
      },
    });
    expect(failure.code).toBe('ABORTED');
    expect(lookups).toHaveLength(1);
  });
});
