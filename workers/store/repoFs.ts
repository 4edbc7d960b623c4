import FS from '@isomorphic-git/lightning-fs';

/** The git directory inside each repo's file system; `/` stays free for a working tree. */
export const GITDIR = '/.git';

export type PromiseFs = FS.PromisifiedFS;

const open = new Map<string, FS>();

export function repoDbName(repoId: string): string {
  return `blobless-repo-${repoId}`;
}

/** One lightning-fs (one IndexedDB database) per repo, so deleting a repo is dropping a database. */
export function openRepoFs(repoId: string): FS {
  let fs = open.get(repoId);
  if (!fs) {
    fs = new FS(repoDbName(repoId));
    open.set(repoId, fs);
  }
  return fs;
}

/** Writes lightning-fs's debounced superblock now, so a reload right after an operation sees its files. */
export async function flushRepoFs(repoId: string): Promise<void> {
  await openRepoFs(repoId).promises.flush();
}

export async function deleteRepoFs(repoId: string): Promise<void> {
  const fs = open.get(repoId);
  open.delete(repoId);
  if (fs) {
    // lightning-fs keeps its database open between calls; deleteDatabase would wait on it forever.
    const p = fs.promises as unknown as { _deactivate(): Promise<void> };
    await p._deactivate().catch(() => undefined);
  }
  const name = repoDbName(repoId);
  await Promise.all([deleteDatabase(name), deleteDatabase(`${name}_lock`)]);
}

function deleteDatabase(name: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const req = indexedDB.deleteDatabase(name);
    req.onsuccess = () => resolve();
    req.onerror = () => reject(req.error);
    req.onblocked = () => resolve();
  });
}

/** `mkdir -p`, tolerant of directories that already exist. */
export async function mkdirp(fs: PromiseFs, dir: string): Promise<void> {
  const parts = dir.split('/').filter(Boolean);
  let at = '';
  for (const part of parts) {
    at += `/${part}`;
    try {
      await fs.mkdir(at);
    } catch (err) {
      if ((err as { code?: string }).code !== 'EEXIST') throw err;
    }
  }
}

export async function writeFileDeep(fs: PromiseFs, path: string, data: Uint8Array | string): Promise<void> {
  await mkdirp(fs, path.slice(0, path.lastIndexOf('/')));
  await fs.writeFile(path, data, typeof data === 'string' ? 'utf8' : undefined);
}

/** Sum of file sizes below `dir`, to show what a repo costs in IndexedDB. */
export async function du(fs: PromiseFs, dir: string): Promise<number> {
  let total = 0;
  for (const name of await fs.readdir(dir)) {
    const path = `${dir === '/' ? '' : dir}/${name}`;
    const st = await fs.lstat(path);
    total += st.isDirectory() ? await du(fs, path) : st.size;
  }
  return total;
}
