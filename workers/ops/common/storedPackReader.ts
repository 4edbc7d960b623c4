// Objects read out of a repo's stored packs by our own reader, for a walk that must not load
// isomorphic-git's: on its first read of a pack, isomorphic-git parses the whole .idx into a hex string, a
// Buffer view and a Map entry per object (GitPackIndex.fromIdx), tens of MB for the large fixture's 430,000
// objects, when a first checkout reads a few thousand trees (issue 23). Here the .idx is the bytes the
// repo's PackSet already holds, searched through its fan-out (store/packSet.ts, pack/packIndex.ts), and the
// .pack is read whole once, as isomorphic-git reads it, then read entry by entry (pack/packReader.ts). What
// this reader cannot answer (a loose object, a pack deleted meanwhile, an entry it cannot read) is left to
// isomorphic-git, which finds a loose object without loading any pack.

import git, { type PromiseFsClient } from 'isomorphic-git';
import { PackError } from '../../pack/errors.ts';
import type { GitObjectType } from '../../pack/objectHash.ts';
import { PackReader } from '../../pack/packReader.ts';
import { PACK_DIR, type PackSet } from '../../store/packSet.ts';
import type { PromiseFs } from '../../store/repoFs.ts';

/** An object's type and raw bytes (isomorphic-git's `format: 'content'`). */
export interface ObjectContent {
  type: GitObjectType;
  object: Uint8Array;
}

/** Where an object is read from: isomorphic-git's reader, and ours first when set. */
export interface ObjectSource {
  objectFs: PromiseFsClient;
  gitdir: string;
  cache: object;
  storedPacks?: StoredPackReader;
}

export class StoredPackReader {
  readonly #readers = new Map<string, Promise<PackReader | null>>();

  constructor(
    private readonly fs: PromiseFs,
    private readonly packSet: PackSet,
  ) {}

  /** The object from the first pack (largest first) whose index names it, or null where none does. */
  async read(oid: string): Promise<ObjectContent | null> {
    for (const { checksum } of this.packSet.packs) {
      const index = this.packSet.index(checksum);
      const offset = index?.find(oid) ?? null;
      if (!index || offset === null) continue;
      const reader = await this.#reader(checksum, (base) => index.find(base) ?? undefined);
      if (!reader) return null;
      try {
        const { type, data } = reader.read(offset);
        return { type, object: data };
      } catch (err) {
        // A ref-delta on a base in another pack, say: isomorphic-git looks in every pack.
        if (err instanceof PackError) return null;
        throw err;
      }
    }
    return null;
  }

  /** Lets go of the packs read so far: a walk that is over keeps the reader (a handle) but not them. */
  release(): void {
    this.#readers.clear();
  }

  #reader(checksum: string, offsetOf: (oid: string) => number | undefined): Promise<PackReader | null> {
    let reader = this.#readers.get(checksum);
    if (!reader) {
      // Deleted since the pack set was read (a merge): isomorphic-git lists the packs anew.
      reader = this.fs.readFile(`${PACK_DIR}/pack-${checksum}.pack`).then(
        // A view of its own: lightning-fs gives each file read a `toString` of its own, an object shape V8
        // tells apart from the packs the inflater saw so far, and the first checkout's tree reads dropped
        // the compiled inflater (docs/decisions/warm-up.md).
        (pack) => new PackReader(plainBytes(pack as Uint8Array), offsetOf),
        () => null,
      );
      this.#readers.set(checksum, reader);
    }
    return reader;
  }
}

/** Object `oid`'s type and bytes: from the stored packs by our reader when the source has one, else isomorphic-git's. */
export async function readObjectContent(source: ObjectSource, oid: string): Promise<ObjectContent> {
  const own = await source.storedPacks?.read(oid);
  if (own) return own;
  const { type, object } = await git.readObject({
    fs: source.objectFs,
    gitdir: source.gitdir,
    oid,
    format: 'content',
    cache: source.cache,
  });
  return { type: type as GitObjectType, object: object as Uint8Array };
}

/** The same bytes as a plain Uint8Array, without the properties a file system may have added to `bytes`. */
function plainBytes(bytes: Uint8Array): Uint8Array {
  return new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}
