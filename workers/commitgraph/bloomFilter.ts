// Changed-path Bloom filters, version 1, as git 2.39 writes them into a commit-graph (bloom.c; BDAT in
// gitformat-commit-graph): per commit, every path its tree diff against the first parent reports, and
// every folder above one, hashed 7 times into 10 bits per path. A filter answers "this path may have
// changed" or "it did not", which lets a history walk skip reading the trees of most commits.

import { murmur3Seeded } from './murmur3.ts';

/** The BDAT header git 2.39 writes: hash version, hashes per path, bits per path (DEFAULT_BLOOM_FILTER_SETTINGS). */
export const BLOOM_SETTINGS = {
  hashVersion: 1,
  numHashes: 7,
  bitsPerEntry: 10,
  maxChangedPaths: 512,
} as const;

const SEED0 = 0x293ae76f;
const SEED1 = 0x7e646e2c;
const BITS_PER_WORD = 8;
const UTF8 = new TextEncoder();

/** fill_bloom_key: the bit positions of one path, before they are reduced to a filter's size. */
export function bloomKey(path: string): Uint32Array {
  const key = new Uint32Array(BLOOM_SETTINGS.numHashes);
  fillKey(path, key);
  return key;
}

// Path bytes, reused: filters for a whole history hash millions of paths.
let pathBytes = new Uint8Array(256);

function fillKey(path: string, key: Uint32Array): void {
  if (pathBytes.length < path.length * 3) pathBytes = new Uint8Array(path.length * 3);
  const { written } = UTF8.encodeInto(path, pathBytes);
  const bytes = pathBytes.subarray(0, written);
  const hash0 = murmur3Seeded(SEED0, bytes);
  const hash1 = murmur3Seeded(SEED1, bytes);
  for (let i = 0; i < key.length; i++) key[i] = (hash0 + Math.imul(i, hash1)) >>> 0;
}

/** The paths a filter holds for a commit's changed files: each file and every folder above it, once. */
export function pathsWithFolders(changed: Iterable<string>): Set<string> {
  const all = new Set<string>();
  for (const path of changed) {
    for (let p = path; p !== ''; p = p.slice(0, Math.max(0, p.lastIndexOf('/')))) {
      if (all.has(p)) break;
      all.add(p);
    }
  }
  return all;
}

/**
 * The filter of a commit whose tree diff against its first parent lists `changed` (file paths). More than
 * 512 files, or more than 512 paths with their folders, is "too large": one byte with every bit set, which
 * always answers "maybe". No change at all is one zero byte.
 */
export function bloomFilterFor(changed: readonly string[]): Uint8Array {
  if (changed.length > BLOOM_SETTINGS.maxChangedPaths) return Uint8Array.of(0xff);
  const paths = pathsWithFolders(changed);
  if (paths.size > BLOOM_SETTINGS.maxChangedPaths) return Uint8Array.of(0xff);
  const length = Math.max(1, Math.ceil((paths.size * BLOOM_SETTINGS.bitsPerEntry) / BITS_PER_WORD));
  const filter = new Uint8Array(length);
  const bits = length * BITS_PER_WORD;
  const key = new Uint32Array(BLOOM_SETTINGS.numHashes);
  for (const path of paths) {
    fillKey(path, key);
    for (const hash of key) {
      const bit = hash % bits;
      filter[Math.floor(bit / BITS_PER_WORD)] |= 1 << (bit % BITS_PER_WORD);
    }
  }
  return filter;
}

/** bloom_filter_contains: false means the path is certainly not in the filter. An empty filter knows nothing. */
export function bloomFilterContains(filter: Uint8Array, key: Uint32Array): boolean {
  const bits = filter.length * BITS_PER_WORD;
  if (bits === 0) return true;
  for (const hash of key) {
    const bit = hash % bits;
    if (!(filter[Math.floor(bit / BITS_PER_WORD)] & (1 << (bit % BITS_PER_WORD)))) return false;
  }
  return true;
}

/** The keys git checks for a path (revision.c): the path and each folder above it; all must be present. */
export function pathKeys(path: string): Uint32Array[] {
  const keys: Uint32Array[] = [];
  for (let p = path.replace(/\/+$/, ''); p !== ''; p = p.slice(0, Math.max(0, p.lastIndexOf('/')))) {
    keys.push(bloomKey(p));
  }
  return keys;
}

/** Whether `path` may differ between a commit and its first parent; false only when it certainly does not. */
export function pathMaybeChanged(filter: Uint8Array, keys: Uint32Array[]): boolean {
  for (const key of keys) if (!bloomFilterContains(filter, key)) return false;
  return true;
}
