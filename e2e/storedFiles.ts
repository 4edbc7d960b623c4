import { execFileSync } from 'node:child_process';
import { mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { expect, type Page } from '@playwright/test';

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

/**
 * Writes `files` (storedFiles' answer) under `dir` and checks the git directory with git: every .idx has
 * its .pack and the other way round, `verify-pack` passes on each, and `fsck --connectivity-only`. Returns
 * the ids the packs hold, listed from the packs: `cat-file -t` would fetch a missing blob from the
 * server and hide a loss.
 */
export function checkExportedStore(files: Record<string, string>, dir: string): Set<string> {
  const gitIn = (cwd: string, args: string[]) => execFileSync('git', args, { cwd, encoding: 'utf8' });
  for (const [path, b64] of Object.entries(files)) {
    const dest = join(dir, path);
    mkdirSync(dirname(dest), { recursive: true });
    writeFileSync(dest, Buffer.from(b64, 'base64'));
  }
  const packDir = join(dir, '.git/objects/pack');
  const names = readdirSync(packDir);
  for (const idx of names.filter((n) => n.endsWith('.idx'))) {
    expect(names).toContain(idx.replace(/idx$/, 'pack'));
    gitIn(packDir, ['verify-pack', idx]);
  }
  for (const pack of names.filter((n) => n.endsWith('.pack'))) {
    expect(names).toContain(pack.replace(/pack$/, 'idx'));
  }
  gitIn(join(dir, '.git'), ['fsck', '--connectivity-only', '--no-progress']);
  return new Set(
    gitIn(join(dir, '.git'), ['cat-file', '--batch-all-objects', '--batch-check=%(objectname)']).split('\n'),
  );
}
