// Times pack ingestion (receive + resolve + .idx) for each inflate/SHA-1 combination, and git index-pack on
// the same packs. Every candidate's .idx is checked against git's.
//
//   npx tsx --expose-gc bench/pack/ingest.bench.ts [runs]
//
// The packs are built once and cached under .cache/packbench/ (see benchRepo.ts).

import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { copyFileSync, readFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { createCRC32 } from 'hash-wasm';
import { crc32, crc32Bytewise } from '../../workers/pack/crc32.ts';
import { adler32, Inflater, type StreamInflater } from '../../workers/pack/inflate.ts';
import { createJsSha1, createWasmSha1, type Sha1Factory } from '../../workers/pack/objectHash.ts';
import { PackIngester } from '../../workers/pack/packIngester.ts';
import { benchPacks } from './benchRepo.ts';
import { FflateInflater, PakoInflater } from './inflaters.ts';

const root = join(import.meta.dirname, '..', '..');
const runs = Number(process.argv[2] ?? 3);
const CHUNK = 64 * 1024; // about what a sideband-demultiplexed HTTP body delivers

const nodeSha1: Sha1Factory = async () => {
  let h = createHash('sha1');
  return {
    init: () => {
      h = createHash('sha1');
    },
    update: (d) => {
      h.update(d);
    },
    digestInto: (out, offset) => {
      out.set(h.digest(), offset);
    },
  };
};

interface Candidate {
  name: string;
  sha1: Sha1Factory;
  inflater: () => StreamInflater;
}
const candidates: Candidate[] = [
  { name: 'ours inflate + hash-wasm SHA-1', sha1: createWasmSha1, inflater: () => new Inflater() },
  {
    name: 'ours inflate (no Adler-32) + hash-wasm',
    sha1: createWasmSha1,
    inflater: () => new Inflater(false),
  },
  { name: 'pako 3 low-level + hash-wasm', sha1: createWasmSha1, inflater: () => new PakoInflater() },
  {
    name: 'fflate internals (no Adler) + hash-wasm',
    sha1: createWasmSha1,
    inflater: () => new FflateInflater(),
  },
  { name: 'ours inflate + pure-TS SHA-1', sha1: createJsSha1, inflater: () => new Inflater() },
  { name: 'ours inflate + node:crypto (ref only)', sha1: nodeSha1, inflater: () => new Inflater() },
];

const gc = (globalThis as { gc?: () => void }).gc ?? (() => {});
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const fmt = (ms: number) => `${(ms / 1000).toFixed(2)} s`;

async function ingestOnce(pack: Uint8Array, c: Candidate) {
  const ingester = await PackIngester.create({ sha1: c.sha1, inflater: c.inflater });
  const t0 = performance.now();
  for (let i = 0; i < pack.length; i += CHUNK) ingester.push(pack.subarray(i, i + CHUNK));
  const t1 = performance.now();
  const result = await ingester.finish();
  const t2 = performance.now();
  return { receive: t1 - t0, total: t2 - t0, result };
}

function gitIndexPack(packPath: string, threads: number): number {
  const tmp = join(root, '.cache', 'packbench', `tmp-${threads}.pack`);
  copyFileSync(packPath, tmp);
  const t0 = performance.now();
  execFileSync('git', ['index-pack', `--threads=${threads}`, '-o', `${tmp}.idx`, tmp], { stdio: 'ignore' });
  return performance.now() - t0;
}

async function microBenchmarks(pack: Uint8Array): Promise<void> {
  const mb = pack.length / 1e6;
  const time = (fn: () => void) => {
    fn();
    const t0 = performance.now();
    for (let i = 0; i < 3; i++) fn();
    return (performance.now() - t0) / 3;
  };
  const rate = (ms: number) => `${(mb / (ms / 1000)).toFixed(0)} MB/s`;
  console.log(`\nprimitives over ${mb.toFixed(1)} MB`);
  console.log(`  crc32 slicing-by-8     ${rate(time(() => crc32(pack)))}`);
  console.log(`  crc32 byte at a time   ${rate(time(() => crc32Bytewise(pack)))}`);
  // Per-entry sized calls matter more than raw throughput: ~300 bytes is a typical entry.
  const entry = 300;
  const perEntry = (f: (s: number, e: number) => void) =>
    time(() => {
      for (let s = 0; s + entry <= pack.length; s += entry) f(s, s + entry);
    });
  console.log(`  crc32 slicing-by-8, ${entry}-byte calls   ${rate(perEntry((s, e) => crc32(pack, s, e)))}`);
  console.log(
    `  crc32 byte at a time, ${entry}-byte calls ${rate(perEntry((s, e) => crc32Bytewise(pack, s, e)))}`,
  );
  console.log(`  adler32                ${rate(time(() => adler32(1, pack, 0, pack.length)))}`);
  const [crc, wasmSha, jsSha] = await Promise.all([createCRC32(), createWasmSha1(), createJsSha1()]);
  console.log(
    `  hash-wasm crc32, ${entry}-byte calls   ${rate(perEntry((s, e) => crc.init().update(pack.subarray(s, e)).digest('binary')))}`,
  );
  const digest = new Uint8Array(20);
  for (const [name, h] of [
    ['hash-wasm', wasmSha],
    ['pure TS', jsSha],
  ] as const) {
    const ms = time(() => {
      h.init();
      h.update(pack);
      h.digestInto(digest, 0);
    });
    console.log(`  SHA-1 ${name.padEnd(17)}${rate(ms)}`);
  }
  console.log(`  SHA-1 node:crypto      ${rate(time(() => createHash('sha1').update(pack).digest()))}`);
}

async function main() {
  const { full, blobless } = benchPacks(root);
  console.log(
    `node ${process.version}, ${cpus()[0]?.model ?? '?'} x${cpus().length} (load ${loadavg()[0].toFixed(1)}), ${runs} runs, ${CHUNK / 1024} KiB chunks`,
  );
  for (const [label, path] of [
    ['blob:none pack (commits + trees)', blobless],
    ['full pack (with blobs)', full],
  ] as const) {
    const pack = new Uint8Array(readFileSync(path));
    gitIndexPack(path, 1);
    const reference = new Uint8Array(readFileSync(join(root, '.cache', 'packbench', 'tmp-1.pack.idx')));
    const probe = await ingestOnce(pack, candidates[0]);
    const objectBytes = probe.result.objects.reduce((s, o) => s + o.size, 0);
    const objects = probe.result.objects.length;
    console.log(
      `\n${label}: ${(pack.length / 1e6).toFixed(1)} MB, ${objects} objects, ${(objectBytes / 1e9).toFixed(2)} GB of object bytes hashed`,
    );
    console.log(
      `  ${'candidate'.padEnd(42)} ${'receive'.padStart(9)} ${'total'.padStart(9)}  (median of ${runs}, min)`,
    );
    for (const c of candidates) {
      const receives: number[] = [];
      const totals: number[] = [];
      let ok = true;
      for (let r = 0; r < runs; r++) {
        gc();
        const { receive, total, result } = await ingestOnce(pack, c);
        receives.push(receive);
        totals.push(total);
        ok &&= Buffer.compare(Buffer.from(result.idx), Buffer.from(reference)) === 0;
      }
      console.log(
        `  ${c.name.padEnd(42)} ${fmt(median(receives)).padStart(9)} ${fmt(median(totals)).padStart(9)}  min ${fmt(Math.min(...totals))}${ok ? '' : '  IDX DIFFERS FROM GIT'}`,
      );
    }
    for (const threads of [1, 0]) {
      const times = Array.from({ length: runs }, () => gitIndexPack(path, threads));
      const name = `git index-pack --threads=${threads === 0 ? `0 (${cpus().length})` : threads}`;
      console.log(
        `  ${name.padEnd(42)} ${''.padStart(9)} ${fmt(median(times)).padStart(9)}  min ${fmt(Math.min(...times))}`,
      );
    }
    if (path === full) await microBenchmarks(pack);
  }
}

await main();
