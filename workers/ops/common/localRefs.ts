import git from 'isomorphic-git';
import { isSha1Hex } from '../../model/objectId.ts';
import { parsePackedRefs } from '../../store/packedRefs.ts';
import type { RepoHandle } from './repoAccess.ts';

export interface LocalRef {
  /** What the ref holds: a commit, or an annotated tag's object. */
  oid: string;
  /**
   * What it finally points at, when known without reading an object: packed-refs' `^` line, or, in a
   * `fully-peeled` file, the ref's own id when it has none (gitrepository-layout: packed-refs).
   */
  peeled?: string;
}

/**
 * Every ref under `refs/`, read in one pass: packed-refs parsed once, loose refs over it (a loose ref hides
 * its packed value, as git reads them). isomorphic-git's resolveRef reads and parses packed-refs again for
 * each ref, which made a fetch of a repo with 1,000 tags spend 3 to 5 s listing its own refs.
 */
export async function readLocalRefs(repo: RepoHandle): Promise<Map<string, LocalRef>> {
  const fs = repo.fs.promises;
  const refs = new Map<string, LocalRef>();
  const text = (await fs.readFile(`${repo.gitdir}/packed-refs`, 'utf8').catch(() => '')) as string;
  const fullyPeeled = /^# pack-refs with:.* fully-peeled /.test(text);
  for (const r of parsePackedRefs(text)) {
    refs.set(r.name, { oid: r.oid, peeled: r.peeled ?? (fullyPeeled ? r.oid : undefined) });
  }
  const walk = async (dir: string): Promise<void> => {
    const entries = (await fs.readdir(`${repo.gitdir}/${dir}`).catch(() => [])) as string[];
    for (const entry of entries) {
      const name = `${dir}/${entry}`;
      const stat = await fs.stat(`${repo.gitdir}/${name}`);
      if (stat.isDirectory()) {
        await walk(name);
        continue;
      }
      const content = ((await fs.readFile(`${repo.gitdir}/${name}`, 'utf8')) as string).trim();
      // A symbolic ref (refs/remotes/origin/HEAD) names another: resolved as git would.
      const oid = isSha1Hex(content)
        ? content
        : await git.resolveRef({ fs: repo.fs, gitdir: repo.gitdir, ref: name }).catch(() => null);
      if (oid) refs.set(name, { oid });
      else refs.delete(name);
    }
  };
  await walk('refs');
  return refs;
}
