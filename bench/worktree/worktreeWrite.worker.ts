// One benchmark run inside a Chromium worker: write `files` small files into a fresh lightning-fs through
// the chosen backend, flush, then open the database again as a new page would and read every file back.
import FS from '@isomorphic-git/lightning-fs';
import { indexedDbStorage } from '../../workers/storage/indexedDb.ts';
import type { BatchedIdb } from '../../workers/store/batchedIdb.ts';
import { createBatchedFs } from '../../workers/store/repoFs.ts';

const storage = indexedDbStorage();

/**
 * default: lightning-fs as shipped (IdbBackend, one transaction per file);
 * batched: BatchedIdb under lightning-fs's DefaultBackend;
 * repoFs: BatchedIdb under RepoFsBackend (no whole-tree walk per new inode), what repos use.
 */
export type Backend = 'default' | 'batched' | 'repoFs';

function openFs(backend: Backend, name: string): { fs: FS; db?: BatchedIdb } {
  if (backend === 'default') return { fs: new FS(name) };
  return createBatchedFs(storage, name, { fixInodeWalk: backend === 'repoFs' });
}

export interface WorktreeWriteRun {
  backend: Backend;
  files: number;
  /** writeFile calls until the last resolves. */
  writeMs: number;
  /** The final flush (superblock, and for the batched backend every pending file). */
  flushMs: number;
  /** A new FS on the same database: load the superblock, stat and read every file. */
  reopenReadMs: number;
  transactions: number | null;
}

const FILES_PER_DIR = 100;

async function run(backend: Backend, files: number): Promise<WorktreeWriteRun> {
  const name = `worktree-bench-${backend}-${files}-${crypto.randomUUID()}`;
  const { fs, db } = openFs(backend, name);
  const p = fs.promises;
  const encoder = new TextEncoder();
  const paths: string[] = [];
  const started = performance.now();
  for (let i = 0; i < files; i++) {
    const dir = `/src/d${Math.floor(i / FILES_PER_DIR)}`;
    if (i % FILES_PER_DIR === 0) await mkdirp(p, dir);
    const path = `${dir}/file-${i}.ts`;
    paths.push(path);
    // Small source files, 200 to 1,000 bytes.
    await p.writeFile(path, encoder.encode(`// ${path}\n${'export const x = 1;\n'.repeat(10 + (i % 40))}`));
  }
  const written = performance.now();
  await p.flush();
  const flushed = performance.now();
  await (p as unknown as { _deactivate(): Promise<void> })._deactivate();

  const again = openFs(backend, name).fs.promises;
  const reopenStart = performance.now();
  let bytes = 0;
  for (const path of paths) {
    await again.stat(path);
    bytes += ((await again.readFile(path)) as Uint8Array).byteLength;
  }
  const reopened = performance.now();
  if (bytes === 0) throw new Error('read nothing back');
  await (again as unknown as { _deactivate(): Promise<void> })._deactivate();
  await Promise.all([deleteDatabase(name), deleteDatabase(`${name}_lock`)]);
  return {
    backend,
    files,
    writeMs: Math.round(written - started),
    flushMs: Math.round(flushed - written),
    reopenReadMs: Math.round(reopened - reopenStart),
    transactions: db ? db.transactions : null,
  };
}

async function mkdirp(p: FS.PromisifiedFS, dir: string): Promise<void> {
  let at = '';
  for (const part of dir.split('/').filter(Boolean)) {
    at += `/${part}`;
    try {
      await p.mkdir(at);
    } catch (err) {
      if ((err as { code?: string }).code !== 'EEXIST') throw err;
    }
  }
}

function deleteDatabase(name: string): Promise<void> {
  return new Promise((resolve) => {
    const req = indexedDB.deleteDatabase(name);
    req.onsuccess = req.onerror = req.onblocked = () => resolve();
  });
}

self.onmessage = async (e: MessageEvent<{ backend: Backend; files: number }>) => {
  try {
    self.postMessage(await run(e.data.backend, e.data.files));
  } catch (err) {
    self.postMessage({ error: String((err as Error).stack ?? err) });
  }
};
