// How much of one blob another one keeps, estimated as git's rename detection does (diffcore-delta.c): both
// are cut into chunks that end at a line feed or after 64 bytes, each chunk is hashed into one of 107,927
// values, and the bytes whose chunk hash the destination shares with the source count as copied. The score
// (estimate_similarity in diffcore-rename.c) is copied bytes over the larger size, out of 60,000.

import { isBinary } from './binaryContent.ts';

/** A score of 100 % (diffcore.h MAX_SCORE). */
export const MAX_SCORE = 60_000;
/** `-M` without a number: 50 % (DEFAULT_RENAME_SCORE). */
export const DEFAULT_RENAME_SCORE = 30_000;
/** A prime between 2^16 and 2^17 the chunk hashes are reduced by (HASHBASE). */
const HASH_BASE = 107_927;
const CHUNK_MAX = 64;

/** A blob's chunk hashes, ascending, with the bytes each accounts for. */
export interface SpanCounts {
  hashes: Uint32Array;
  bytes: Uint32Array;
}

/**
 * hash_chars: chunks of a blob by hash. In text (git's binary rule) a CR before a LF is skipped; bytes after
 * the last line feed that do not fill a chunk are not counted, as in git.
 */
export function spanCounts(data: Uint8Array): SpanCounts {
  const text = !isBinary(data);
  const counts = new Map<number, number>();
  let n = 0;
  let accum1 = 0;
  let accum2 = 0;
  for (let i = 0; i < data.length; i++) {
    const c = data[i];
    if (text && c === 0x0d && i + 1 < data.length && data[i + 1] === 0x0a) continue;
    const old1 = accum1;
    accum1 = ((accum1 << 7) ^ (accum2 >>> 25)) >>> 0;
    accum2 = ((accum2 << 7) ^ (old1 >>> 25)) >>> 0;
    accum1 = (accum1 + c) >>> 0;
    if (++n < CHUNK_MAX && c !== 0x0a) continue;
    const hash = ((accum1 + Math.imul(accum2, 0x61)) >>> 0) % HASH_BASE;
    counts.set(hash, (counts.get(hash) ?? 0) + n);
    n = 0;
    accum1 = 0;
    accum2 = 0;
  }
  const hashes = Uint32Array.from(counts.keys()).sort();
  const bytes = new Uint32Array(hashes.length);
  for (let k = 0; k < hashes.length; k++) bytes[k] = counts.get(hashes[k])!;
  return { hashes, bytes };
}

/** diffcore_count_changes: bytes of `dst` found in `src` (copied) and not (added), chunk hash by hash. */
export function countChanges(src: SpanCounts, dst: SpanCounts): { copied: number; added: number } {
  let copied = 0;
  let added = 0;
  let d = 0;
  for (let s = 0; s < src.hashes.length; s++) {
    const h = src.hashes[s];
    while (d < dst.hashes.length && dst.hashes[d] < h) added += dst.bytes[d++];
    const inSrc = src.bytes[s];
    let inDst = 0;
    if (d < dst.hashes.length && dst.hashes[d] === h) inDst = dst.bytes[d++];
    if (inSrc < inDst) {
      added += inDst - inSrc;
      copied += inSrc;
    } else {
      copied += inDst;
    }
  }
  while (d < dst.hashes.length) added += dst.bytes[d++];
  return { copied, added };
}

/** One side of a similarity estimate: its mode decides whether it is a regular file. */
export interface SimilarityBlob {
  mode: string;
  content: Uint8Array;
  /** Filled in on first use, so a blob compared with many others is cut into chunks once. */
  spans?: SpanCounts;
}

export function isRegularFile(mode: string): boolean {
  return mode === '100644' || mode === '100755';
}

/**
 * estimate_similarity: 0 to MAX_SCORE. Only regular files are compared; sizes too far apart to reach
 * `minimumScore` score 0 without looking at the bytes.
 */
export function estimateSimilarity(src: SimilarityBlob, dst: SimilarityBlob, minimumScore: number): number {
  if (!isRegularFile(src.mode) || !isRegularFile(dst.mode)) return 0;
  const srcSize = src.content.length;
  const dstSize = dst.content.length;
  const maxSize = Math.max(srcSize, dstSize);
  const delta = maxSize - Math.min(srcSize, dstSize);
  if (maxSize * (MAX_SCORE - minimumScore) < delta * MAX_SCORE) return 0;
  src.spans ??= spanCounts(src.content);
  dst.spans ??= spanCounts(dst.content);
  const { copied } = countChanges(src.spans, dst.spans);
  if (dstSize === 0) return 0;
  return Math.floor((copied * MAX_SCORE) / maxSize);
}

/** The percentage git prints (`R087`, `similarity index 87%`): similarity_index in diff.c. */
export function similarityPercent(score: number): number {
  return Math.floor((score * 100) / MAX_SCORE);
}
