/**
 * Test support, Node only: feeds a pack to a PackIngester in chunks of a given size, and compares what it made
 * with what `git index-pack` made of the same pack. Never imported by runtime code.
 */

import { expect } from 'vitest';
import { PackError } from '../errors.ts';
import { type IngestedPack, PackIngester, type PackIngesterOptions } from '../packIngester.ts';
import type { GitIndexOfPack } from './gitPacks.ts';

export async function ingest(
  pack: Uint8Array,
  chunkSize = 65536,
  options: PackIngesterOptions = {},
): Promise<IngestedPack> {
  const ingester = await PackIngester.create(options);
  for (let i = 0; i < pack.length; i += chunkSize) ingester.push(pack.subarray(i, i + chunkSize));
  return ingester.finish();
}

/** Ingests and returns the PackError thrown by push or finish (its code and message). */
export async function failureOf(pack: Uint8Array, chunkSize = 65536, options: PackIngesterOptions = {}) {
  try {
    await ingest(pack, chunkSize, options);
  } catch (e) {
    if (e instanceof PackError) return { code: e.code, message: e.message };
    throw e;
  }
  throw new Error('the pack was accepted');
}

/** The .idx byte for byte, the checksum, every object's id, type, offset and size, as git has them. */
export function expectSameAsGit(result: IngestedPack, oracle: GitIndexOfPack): void {
  expect(Buffer.from(result.idx).equals(Buffer.from(oracle.idx))).toBe(true);
  expect(result.checksum).toBe(oracle.checksum);
  expect(result.objects.map((o) => [o.oid, o.type, o.offset])).toEqual(
    oracle.objects.map((o) => [o.oid, o.type, o.offset]),
  );
  for (const o of result.objects) expect(o.size).toBe(oracle.sizes.get(o.oid));
}
