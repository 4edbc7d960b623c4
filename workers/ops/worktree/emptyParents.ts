import type { RepoHandle } from '../common/repoAccess.ts';

/** git leaves no empty folder behind when it removes a file: removes `path`'s folders that it left empty. */
export async function removeEmptyParents(repo: RepoHandle, path: string): Promise<void> {
  const fs = repo.fs.promises;
  let dir = path.slice(0, Math.max(0, path.lastIndexOf('/')));
  while (dir) {
    if ((await fs.readdir(`/${dir}`).catch(() => ['?'])).length > 0) return;
    await fs.rmdir(`/${dir}`);
    dir = dir.slice(0, Math.max(0, dir.lastIndexOf('/')));
  }
}
