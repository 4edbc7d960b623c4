// Which objects a repo holds: the set of its packs and their indexes, read once from objects/pack/*.idx and
// then kept in step by whoever adds or deletes a pack (lazy blob fetches, pack maintenance). Answers "is this
// object here?" by binary search in each .idx (gitformat-pack: the fan-out narrows it to one first byte), so
// it keeps no per-object state beyond the index bytes themselves.

import { SHA1_HEX } from '../model/objectId.ts';
import { oidFromHex } from '../pack/objectHash.ts';
import { type PackIndex, parsePackIndexV2 } from '../pack/packIndex.ts';
import { storageError } from './errors.ts';
import { GITDIR, type PromiseFs, type RepoFileSystems } from './repoFs.ts';

export const PACK_DIR = `${GITDIR}/objects/pack`;

const PACK_INDEX_NAME = new RegExp(`^pack-(${SHA1_HEX})\\.idx$`);

export interface PackInfo {
  /** Hex SHA-1 of the pack: the files are `pack-<checksum>.pack|.idx|.promisor`. */
  checksum: string;
  /** Whether a `.promisor` file marks it as fetched from the promisor remote (partial-clone). */
  promisor: boolean;
  objectCount: number;
}

interface Entry {
  info: PackInfo;
  index: PackIndex;
}

export class PackSet {
  readonly #entries = new Map<string, Entry>();
  #packs: readonly PackInfo[] = [];

  /** Every pack, largest first: most lookups of an old object end in the clone's pack. */
  get packs(): readonly PackInfo[] {
    return this.#packs;
  }

  has(oid: string): boolean {
    return this.#hasBytes(oidBytes(oid));
  }

  /** The ids of `oids` that no pack holds, each once, in first-seen order. */
  missing(oids: Iterable<string>): string[] {
    const out: string[] = [];
    const seen = new Set<string>();
    for (const raw of oids) {
      const oid = raw.toLowerCase();
      if (seen.has(oid)) continue;
      seen.add(oid);
      if (!this.#hasBytes(oidBytes(oid))) out.push(oid);
    }
    return out;
  }

  /** The parsed index of one pack, for callers that walk a pack's objects (maintenance). */
  index(checksum: string): PackIndex | undefined {
    return this.#entries.get(checksum)?.index;
  }

  /**
   * Records a pack that is now on disk (its `.idx` written). The index is trusted: it was written by us
   * from a pack whose checksum and object hashes were verified, so its own checksum is not re-hashed.
   */
  add(checksum: string, idx: Uint8Array, promisor: boolean): void {
    const index = parsePackIndexV2(idx, { verifyChecksum: false });
    if (index.packChecksum !== checksum) {
      throw new Error(`The index given for pack ${checksum} describes pack ${index.packChecksum}`);
    }
    this.#entries.set(checksum, { info: { checksum, promisor, objectCount: index.count }, index });
    this.#refresh();
  }

  /** Forgets a pack whose files are being deleted. */
  remove(checksum: string): void {
    if (this.#entries.delete(checksum)) this.#refresh();
  }

  #hasBytes(key: Uint8Array): boolean {
    for (const entry of this.#entries.values()) if (entry.index.has(key)) return true;
    return false;
  }

  #refresh(): void {
    const sorted = [...this.#entries.values()].sort((a, b) => b.info.objectCount - a.info.objectCount);
    this.#entries.clear();
    for (const entry of sorted) this.#entries.set(entry.info.checksum, entry);
    this.#packs = Object.freeze(sorted.map((e) => e.info));
  }
}

function oidBytes(oid: string): Uint8Array {
  try {
    return oidFromHex(oid);
  } catch {
    throw new TypeError(`${JSON.stringify(oid)} is not a full hexadecimal SHA-1 object id`);
  }
}

/**
 * Each repo's pack set, read from disk on first use and then shared: concurrent callers get the same
 * instance, so a pack added by one is seen by all. One per engine.
 */
export class PackSets {
  private readonly loaded = new Map<string, Promise<PackSet>>();

  constructor(private readonly repoFs: RepoFileSystems) {
    // Another tab changed the packs: read them again on next use.
    repoFs.onReloaded((repoId) => this.forget(repoId));
  }

  for(repoId: string): Promise<PackSet> {
    let set = this.loaded.get(repoId);
    if (!set) {
      set = loadPackSet(this.repoFs.open(repoId).promises);
      this.loaded.set(repoId, set);
      const loading = set;
      // A failed load (storage error) is not cached: the next call tries again.
      loading.catch(() => {
        if (this.loaded.get(repoId) === loading) this.loaded.delete(repoId);
      });
    }
    return set;
  }

  /** Drops the cached set, e.g. when the repo is deleted; the next `for` reads the disk again. */
  forget(repoId: string): void {
    this.loaded.delete(repoId);
  }
}

async function loadPackSet(fs: PromiseFs): Promise<PackSet> {
  const set = new PackSet();
  let names: string[];
  try {
    names = await fs.readdir(PACK_DIR);
  } catch (err) {
    if ((err as { code?: string }).code === 'ENOENT') return set;
    throw storageError(err, 'the list of packs');
  }
  const present = new Set(names);
  for (const name of names) {
    const match = PACK_INDEX_NAME.exec(name);
    if (!match) continue;
    // A .pack without its .idx is invisible (an interrupted write); an .idx without its .pack cannot be:
    // writers put the .pack first and delete it last.
    const idx = (await fs.readFile(`${PACK_DIR}/${name}`)) as Uint8Array;
    set.add(match[1], idx, present.has(`pack-${match[1]}.promisor`));
  }
  return set;
}
