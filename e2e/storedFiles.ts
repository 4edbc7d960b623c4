import type { Page } from '@playwright/test';

/**
 * Every file of the repo's lightning-fs as IndexedDB stores it (what any new worker would load): the
 * superblock's tree, each file's bytes by inode, base64.
 */
export async function storedFiles(page: Page, repoId: string): Promise<Record<string, string>> {
  return page.evaluate(async (name) => {
    const db = await new Promise<IDBDatabase>((resolve, reject) => {
      const req = indexedDB.open(name);
      req.onsuccess = () => resolve(req.result);
      req.onerror = () => reject(req.error);
    });
    const get = (key: IDBValidKey) =>
      new Promise<unknown>((resolve, reject) => {
        const req = db.transaction(`${name}_files`).objectStore(`${name}_files`).get(key);
        req.onsuccess = () => resolve(req.result);
        req.onerror = () => reject(req.error);
      });
    type Node = Map<string | number, unknown>;
    const out: Record<string, string> = {};
    const walk = async (node: Node, path: string) => {
      for (const [key, child] of node) {
        if (key === 0) continue;
        const stat = (child as Node).get(0) as { type: string; ino: number };
        // The superblock's root is a "/" entry: paths are joined without doubled slashes.
        const at = `${path}/${key}`.replace(/\/+/g, '/');
        if (stat.type === 'dir') await walk(child as Node, at);
        else if (stat.type === 'file') {
          const bytes = (await get(stat.ino)) as Uint8Array;
          let s = '';
          for (let i = 0; i < bytes.length; i += 0x8000)
            s += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
          out[at] = btoa(s);
        }
      }
    };
    await walk((await get('!root')) as Node, '');
    db.close();
    return out;
  }, `blobless-repo-${repoId}`);
}

/** storedFiles once pending writes are committed (BatchedIdb commits 500 ms after the last write). */
export async function settledFiles(page: Page, repoId: string): Promise<Record<string, string>> {
  let last = JSON.stringify(await storedFiles(page, repoId));
  for (;;) {
    await page.waitForTimeout(1000);
    const now = await storedFiles(page, repoId);
    if (JSON.stringify(now) === last) return now;
    last = JSON.stringify(now);
  }
}
