// IndexedDB alone, without the engine: how long putting a working tree's files takes in a Chromium worker,
// in a fresh persistent profile as bench/run.ts launches it (so on disk, not in memory). It tells the
// browser's cost per record and per byte apart from ours (docs/decisions/working-tree-storage.md, issue 23).
//
//   npx tsx bench/worktree/idbPut.bench.ts [runs] [configurations] [bare repository]
//
// Defaults: 3 runs of `all,overlap` on .cache/fixtures/medium.git (built by `npm run bench -- --sizes
// medium`). The files are HEAD's, read with `git cat-file`. A configuration is `what[:MB][@shm]`:
//   what: all (every file), overlap (every file, each transaction made without waiting for the one before,
//         at most 16 MB in flight), small (files of 64 KB or less), big (the others), tiny (100 B a file)
//   MB:   bytes per transaction, 4 by default (STAGE_BYTES); `@shm` drops Playwright's
//         `--disable-dev-shm-usage`, so Chromium's shared memory is in /dev/shm. Configurations take turns.

import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium } from '@playwright/test';
import { chromiumLaunch } from '../../e2e/chromium.ts';

const runs = Number(process.argv[2] ?? 3);
const configurations = (process.argv[3] ?? 'all,overlap').split(',');
const repo = process.argv[4] ?? '.cache/fixtures/medium.git';

function headBlobs(gitDir: string): { data: Buffer; sizes: number[] } {
  const oids = execFileSync('git', ['-C', gitDir, 'ls-tree', '-r', 'HEAD'], { maxBuffer: 1 << 30 })
    .toString()
    .split('\n')
    .filter((line) => line.includes(' blob '))
    .map((line) => line.split(/\s+/)[2]);
  const raw = execFileSync('git', ['-C', gitDir, 'cat-file', '--batch'], {
    input: `${oids.join('\n')}\n`,
    maxBuffer: 1 << 30,
  });
  const parts: Buffer[] = [];
  const sizes: number[] = [];
  for (let at = 0; at < raw.length; ) {
    const eol = raw.indexOf(10, at);
    const size = Number(raw.subarray(at, eol).toString().split(' ')[2]);
    parts.push(raw.subarray(eol + 1, eol + 1 + size));
    sizes.push(size);
    at = eol + 1 + size + 1;
  }
  return { data: Buffer.concat(parts), sizes };
}

// Runs in the worker, as a string: the page is plain, not built.
const WORKER = `
onmessage = async (e) => {
  const { what, txBytes, data, sizes } = e.data;
  const db = await new Promise((resolve, reject) => {
    const req = indexedDB.open('bench');
    req.onupgradeneeded = () => req.result.createObjectStore('files');
    req.onsuccess = () => resolve(req.result);
    req.onerror = () => reject(req.error);
  });
  const all = new Uint8Array(data);
  let fillMs = 0;
  const write = (batch) => {
    const started = performance.now();
    const done = new Promise((resolve, reject) => {
      const tx = db.transaction('files', 'readwrite');
      const store = tx.objectStore('files');
      for (const [key, value] of batch) store.put(value, key);
      tx.oncomplete = resolve;
      tx.onerror = tx.onabort = () => reject(tx.error);
    });
    fillMs += performance.now() - started;
    return done;
  };
  const started = performance.now();
  let chain = Promise.resolve();
  const inFlight = [];
  let inFlightBytes = 0;
  let batch = [];
  let bytes = 0;
  let offset = 0;
  for (let i = 0; i < sizes.length; i++) {
    let value = all.slice(offset, offset + sizes[i]);
    offset += sizes[i];
    if (what === 'small' && value.byteLength > 65536) continue;
    if (what === 'big' && value.byteLength <= 65536) continue;
    if (what === 'tiny') value = value.slice(0, 100);
    batch.push([i + 1, value]);
    bytes += value.byteLength;
    if (bytes >= txBytes) await flush();
  }
  if (batch.length > 0) await flush();
  async function flush() {
    const full = batch;
    const entry = { bytes };
    batch = [];
    bytes = 0;
    if (what === 'overlap') entry.done = write(full);
    else entry.done = chain = chain.then(() => write(full));
    inFlight.push(entry);
    inFlightBytes += entry.bytes;
    entry.done.then(() => {
      inFlight.splice(inFlight.indexOf(entry), 1);
      inFlightBytes -= entry.bytes;
    });
    while (inFlightBytes > Math.max(16 << 20, txBytes)) await inFlight[0].done;
  }
  await Promise.all(inFlight.map((entry) => entry.done));
  await chain;
  postMessage({ ms: performance.now() - started, fillMs });
};
`;

const PAGE = `<script>
window.run = async (what, txBytes) => {
  const [data, sizes] = await Promise.all([
    fetch('/data').then((r) => r.arrayBuffer()),
    fetch('/sizes').then((r) => r.json()),
  ]);
  const worker = new Worker('/worker.js');
  return new Promise((resolve) => {
    worker.onmessage = (e) => resolve(e.data);
    worker.postMessage({ what, txBytes, data, sizes }, [data]);
  });
};
</script>`;

const { data, sizes } = headBlobs(repo);
const server = createServer((req, res) => {
  const body: Record<string, [string, string | Buffer]> = {
    '/': ['text/html', PAGE],
    '/worker.js': ['text/javascript', WORKER],
    '/data': ['application/octet-stream', data],
    '/sizes': ['application/json', JSON.stringify(sizes)],
  };
  const found = body[req.url ?? ''];
  if (!found) {
    res.statusCode = 404;
    res.end();
    return;
  }
  res.setHeader('content-type', found[0]);
  res.end(found[1]);
}).listen(0, '127.0.0.1');
await new Promise((resolve) => server.once('listening', resolve));
const port = (server.address() as AddressInfo).port;

console.log(`${repo}: ${sizes.length} files, ${data.length} bytes`);
try {
  for (let run = 0; run < runs; run++) {
    for (const configuration of configurations) {
      const [spec, shm] = configuration.split('@');
      const [what, mb] = spec.split(':');
      const profile = mkdtempSync(join(tmpdir(), 'blobless-idbput-'));
      const context = await chromium.launchPersistentContext(profile, {
        ...chromiumLaunch(),
        headless: true,
        ...(shm === 'shm' ? { ignoreDefaultArgs: ['--disable-dev-shm-usage'] } : {}),
      });
      try {
        const page = context.pages()[0] ?? (await context.newPage());
        await page.goto(`http://127.0.0.1:${port}/`);
        const result = (await page.evaluate(
          ([w, b]) => (window as unknown as { run(w: string, b: number): Promise<unknown> }).run(w, b),
          [what, Number(mb ?? 4) * 1024 * 1024] as const,
        )) as { ms: number; fillMs: number };
        const load = readFileSync('/proc/loadavg', 'utf8').split(' ')[0];
        console.log(
          `${run + 1} ${configuration}: ${Math.round(result.ms)} ms (puts ${Math.round(result.fillMs)} ms), load ${load}`,
        );
      } finally {
        await context.close();
        rmSync(profile, { recursive: true, force: true });
      }
    }
  }
} finally {
  server.close();
}
