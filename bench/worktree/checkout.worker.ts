// In a Chromium worker, as the app runs git: `run` clones a repository blob:none and checks it out,
// timing each phase; `verify` (in a fresh page, after a reload) reads the working tree and a blob back
// from IndexedDB, for checkout.bench.ts to compare with the git CLI's checkout.
import '../../workers/bufferPolyfill.ts';
import git from 'isomorphic-git';
import { createEngine, engineContext } from '../../workers/engine/engine.ts';
import type { CheckoutResult } from '../../workers/engine/types.ts';
import { GITDIR } from '../../workers/store/repoFs.ts';

const engine = createEngine();
const ctx = engineContext(engine);

export interface CheckoutRun {
  repoId: string;
  cloneMs: number;
  /** From the start of checkout to its first write: ref, tree walk, blob fetch. */
  fetchMs: number;
  /** From then to the end: isomorphic-git's checkout and the one IndexedDB commit. */
  writeMs: number;
  result: CheckoutResult;
  /** The same checkout again: nothing to fetch or write. */
  againMs: number;
  againRequests: number;
}

export interface WorktreeListingEntry {
  path: string;
  kind: 'dir' | 'file' | 'executable' | 'symlink';
  sha1?: string;
  target?: string;
}

export interface VerifyResult {
  repoId: string;
  head: string;
  entries: WorktreeListingEntry[];
  /** statusMatrix rows that are not [path, 1, 1, 1]. */
  notClean: number;
  statusRows: number;
  readMs: number;
  /** Blobs of HEAD read through isomorphic-git. */
  blobs: number;
}

let debug = false;

async function run(url: string): Promise<CheckoutRun> {
  let t = performance.now();
  const cloned = await engine.clone({ url });
  const cloneMs = performance.now() - t;
  t = performance.now();
  let firstWrite = 0;
  let analysed = 0;
  let lastWrite = 0;
  let lastFetch = 0;
  const result = await engine.repo(cloned.repoId).checkout(
    { ref: 'HEAD' },
    {
      onProgress: (p) => {
        if (debug) console.log(JSON.stringify(p));
        if (p.phase === 'fetching-blobs') lastFetch = performance.now();
        if (p.phase === 'writing-files' && !firstWrite) firstWrite = performance.now();
        if (p.phase === 'writing-files' && p.files > 0 && !analysed) analysed = performance.now();
        if (p.phase === 'writing-files' && p.files > 0 && p.files === p.totalFiles && !lastWrite) {
          lastWrite = performance.now();
        }
      },
    },
  );
  const end = performance.now();
  if (debug) {
    const ms = (a: number, b: number) => Math.round(b - a);
    console.log(
      `timing: fetch ${ms(t, lastFetch)} ms, until writing ${ms(lastFetch, firstWrite)} ms, analysis ${ms(firstWrite, analysed)} ms, writes ${ms(analysed, lastWrite)} ms, commit ${ms(lastWrite, end)} ms`,
    );
  }
  const again = performance.now();
  const second = await engine.repo(cloned.repoId).checkout({ ref: 'HEAD' });
  return {
    repoId: cloned.repoId,
    cloneMs: Math.round(cloneMs),
    fetchMs: Math.round(firstWrite - t),
    writeMs: Math.round(end - firstWrite),
    result,
    againMs: Math.round(performance.now() - again),
    againRequests: second.requests,
  };
}

async function verify(): Promise<VerifyResult> {
  const [record] = await ctx.store.registry.list();
  if (!record) throw new Error('no repository stored');
  const fs = ctx.store.repoFs.open(record.id);
  const p = fs.promises;
  if (debug) console.log('verify: opening', record.id);
  const started = performance.now();
  const entries: WorktreeListingEntry[] = [];
  const walk = async (dir: string) => {
    for (const name of await p.readdir(dir)) {
      const full = dir === '/' ? `/${name}` : `${dir}/${name}`;
      if (full === GITDIR) continue;
      const path = full.slice(1);
      const st = await p.lstat(full);
      if (st.isSymbolicLink()) entries.push({ path, kind: 'symlink', target: await p.readlink(full) });
      else if (st.isDirectory()) {
        entries.push({ path, kind: 'dir' });
        await walk(full);
      } else {
        const bytes = (await p.readFile(full)) as Uint8Array<ArrayBuffer>;
        const digest = new Uint8Array(await crypto.subtle.digest('SHA-1', bytes));
        const sha1 = [...digest].map((b) => b.toString(16).padStart(2, '0')).join('');
        entries.push({ path, kind: st.mode & 0o111 ? 'executable' : 'file', sha1 });
      }
    }
  };
  await walk('/');
  if (debug) console.log('verify: walked');
  const readMs = performance.now() - started;
  const cache = {};
  const head = await git.resolveRef({ fs, gitdir: GITDIR, ref: 'HEAD' });
  const rows = await git.statusMatrix({ fs, dir: '/', gitdir: GITDIR, cache });
  if (debug) console.log('verify: status');
  // Every blob of HEAD, read through isomorphic-git from the packs stored in IndexedDB.
  let blobs = 0;
  const readBlobs = async (tree: string) => {
    for (const entry of (await git.readTree({ fs, gitdir: GITDIR, oid: tree, cache })).tree) {
      if (entry.type === 'tree') await readBlobs(entry.oid);
      else if (entry.type === 'blob') {
        await git.readBlob({ fs, gitdir: GITDIR, oid: entry.oid, cache });
        blobs++;
      }
    }
  };
  await readBlobs((await git.readCommit({ fs, gitdir: GITDIR, oid: head, cache })).commit.tree);
  if (debug) console.log('verify: blobs');
  entries.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
  return {
    repoId: record.id,
    head,
    entries,
    notClean: rows.filter(([, h, w, s]) => !(h === 1 && w === 1 && s === 1)).length,
    statusRows: rows.length,
    readMs: Math.round(readMs),
    blobs,
  };
}

self.onmessage = async (e: MessageEvent<{ mode: 'run' | 'verify'; url?: string; debug?: string }>) => {
  debug = !!e.data.debug;
  try {
    self.postMessage(e.data.mode === 'run' ? await run(e.data.url!) : await verify());
  } catch (err) {
    self.postMessage({ error: String((err as Error).stack ?? err) });
  }
};
