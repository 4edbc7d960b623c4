import { GITDIR, type PromiseFs } from './repoFs.ts';

/**
 * The ids among `oids` stored as loose objects (`objects/xx/yyyy…`): what isomorphic-git writes for a
 * commit, a merge or `add` made here. The pack set knows packs only, so a blob that exists only loose
 * must not be taken for one the partial clone left on the server (which would refuse it: "not our ref").
 */
export async function looseObjects(fs: PromiseFs, oids: Iterable<string>): Promise<Set<string>> {
  const found = new Set<string>();
  const byDir = new Map<string, string[]>();
  for (const oid of oids) {
    const dir = oid.slice(0, 2);
    const list = byDir.get(dir);
    if (list) list.push(oid);
    else byDir.set(dir, [oid]);
  }
  for (const [dir, list] of byDir) {
    let names: Set<string>;
    try {
      names = new Set(await fs.readdir(`${GITDIR}/objects/${dir}`));
    } catch {
      continue;
    }
    for (const oid of list) if (names.has(oid.slice(2))) found.add(oid);
  }
  return found;
}
