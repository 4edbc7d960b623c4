// Lazy blob fetches (lazyBlobs.ts) against a scripted fetch: a partial clone of a repo made here by the git
// CLI, each blob request answered by a pack `git pack-objects` builds of the wanted blobs (or of other ones,
// or by a broken answer), and the git CLI as the oracle of what an export of the repo holds. No git server:
// each mutant costs a fraction of a second. Against git http-backend: test/lazyBlobs.test.ts.
import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { requestLines } from '../../../test/support/craftedServer.ts';
import { testEngine } from '../../../test/support/engine.ts';
import { exportDir } from '../../../test/support/exportGitDir.ts';
import { git, gitBuffer, offlineGit } from '../../../test/support/git.ts';
import { failure, packFiles, snapshotGitDir } from '../../../test/support/repoChecks.ts';
import { memoryStorage } from '../../storage/memory.ts';
import type { RepoEvent } from '../../store/repoEvents.ts';
import { GITDIR } from '../../store/repoFs.ts';
import type { Storage } from '../../store/storage.ts';
import { concatBytes, encodePktLine, FLUSH_PKT } from '../../wire/pktLine.ts';
import { MissingObjectError } from '../common/errors.ts';
import { maintenanceIdle, REPACK_THRESHOLD } from '../maintenance/packMaintenance.ts';
import {
  type BlobFetchProgress,
  BlobFetchState,
  cancelBlobFetches,
  ensureBlobs,
  PRIOR_BYTES_PER_BLOB,
  type StoredBlobPack,
} from './lazyBlobs.ts';

/** How a test answers a blob request: its wanted oids, and the request's signal. */
type BlobAnswer = (wants: string[], signal: AbortSignal | undefined) => Promise<Response> | Response;

const URL_BASE = 'https://git.example/r.git';
let answerBlobs: BlobAnswer = (wants) => packAnswer(wants);
/** The wanted oids of each blob request, in the order they came. */
const asked: string[][] = [];
/** The address, Authorization and Git-Protocol headers and pkt-lines of each blob request. */
const sentTo: { url: string; auth: string | null; protocol: string | null; lines: string[] }[] = [];

const fetch = (async (input: RequestInfo | URL, init?: RequestInit) => {
  const url = String(input instanceof Request ? input.url : input);
  if (url.includes('/info/refs')) {
    return ok(
      concatBytes([
        ...[
          'version 2',
          'agent=git/2.39.5',
          'ls-refs=unborn',
          'fetch=shallow filter',
          'object-format=sha1',
        ].map((l) => encodePktLine(`${l}\n`)),
        FLUSH_PKT,
      ]),
    );
  }
  const lines = requestLines(Buffer.from(init?.body as Uint8Array).toString('latin1'));
  if (lines.includes('command=ls-refs')) {
    return ok(
      concatBytes([
        encodePktLine(`${commit} HEAD symref-target:refs/heads/main\n`),
        encodePktLine(`${commit} refs/heads/main\n`),
        FLUSH_PKT,
      ]),
    );
  }
  const wants = lines.filter((l) => l.startsWith('want ')).map((l) => l.slice(5));
  if (lines.includes('filter blob:none')) {
    return ok(packfileSection(await packOf([commit], ['--revs', '--filter=blob:none'])));
  }
  asked.push(wants);
  const headers = new Headers(init?.headers);
  sentTo.push({ url, auth: headers.get('Authorization'), protocol: headers.get('Git-Protocol'), lines });
  return answerBlobs(wants, init?.signal ?? undefined);
}) as typeof globalThis.fetch;

const { engine, ctx } = testEngine({
  storage: memoryStorage(),
  fetch,
  retry: { attempts: 2, baseDelayMs: 1, maxDelayMs: 1 },
});

function ok(body: Uint8Array | ReadableStream<Uint8Array>): Response {
  return new Response(body as BodyInit, {
    status: 200,
    headers: { 'Content-Type': 'application/x-git-upload-pack-result' },
  });
}

/** A v2 fetch answer: the packfile section, the pack on band 1 (gitprotocol-v2: fetch). */
function packfileSection(pack: Uint8Array): Uint8Array {
  const out = [encodePktLine('packfile\n')];
  for (let i = 0; i < pack.length; i += 65515) {
    out.push(encodePktLine(concatBytes([Uint8Array.of(1), pack.subarray(i, i + 65515)])));
  }
  return concatBytes([...out, FLUSH_PKT]);
}

let src: string;
let scratch: string;
let commit: string;
/** The blobs at HEAD of the source repo, each test taking its own. */
let blobs: string[];
let repoId: string;
let taken = 0;
function take(n: number): string[] {
  taken += n;
  if (taken > blobs.length) throw new Error('the source repo has too few blobs');
  return blobs.slice(taken - n, taken);
}

/** A pack `git pack-objects` makes of `oids` (or, with --revs, of what they reach). */
async function packOf(oids: string[], args: string[] = []): Promise<Uint8Array> {
  return new Uint8Array(
    await gitBuffer(['pack-objects', '--stdout', '-q', ...args], {
      cwd: src,
      input: oids.map((o) => `${o}\n`).join(''),
    }),
  );
}

async function packAnswer(oids: string[]): Promise<Response> {
  return ok(packfileSection(await packOf(oids)));
}

let exports = 0;
/** The repo's git directory exported to disk, for the git CLI. */
async function exported(): Promise<string> {
  await maintenanceIdle(ctx, repoId);
  const dir = join(scratch, `export-${exports++}`);
  await exportDir(ctx.store.repoFs.open(repoId), GITDIR, dir);
  return dir;
}

/** The repo's git directory, file by file, once its pack maintenance is done. */
async function snapshot(): Promise<Record<string, string>> {
  await maintenanceIdle(ctx, repoId);
  return snapshotGitDir(ctx, repoId);
}

/** Which of `oids` git finds in an export of the repo (without fetching). */
async function held(oids: string[]): Promise<string[]> {
  const dir = await exported();
  const all = await offlineGit(dir, ['cat-file', '--batch-all-objects', '--batch-check=%(objectname)']);
  const have = new Set(all.trim().split('\n'));
  return oids.filter((o) => have.has(o));
}

beforeAll(async () => {
  scratch = await mkdtemp(join(tmpdir(), 'blobless-lazyfast-'));
  src = join(scratch, 'src');
  await git(['init', '-q', '-b', 'main', src]);
  for (let i = 0; i < 200; i++) {
    await writeFile(join(src, `f${String(i).padStart(3, '0')}.txt`), `file ${i}\n${'x'.repeat(i * 37)}\n`);
  }
  await git(['add', '.'], { cwd: src });
  await git(['-c', 'user.name=A', '-c', 'user.email=a@example.com', 'commit', '-q', '-m', 'files'], {
    cwd: src,
  });
  commit = (await git(['rev-parse', 'HEAD'], { cwd: src })).trim();
  blobs = (await git(['ls-tree', '--format=%(objectname)', 'HEAD'], { cwd: src })).trim().split('\n');
  repoId = (await engine.clone({ url: URL_BASE })).repoId;
});

afterAll(async () => {
  await engine.close();
  await rm(scratch, { recursive: true, force: true });
});

/** A promise and the function that settles it. */
function gate<T = void>() {
  let open!: (v: T) => void;
  const opened = new Promise<T>((resolve) => {
    open = resolve;
  });
  return { opened, open };
}

/**
 * An answer whose body sends `head`, then waits for `rest` (bytes to send and end, or null to end there);
 * the request's signal errors it, as a real fetch's does.
 */
function streamed(head: Uint8Array, rest: Promise<Uint8Array | null>, signal?: AbortSignal): Response {
  let done = false;
  return ok(
    new ReadableStream<Uint8Array>({
      start(c) {
        const fail = () => {
          if (!done) c.error(new DOMException('This operation was aborted', 'AbortError'));
          done = true;
        };
        if (signal?.aborted) return fail();
        signal?.addEventListener('abort', fail);
        c.enqueue(head);
        void rest.then((tail) => {
          if (done) return;
          done = true;
          if (tail) c.enqueue(tail);
          c.close();
        });
      },
      cancel() {
        done = true;
      },
    }),
  );
}

/** The response bytes of a pack answer of `oids`, as the scripted server sends them. */
async function answerBytes(oids: string[]): Promise<number> {
  return packfileSection(await packOf(oids)).length;
}

async function packNames(): Promise<string[]> {
  return (await packFiles(ctx, repoId)).filter((f) => f.endsWith('.pack'));
}

/**
 * A memory storage whose file-record writes go through `control.write` while it is set: it is handed the
 * write (values taken at once, as IndexedDB takes them) and says when, or whether, it completes.
 */
function controlledStorage() {
  const control: { write?: (store: () => Promise<void>) => Promise<void> } = {};
  const inner = memoryStorage();
  const storage: Storage = {
    ...inner,
    files: (name) => {
      const records = inner.files(name);
      return Object.assign(Object.create(records), {
        write: (changes: Parameters<typeof records.write>[0]) => {
          const store = () => records.write(changes);
          return control.write ? control.write(store) : store();
        },
      });
    },
  };
  return { storage, control };
}

describe('BlobFetchState', () => {
  it('learns only from fetches that brought blobs', () => {
    const state = new BlobFetchState();
    state.record('r', 500, 0);
    expect(state.bytesByRepo.has('r')).toBe(false);
    expect(state.estimate('r')).toBe(PRIOR_BYTES_PER_BLOB);
    state.bytesByRepo.set('s', { bytes: 500, blobs: 0 });
    expect(state.estimate('s')).toBe(PRIOR_BYTES_PER_BLOB);
    state.record('r', 500, 2);
    state.record('r', 100, 2);
    expect(state.estimate('r')).toBe(150);
  });
});

describe('ensureBlobs: what it asks and stores', () => {
  it('asks in ceil(N / size) requests of the wanted blobs in order; each pack stored whole, as git indexes it', async () => {
    const wanted = take(11);
    const packsBefore = await packNames();
    const recordBefore = await ctx.store.registry.get(repoId);
    asked.length = 0;
    const events: BlobFetchProgress[] = [];
    const result = await ensureBlobs(ctx, repoId, wanted, {
      batching: { size: 5, concurrency: 2 },
      onProgress: (p) => events.push({ ...p }),
    });
    expect(asked).toEqual([wanted.slice(0, 5), wanted.slice(5, 10), wanted.slice(10)]);
    const bytes =
      (await answerBytes(wanted.slice(0, 5))) +
      (await answerBytes(wanted.slice(5, 10))) +
      (await answerBytes(wanted.slice(10)));
    expect(result).toMatchObject({ fetched: 11, requests: 3, bytes });
    expect(result.objects.map((o) => o.oid).sort()).toEqual([...wanted].sort());
    expect(await held(wanted)).toEqual(wanted);

    expect(events[0]).toEqual({
      phase: 'fetching-blobs',
      objects: 0,
      totalObjects: 11,
      bytes: 0,
      requests: events[0].requests,
    });
    for (let i = 1; i < events.length; i++) {
      expect(events[i].objects).toBeGreaterThanOrEqual(events[i - 1].objects);
      expect(events[i].bytes).toBeGreaterThanOrEqual(events[i - 1].bytes);
      expect(events[i].requests).toBeGreaterThanOrEqual(events[i - 1].requests);
    }
    expect(events.at(-1)).toEqual({
      phase: 'fetching-blobs',
      objects: 11,
      totalObjects: 11,
      bytes,
      requests: 3,
    });

    // Three new packs, each with an empty .promisor and the .idx git's index-pack makes of it.
    const files = await packFiles(ctx, repoId);
    const added = (await packNames()).filter((f) => !packsBefore.includes(f));
    expect(added).toHaveLength(3);
    const dir = await exported();
    for (const pack of added) {
      const base = pack.slice(0, -'.pack'.length);
      expect(files).toContain(`${base}.idx`);
      expect(files).toContain(`${base}.promisor`);
      expect(await readFile(join(dir, 'objects/pack', `${base}.promisor`), 'utf8')).toBe('');
      const idx = join(scratch, `${base}-${exports}.idx`);
      await git(['index-pack', '-o', idx, join(dir, 'objects/pack', pack)]);
      expect(await readFile(join(dir, 'objects/pack', `${base}.idx`))).toEqual(await readFile(idx));
    }
    await offlineGit(dir, ['fsck', '--connectivity-only']);

    // Bookkeeping: the repo's bytes per blob, and its fetched bytes.
    expect(ctx.blobs.bytesByRepo.get(repoId)).toMatchObject({ blobs: expect.any(Number) });
    const recordAfter = await ctx.store.registry.get(repoId);
    expect((recordAfter?.bytesFetched ?? 0) - (recordBefore?.bytesFetched ?? 0)).toBe(bytes);
    expect((recordAfter?.sizeBytes ?? 0) > (recordBefore?.sizeBytes ?? 0)).toBe(true);
  });

  it('a fixed request size counts whole blobs, at least one', async () => {
    for (const [size, count, sizes] of [
      [2.5, 5, [2, 2, 1]],
      [0, 2, [1, 1]],
    ] as const) {
      asked.length = 0;
      await ensureBlobs(ctx, repoId, take(count), { batching: { size } });
      expect(asked.map((w) => w.length)).toEqual(sizes);
    }
  });

  it('learns the bytes per blob of each fetch, and plans the next by them', async () => {
    ctx.blobs.bytesByRepo.delete(repoId);
    expect(ctx.blobs.estimate(repoId)).toBe(3 * 1024);
    const first = take(2);
    const bytes = await answerBytes(first);
    await ensureBlobs(ctx, repoId, first);
    expect(ctx.blobs.bytesByRepo.get(repoId)).toEqual({ bytes, blobs: 2 });
    expect(ctx.blobs.estimate(repoId)).toBe(bytes / 2);
    const second = take(3);
    const more = await answerBytes(second);
    await ensureBlobs(ctx, repoId, second);
    expect(ctx.blobs.bytesByRepo.get(repoId)).toEqual({ bytes: bytes + more, blobs: 5 });
    // A tiny first request of ~1 blob (firstBytes over the learnt size), the rest in `spread` requests.
    asked.length = 0;
    const wanted = take(9);
    await ensureBlobs(ctx, repoId, wanted, {
      batching: { policy: { singleRequestBytes: 0, firstBytes: 1, spread: 2 } },
    });
    expect(asked).toEqual([wanted.slice(0, 1), wanted.slice(1, 5), wanted.slice(5)]);
  });

  it('asks nothing for blobs stored, named twice, or in capitals; refuses a name that is no id', async () => {
    const [a] = take(1);
    await ensureBlobs(ctx, repoId, [a]);
    asked.length = 0;
    expect(await ensureBlobs(ctx, repoId, [a, a.toUpperCase()])).toEqual({
      fetched: 0,
      requests: 0,
      bytes: 0,
      objects: [],
    });
    expect(asked).toEqual([]);
    const [b] = take(1);
    const result = await ensureBlobs(ctx, repoId, [b.toUpperCase(), b, a]);
    expect(asked).toEqual([[b]]);
    expect(result.fetched).toBe(1);
    const err = await failure(ensureBlobs(ctx, repoId, [a, 'HEAD']));
    expect(err.code).toBe('INVALID_OBJECT_ID');
    expect(err.message).toBe('"HEAD" is not an object id (40 hexadecimal digits).');
    expect((await failure(ensureBlobs(ctx, repoId, ['g'.repeat(40)]))).code).toBe('INVALID_OBJECT_ID');
    expect(asked).toEqual([[b]]);
  });

  it('schedules pack maintenance once it stored a pack, unless the caller does', async () => {
    const merging = () => ctx.maintenance.running.has(repoId) || ctx.maintenance.scheduled.size > 0;
    await maintenanceIdle(ctx, repoId);
    await ensureBlobs(ctx, repoId, take(1), { deferMaintenance: true });
    expect(merging()).toBe(false);
    const [a] = take(1);
    await ensureBlobs(ctx, repoId, [a]);
    expect(merging()).toBe(true);
    await maintenanceIdle(ctx, repoId);
    await ensureBlobs(ctx, repoId, [a]);
    expect(merging()).toBe(false);
    // One request stored its pack, the other's answer held nothing: due all the same.
    const [b, c] = take(2);
    answerBlobs = (w) => packAnswer(w.filter((o) => o !== c));
    try {
      await failure(ensureBlobs(ctx, repoId, [b, c], { batching: { size: 1 } }));
      expect(merging()).toBe(true);
    } finally {
      answerBlobs = (w) => packAnswer(w);
    }
  });

  it('its packs are promisor packs to maintenance, as their .promisor files say to git: past the threshold, merged', async () => {
    // An engine of its own: the shared repo's pack count depends on the tests before.
    const own = testEngine({ storage: memoryStorage(), fetch });
    try {
      const { repoId: id } = await own.engine.clone({ url: URL_BASE });
      const wanted = take(REPACK_THRESHOLD + 1);
      await ensureBlobs(own.ctx, id, wanted, { batching: { size: 1 } });
      await maintenanceIdle(own.ctx, id);
      const dir = join(scratch, `export-${exports++}`);
      await exportDir(own.ctx.store.repoFs.open(id), GITDIR, dir);
      // The clone's pack and every lazy one, merged into one promisor pack holding every blob.
      expect(await offlineGit(dir, ['count-objects', '-v'])).toMatch(/^packs: 1$/m);
      const names = await readdir(join(dir, 'objects/pack'));
      expect(names.filter((n) => n.endsWith('.promisor'))).toHaveLength(1);
      const all = await offlineGit(dir, ['cat-file', '--batch-all-objects', '--batch-check=%(objectname)']);
      expect(wanted.filter((o) => !all.includes(o))).toEqual([]);
    } finally {
      await own.engine.close();
    }
  });

  it("goes through the call's proxy and credentials, else the repo's", async () => {
    sentTo.length = 0;
    await ensureBlobs(ctx, repoId, take(1), { connection: { corsProxy: 'https://proxy.example/' } });
    await ensureBlobs(ctx, repoId, take(1), { connection: { auth: { username: 'u', password: 'p' } } });
    await ensureBlobs(ctx, repoId, take(1));
    expect(sentTo.map(({ url, auth }) => ({ url, auth }))).toEqual([
      { url: 'https://proxy.example/git.example/r.git/git-upload-pack', auth: null },
      { url: `${URL_BASE}/git-upload-pack`, auth: `Basic ${btoa('u:p')}` },
      { url: `${URL_BASE}/git-upload-pack`, auth: null },
    ]);
    // As git's promisor fetch: v2, no haves so `done` at once, no thin pack, no progress (gitprotocol-v2: fetch).
    for (const { protocol, lines } of sentTo) {
      expect(protocol).toBe('version=2');
      expect(lines).toEqual(expect.arrayContaining(['command=fetch', 'ofs-delta', 'no-progress', 'done']));
      expect(lines).not.toContain('thin-pack');
    }
  });

  it('sends `concurrency` requests at a time, at least one', async () => {
    for (const [concurrency, expected] of [
      [2, 2],
      [0, 1],
      [2.7, 2],
    ] as const) {
      let inFlight = 0;
      let most = 0;
      answerBlobs = async (w) => {
        inFlight++;
        most = Math.max(most, inFlight);
        await new Promise((r) => setTimeout(r, 20));
        inFlight--;
        return packAnswer(w);
      };
      try {
        asked.length = 0;
        await ensureBlobs(ctx, repoId, take(4), { batching: { size: 1, concurrency } });
        expect(asked).toHaveLength(4);
        expect(most).toBe(expected);
      } finally {
        answerBlobs = (w) => packAnswer(w);
      }
    }
  });

  it('asks nothing for a loose object, made here', async () => {
    const fs = ctx.store.repoFs.open(repoId).promises;
    const { default: iso } = await import('isomorphic-git');
    const oid = await iso.writeBlob({ fs, gitdir: GITDIR, blob: new TextEncoder().encode('made here\n') });
    asked.length = 0;
    expect((await ensureBlobs(ctx, repoId, [oid])).requests).toBe(0);
    expect(asked).toEqual([]);
  });

  it('an unknown repo is REPO_NOT_FOUND', async () => {
    const err = await failure(ensureBlobs(ctx, 'no-such-repo', take(1)));
    expect(err.code).toBe('REPO_NOT_FOUND');
    expect(err.message).toContain('No stored repository "no-such-repo"');
  });

  it('stores objects the server sends beyond those asked, and counts them', async () => {
    const [wanted, extra] = [take(1), take(2)];
    answerBlobs = () => packAnswer([...wanted, ...extra]);
    try {
      const result = await ensureBlobs(ctx, repoId, wanted);
      expect(result.fetched).toBe(3);
      expect(result.objects.map((o) => o.oid).sort()).toEqual([...wanted, ...extra].sort());
      expect(await held([...wanted, ...extra])).toEqual([...wanted, ...extra]);
      asked.length = 0;
      await ensureBlobs(ctx, repoId, extra);
      expect(asked).toEqual([]);
    } finally {
      answerBlobs = (w) => packAnswer(w);
    }
  });

  it('gives each object to onObject as it arrives: its id, type and bytes, as git has them', async () => {
    const wanted = take(3);
    const seen: { oid: string; type: string; data: Buffer }[] = [];
    await ensureBlobs(ctx, repoId, wanted, {
      onObject: ({ oid, type, data }) => seen.push({ oid, type, data: Buffer.from(data) }),
    });
    expect(seen.map((o) => o.oid).sort()).toEqual([...wanted].sort());
    for (const { oid, type, data } of seen) {
      expect(type).toBe('blob');
      expect(data).toEqual(await gitBuffer(['cat-file', 'blob', oid], { cwd: src }));
    }
  });

  it('gives each pack to onPack while it is stored: its bytes and objects', async () => {
    const wanted = take(4);
    const packs: StoredBlobPack[] = [];
    await ensureBlobs(ctx, repoId, wanted, {
      batching: { size: 2 },
      onPack: (p) => {
        packs.push(p);
      },
    });
    expect(packs).toHaveLength(2);
    const given = packs.flatMap((p) => p.objects.map((o) => o.oid)).sort();
    expect(given).toEqual([...wanted].sort());
    const dir = await exported();
    const stored = await Promise.all(
      (await readdir(join(dir, 'objects/pack')))
        .filter((f) => f.endsWith('.pack'))
        .map((f) => readFile(join(dir, 'objects/pack', f))),
    );
    for (const p of packs)
      expect(stored.some((s) => Buffer.compare(s, Buffer.from(p.pack)) === 0)).toBe(true);
  });

  it("onPack's work starts while the storage still writes the pack, not after", async () => {
    const [a] = take(1);
    const { storage, control } = controlledStorage();
    const own = testEngine({ storage, fetch });
    const order: string[] = [];
    try {
      const { repoId: id } = await own.engine.clone({ url: URL_BASE });
      const listened = gate();
      // A write completes once onPack has begun, or after a wait that shows it did not begin meanwhile.
      control.write = async (store) => {
        const writing = store();
        await Promise.race([listened.opened, new Promise((r) => setTimeout(r, 300))]);
        await writing;
        order.push('written');
      };
      await ensureBlobs(own.ctx, id, [a], {
        onPack: () => {
          order.push('onPack');
          listened.open();
        },
      });
      expect(order[0]).toBe('onPack');
      expect(order).toContain('written');
    } finally {
      control.write = undefined;
      await own.engine.close();
    }
  });

  it("the call's timeline measures each pack's indexing and storing", async () => {
    const measured: string[] = [];
    const steps = {
      step: <T>(_name: string, work: () => Promise<T>) => work(),
      measure: (name: string) => {
        measured.push(name);
      },
      clear: () => {},
    };
    await ensureBlobs(ctx, repoId, take(1), { steps });
    expect(measured).toEqual(expect.arrayContaining(['pack-index', 'pack-store']));
  });

  it('an answer of a pack already stored writes, counts and schedules nothing', async () => {
    const merging = () => ctx.maintenance.running.has(repoId) || ctx.maintenance.scheduled.size > 0;
    await maintenanceIdle(ctx, repoId);
    const [a, b] = take(2);
    await ensureBlobs(ctx, repoId, [a], { deferMaintenance: true });
    const before = await snapshot();
    const recordBefore = await ctx.store.registry.get(repoId);
    // git pack-objects makes the same pack of the same blob: its checksum is one the repo holds.
    answerBlobs = () => packAnswer([a]);
    try {
      const err = await failure(ensureBlobs(ctx, repoId, [b]));
      expect(err).toMatchObject({ code: 'MISSING_OBJECT', oid: b, notOnServer: true });
      expect(merging()).toBe(false);
      expect((await ctx.store.registry.get(repoId))?.bytesFetched).toBe(recordBefore?.bytesFetched);
      expect(await snapshot()).toEqual(before);
    } finally {
      answerBlobs = (w) => packAnswer(w);
    }
  });

  it('progress counts the objects of a pack once they are in, before the request ends', async () => {
    const wanted = take(2);
    // The rest of the answer comes once progress has counted every object; a progress that never does is
    // a stall, and the call fails.
    const stalling = {
      ...ctx,
      settings: {
        ...ctx.settings,
        retry: { attempts: 1, baseDelayMs: 1, maxDelayMs: 1, stallTimeoutMs: 2000 },
      },
    };
    const trailer = gate();
    answerBlobs = async (w, signal) => {
      const pack = await packOf(w);
      const band1 = (bytes: Uint8Array) => encodePktLine(concatBytes([Uint8Array.of(1), bytes]));
      // Every object in one pkt-line, the pack's checksum in the next: the objects are in, the request is
      // not over.
      return streamed(
        concatBytes([encodePktLine('packfile\n'), band1(pack.subarray(0, -20))]),
        trailer.opened.then(() => concatBytes([band1(pack.subarray(-20)), FLUSH_PKT])),
        signal,
      );
    };
    try {
      const events: BlobFetchProgress[] = [];
      await ensureBlobs(stalling, repoId, wanted, {
        onProgress: (p) => {
          events.push({ ...p });
          if (p.objects === wanted.length) trailer.open();
        },
      });
      const last = events.at(-1);
      expect(last).toMatchObject({ objects: 2, requests: 1 });
      expect(events.some((e) => e.objects === 2 && e.bytes > 0 && e.bytes < (last?.bytes ?? 0))).toBe(true);
    } finally {
      answerBlobs = (w) => packAnswer(w);
    }
  });

  it('holds the repo\'s lock as "fetching blobs", as other tabs hear it', async () => {
    await maintenanceIdle(ctx, repoId);
    const heard: string[] = [];
    const idle = gate();
    const channel = new BroadcastChannel(ctx.store.names.eventsChannel);
    channel.onmessage = (e: MessageEvent<RepoEvent>) => {
      if (e.data.repoId !== repoId) return;
      if (e.data.type === 'busy') heard.push(e.data.what);
      if (e.data.type === 'idle') idle.open();
    };
    try {
      await ensureBlobs(ctx, repoId, take(1), { deferMaintenance: true });
      await idle.opened;
      expect(heard).toEqual(['fetching blobs']);
    } finally {
      channel.close();
    }
  });
});

describe('ensureBlobs: what the server leaves out or refuses', () => {
  function withAnswer(answer: BlobAnswer) {
    answerBlobs = answer;
    return {
      restore: () => {
        answerBlobs = (w) => packAnswer(w);
      },
    };
  }

  it('a blob the answer lacks: MissingObjectError "not on the server" naming it; the others stored', async () => {
    const wanted = take(3);
    const s = withAnswer((w) => packAnswer(w.filter((o) => o !== wanted[1])));
    try {
      const events: BlobFetchProgress[] = [];
      const err = await failure(
        ensureBlobs(ctx, repoId, wanted, { onProgress: (p) => events.push({ ...p }) }),
      );
      expect(err).toBeInstanceOf(MissingObjectError);
      expect(err).toMatchObject({ oid: wanted[1], notOnServer: true, others: 0 });
      // Two objects arrived, but a settled request counts as done: progress ends at its end.
      expect(events.at(-1)).toMatchObject({ objects: 3, totalObjects: 3 });
      expect(err.message).toContain('the server answered without it');
      expect(await held(wanted)).toEqual([wanted[0], wanted[2]]);
    } finally {
      s.restore();
    }
  });

  it('an empty pack stores nothing; every blob is missing', async () => {
    const wanted = take(2);
    const s = withAnswer(() => packAnswer([]));
    try {
      const before = await snapshot();
      const learnt = { ...ctx.blobs.bytesByRepo.get(repoId) };
      const err = await failure(ensureBlobs(ctx, repoId, wanted));
      expect(err).toMatchObject({ oid: wanted[0], notOnServer: true, others: 1 });
      expect(await snapshot()).toEqual(before);
      // No blob came: the bytes of the answer teach nothing about the size of one.
      expect(ctx.blobs.bytesByRepo.get(repoId)).toEqual(learnt);
      // Nothing stored, so no pack maintenance is due.
      expect(ctx.maintenance.running.has(repoId) || ctx.maintenance.scheduled.size > 0).toBe(false);
    } finally {
      s.restore();
    }
  });

  it('ERR "not our ref": not on the server; another ERR: try again later', async () => {
    const [a] = take(1);
    const s = withAnswer(() => packAnswer([]));
    try {
      for (const message of ['upload-pack: not our ref 1234', 'object NOT FOUND', 'no such object']) {
        answerBlobs = () => ok(concatBytes([encodePktLine(`ERR ${message}\n`), FLUSH_PKT]));
        const err = await failure(ensureBlobs(ctx, repoId, [a]));
        expect(err).toBeInstanceOf(MissingObjectError);
        expect(err).toMatchObject({ oid: a, notOnServer: true, advice: undefined });
      }
      answerBlobs = () => ok(concatBytes([encodePktLine('ERR out of memory\n'), FLUSH_PKT]));
      const other = await failure(ensureBlobs(ctx, repoId, [a]));
      expect(other).toMatchObject({
        oid: a,
        notOnServer: false,
        advice: 'Try again later; if it keeps failing, the server has a problem.',
      });
      expect(other.message).toContain('out of memory');
    } finally {
      s.restore();
    }
  });

  it('an HTTP error: its message, no advice of the network, not asked again', async () => {
    const [a] = take(1);
    for (const [status, code, advice] of [
      [401, 'HTTP_UNAUTHORIZED', ''],
      [403, 'HTTP_FORBIDDEN', ''],
      [404, 'HTTP_NOT_FOUND', undefined],
      [418, 'HTTP_ERROR', ''],
    ] as const) {
      const s = withAnswer(() => new Response('no', { status }));
      try {
        asked.length = 0;
        const err = await failure(ensureBlobs(ctx, repoId, [a]));
        // An answer, not a transfer that broke off: the same request would get the same answer.
        expect(asked).toEqual([[a]]);
        expect(err).toBeInstanceOf(MissingObjectError);
        expect(err).toMatchObject({ oid: a, advice, notOnServer: false });
        expect((err as MissingObjectError & { cause: { code: string } }).cause.code).toBe(code);
      } finally {
        s.restore();
      }
    }
  });

  it('after a batch fails, the batches only this call wants are not sent; the error is the failure', async () => {
    const wanted = take(3);
    const s = withAnswer(() => {
      throw new TypeError('fetch failed');
    });
    try {
      asked.length = 0;
      const err = await failure(ensureBlobs(ctx, repoId, wanted, { batching: { size: 1, concurrency: 1 } }));
      // The transport sends it again once (the engine's retry policy: 2 attempts), then gives up.
      expect(asked).toEqual([[wanted[0]], [wanted[0]]]);
      expect(err).toBeInstanceOf(MissingObjectError);
      expect(err).toMatchObject({ oid: wanted[0], others: 2 });
      expect((err as Error & { cause: { code: string } }).cause.code).toBe('NETWORK_ERROR');
    } finally {
      s.restore();
    }
  });

  it("of two requests that fail, the first one's error is the call's", async () => {
    const wanted = take(2);
    const s = withAnswer((w) =>
      w[0] === wanted[0]
        ? ok(concatBytes([encodePktLine('ERR not our ref\n'), FLUSH_PKT]))
        : new Response('no', { status: 418 }),
    );
    try {
      const err = await failure(ensureBlobs(ctx, repoId, wanted, { batching: { size: 1, concurrency: 2 } }));
      expect(err).toMatchObject({ oid: wanted[0], notOnServer: true, others: 1 });
    } finally {
      s.restore();
    }
  });

  it('a request that failed for blobs another answer brought: the error names the blob still missing', async () => {
    const [a, b] = take(2);
    // The answer for b brings a instead; the request for a fails.
    const s = withAnswer((w) =>
      w[0] === a ? ok(concatBytes([encodePktLine('ERR out of memory\n'), FLUSH_PKT])) : packAnswer([a]),
    );
    try {
      const err = await failure(ensureBlobs(ctx, repoId, [a, b], { batching: { size: 1, concurrency: 2 } }));
      expect(err).toBeInstanceOf(MissingObjectError);
      expect(err).toMatchObject({ code: 'MISSING_OBJECT', oid: b, notOnServer: true, others: 0 });
      expect(err.message).toContain('the server answered without it');
      expect(err.message).toContain('removed from the remote repository');
      expect(await held([a, b])).toEqual([a]);
    } finally {
      s.restore();
    }
  });

  it('an answer without a pack, for blobs another answer brought: nothing missing, each request counted', async () => {
    const [a, b] = take(2);
    const s = withAnswer((w) =>
      w[0] === a ? packAnswer([a, b]) : ok(concatBytes([encodePktLine('packfile\n'), FLUSH_PKT])),
    );
    try {
      const result = await ensureBlobs(ctx, repoId, [a, b], { batching: { size: 1, concurrency: 2 } });
      expect(result).toMatchObject({ fetched: 2, requests: 2 });
      expect(result.objects.map((o) => o.oid).sort()).toEqual([a, b].sort());
      expect(await held([a, b])).toEqual([a, b]);
    } finally {
      s.restore();
    }
  });

  it('an answer with no pack: every blob is missing, none stored', async () => {
    const wanted = take(2);
    const s = withAnswer(() => ok(concatBytes([encodePktLine('packfile\n'), FLUSH_PKT])));
    try {
      const err = await failure(ensureBlobs(ctx, repoId, wanted));
      expect(err).toMatchObject({ oid: wanted[0], notOnServer: true, others: 1 });
      expect(await held(wanted)).toEqual([]);
    } finally {
      s.restore();
    }
  });

  it('an answer the transport sends again (503) shows its notice in progress, then clears it', async () => {
    const [a] = take(1);
    let n = 0;
    const s = withAnswer((w) => (n++ === 0 ? new Response('busy', { status: 503 }) : packAnswer(w)));
    try {
      const events: BlobFetchProgress[] = [];
      await ensureBlobs(ctx, repoId, [a], { onProgress: (p) => events.push({ ...p }) });
      expect(events.find((e) => e.retrying)?.retrying).toMatch(/HTTP 503.*retrying in/);
      expect(events.at(-1)?.retrying).toBeUndefined();
      expect(await held([a])).toEqual([a]);
    } finally {
      s.restore();
    }
  });

  it('an answer that stalls is asked again; stalled every time, the error says so and gives no advice', async () => {
    const wanted = take(2);
    const stalling = {
      ...ctx,
      settings: {
        ...ctx.settings,
        retry: { attempts: 2, baseDelayMs: 1, maxDelayMs: 1, stallTimeoutMs: 100 },
      },
    };
    let stalls = 1;
    const never = gate<Uint8Array | null>();
    const s = withAnswer(async (w, signal) => {
      const bytes = packfileSection(await packOf(w));
      return stalls-- > 0 ? streamed(bytes.subarray(0, 40), never.opened, signal) : ok(bytes);
    });
    try {
      asked.length = 0;
      await ensureBlobs(stalling, repoId, [wanted[0]]);
      expect(asked).toEqual([[wanted[0]], [wanted[0]]]);
      stalls = 2;
      const err = await failure(ensureBlobs(stalling, repoId, [wanted[1]]));
      expect(err).toBeInstanceOf(MissingObjectError);
      expect(err).toMatchObject({ oid: wanted[1], advice: '' });
      expect((err as Error & { cause: { code: string } }).cause.code).toBe('TIMEOUT');
    } finally {
      s.restore();
    }
  });

  it('a request cut short asks again only for blobs not stored since', async () => {
    const wanted = take(2);
    const other = gate();
    let packed = false;
    const notices: (string | undefined)[] = [];
    // The second request's pack brings the first's blob too; the first's answer breaks off after it is stored.
    const s = withAnswer(async (w, signal) => {
      if (w[0] === wanted[1]) return packAnswer(wanted);
      const bytes = packfileSection(await packOf(w));
      return streamed(
        bytes.subarray(0, 40),
        other.opened.then(() => null),
        signal,
      );
    });
    try {
      asked.length = 0;
      const result = await ensureBlobs(ctx, repoId, wanted, {
        batching: { size: 1, concurrency: 2 },
        // The report after onPack's is the one of the second request settled, its pack stored.
        onPack: () => {
          packed = true;
        },
        onProgress: (p) => {
          notices.push(p.retrying);
          if (packed) other.open();
        },
      });
      expect(asked).toEqual([[wanted[0]], [wanted[1]]]);
      // Nothing is left to ask for, so nothing is announced either.
      expect(notices.filter(Boolean)).toEqual([]);
      expect(result).toMatchObject({ fetched: 2, requests: 1 });
      expect(await held(wanted)).toEqual(wanted);
    } finally {
      s.restore();
    }
  });

  it('a damaged pack: cut short or damaged, try again', async () => {
    const [a] = take(1);
    const s = withAnswer(async (w) => {
      const pack = await packOf(w);
      pack[20] ^= 0xff;
      return ok(packfileSection(pack));
    });
    try {
      const err = await failure(ensureBlobs(ctx, repoId, [a]));
      expect(err).toBeInstanceOf(MissingObjectError);
      expect(err.message).toContain("the server's reply was cut short or damaged");
      expect(err).toMatchObject({
        oid: a,
        advice: 'Try again; if it keeps failing, the server or a proxy in front of it sends broken data.',
      });
      expect(await held([a])).toEqual([]);
    } finally {
      s.restore();
    }
  });

  /** Ways an answer breaks off after it began: each is asked again (brokeMidTransfer). */
  const cuts: [string, (bytes: Uint8Array, signal?: AbortSignal) => Response][] = [
    ['in the middle of a pkt-line', (bytes) => ok(bytes.subarray(0, bytes.length >> 1))],
    ['before the closing flush', (bytes) => ok(bytes.subarray(0, bytes.length - 4))],
    [
      'by a connection that breaks',
      (bytes) =>
        ok(
          new ReadableStream<Uint8Array>({
            start(c) {
              c.enqueue(bytes.subarray(0, 40));
            },
            pull(c) {
              c.error(new TypeError('terminated'));
            },
          }),
        ),
    ],
  ];
  for (const [how, cut] of cuts) {
    it(`a transfer cut short ${how} is asked again for the blobs still missing; progress says so`, async () => {
      const wanted = take(2);
      let n = 0;
      const s = withAnswer(async (w) => {
        const bytes = packfileSection(await packOf(w));
        return n++ === 0 ? cut(bytes) : ok(bytes);
      });
      try {
        asked.length = 0;
        const events: BlobFetchProgress[] = [];
        const result = await ensureBlobs(ctx, repoId, wanted, { onProgress: (p) => events.push({ ...p }) });
        expect(asked).toEqual([wanted, wanted]);
        // The call counts the request whose pack it stored; progress, every request sent.
        expect(result.requests).toBe(1);
        expect(result.fetched).toBe(2);
        expect(events.at(-1)?.requests).toBe(2);
        const notice = events.find((e) => e.retrying)?.retrying;
        expect(notice).toMatch(
          /^The transfer broke off \(The [^()]*[^ ()]\); asking again for the 2 blobs still missing in 0 s… \(attempt 2 of 2\)$/,
        );
        expect(events.at(-1)?.retrying).toBeUndefined();
        // Cleared once the wait is over, before the request is sent again.
        expect(events.find((e) => e.requests === 2)?.retrying).toBeUndefined();
        expect(await held(wanted)).toEqual(wanted);
      } finally {
        s.restore();
      }
    });
  }

  it('a request cancelled while it waits to be sent again: its notice leaves progress', async () => {
    const wanted = take(2);
    // A wait long enough to cancel in.
    const slow = {
      ...ctx,
      settings: { ...ctx.settings, retry: { attempts: 2, baseDelayMs: 60_000, maxDelayMs: 60_000 } },
    };
    const s = withAnswer(async (w) => {
      const bytes = packfileSection(await packOf(w));
      return ok(bytes.subarray(0, bytes.length >> 1));
    });
    try {
      const events: BlobFetchProgress[] = [];
      const waiting = gate();
      const call = ensureBlobs(slow, repoId, wanted, {
        onProgress: (p) => {
          events.push({ ...p });
          if (p.retrying) waiting.open();
        },
      });
      await waiting.opened;
      expect(ctx.blobs.bytesByRepo.has(repoId)).toBe(true);
      await cancelBlobFetches(ctx, repoId);
      // What the repo's fetches taught is forgotten with them.
      expect(ctx.blobs.bytesByRepo.has(repoId)).toBe(false);
      const err = await failure(call);
      expect(err.message).toContain('the request fetching it was cancelled');
      expect(events.at(-2)?.retrying).toContain('asking again for the 2 blobs still missing in');
      expect(events.at(-1)).toEqual({
        phase: 'fetching-blobs',
        objects: 2,
        totalObjects: 2,
        bytes: events.at(-2)?.bytes,
        requests: 1,
      });
    } finally {
      s.restore();
    }
  });

  it('a transfer cut short on every attempt fails after the last; one blob is "blob"', async () => {
    const [a] = take(1);
    const s = withAnswer(async (w) => ok(packfileSection(await packOf(w)).subarray(0, 30)));
    try {
      asked.length = 0;
      const events: BlobFetchProgress[] = [];
      const err = await failure(ensureBlobs(ctx, repoId, [a], { onProgress: (p) => events.push({ ...p }) }));
      expect(asked).toEqual([[a], [a]]);
      expect(err).toBeInstanceOf(MissingObjectError);
      expect(err.message).toContain("the server's reply was cut short or damaged");
      expect(events.find((e) => e.retrying)?.retrying).toContain(
        'asking again for the 1 blob still missing in',
      );
    } finally {
      s.restore();
    }
  });

  it("a limit of the engine's is its own error, naming the setting", async () => {
    const [a] = take(1);
    const limited = testEngine({ storage: memoryStorage(), fetch, limits: { maxProgressLineBytes: 100 } });
    const s = withAnswer(async (w) => {
      const opening = encodePktLine('packfile\n');
      const pack = packfileSection(await packOf(w));
      const dots = encodePktLine(concatBytes([Uint8Array.of(2), new TextEncoder().encode('.'.repeat(500))]));
      return ok(concatBytes([opening, dots, pack.subarray(opening.length)]));
    });
    try {
      const { repoId: id } = await limited.engine.clone({ url: URL_BASE });
      const err = await failure(ensureBlobs(limited.ctx, id, [a]));
      expect(err).not.toBeInstanceOf(MissingObjectError);
      expect(err).toMatchObject({ code: 'LIMIT_EXCEEDED', limit: 'maxProgressLineBytes' });
    } finally {
      s.restore();
      await limited.engine.close();
    }
  });

  it("a limit of the engine's on the pack is its own error too, naming the setting", async () => {
    const [a] = take(1);
    const small = {
      ...ctx,
      settings: { ...ctx.settings, limits: { ...ctx.settings.limits, maxObjectSize: 4 } },
    };
    const err = await failure(ensureBlobs(small, repoId, [a]));
    expect(err).not.toBeInstanceOf(MissingObjectError);
    expect(err).toMatchObject({ code: 'PACK_OBJECT_TOO_LARGE', limit: 'maxObjectSize' });
    expect(err.message).toContain('(maxObjectSize)');
    expect(await held([a])).toEqual([]);
  });

  it('a pack the storage refuses: its own error, not one of the network or the server; nothing stored', async () => {
    const [a] = take(1);
    const { storage, control } = controlledStorage();
    const own = testEngine({ storage, fetch });
    try {
      const { repoId: id } = await own.engine.clone({ url: URL_BASE });
      control.write = () =>
        Promise.reject(new DOMException('The quota has been exceeded.', 'QuotaExceededError'));
      const err = await failure(ensureBlobs(own.ctx, id, [a]));
      control.write = undefined;
      expect(err).not.toBeInstanceOf(MissingObjectError);
      expect(err).toMatchObject({ name: 'StoreError', code: 'STORAGE_FULL' });
      await maintenanceIdle(own.ctx, id);
      const dir = join(scratch, `export-${exports++}`);
      await exportDir(own.ctx.store.repoFs.open(id), GITDIR, dir);
      const all = await offlineGit(dir, ['cat-file', '--batch-all-objects', '--batch-check=%(objectname)']);
      expect(all).not.toContain(a);
    } finally {
      control.write = undefined;
      await own.engine.close();
    }
  });

  it('offline: nothing asked, the error says so', async () => {
    const [a] = take(1);
    const nav = globalThis.navigator as { onLine?: boolean };
    const was = Object.getOwnPropertyDescriptor(nav, 'onLine');
    Object.defineProperty(nav, 'onLine', { value: false, configurable: true });
    try {
      asked.length = 0;
      const err = await failure(ensureBlobs(ctx, repoId, [a]));
      expect(asked).toEqual([]);
      expect(err).toBeInstanceOf(MissingObjectError);
      expect(err).toMatchObject({ code: 'OFFLINE', oid: a, advice: '' });
    } finally {
      if (was) Object.defineProperty(nav, 'onLine', was);
      else delete nav.onLine;
    }
  });
});

describe('ensureBlobs: cancelled, and shared between calls', () => {
  it('a signal fired before: ABORTED, nothing asked, even for blobs stored', async () => {
    asked.length = 0;
    const err = await failure(ensureBlobs(ctx, repoId, take(1), { signal: AbortSignal.abort() }));
    expect(err.code).toBe('ABORTED');
    expect(asked).toEqual([]);
    const stored = take(1);
    await ensureBlobs(ctx, repoId, stored);
    expect((await failure(ensureBlobs(ctx, repoId, stored, { signal: AbortSignal.abort() }))).code).toBe(
      'ABORTED',
    );
  });

  it('a signal fired while the call looks at the store: ABORTED, nothing asked', async () => {
    asked.length = 0;
    const controller = new AbortController();
    const call = ensureBlobs(ctx, repoId, take(1), { signal: controller.signal });
    controller.abort();
    expect((await failure(call)).code).toBe('ABORTED');
    expect(asked).toEqual([]);
  });

  it('aborted while the answer arrives: ABORTED, and nothing of it stored', async () => {
    const wanted = take(3);
    const before = await snapshot();
    const never = gate<Uint8Array | null>();
    answerBlobs = async (w, signal) => {
      const bytes = packfileSection(await packOf(w));
      return streamed(bytes.subarray(0, 40), never.opened, signal);
    };
    try {
      const controller = new AbortController();
      const err = await failure(
        ensureBlobs(ctx, repoId, wanted, {
          signal: controller.signal,
          onProgress: (p) => {
            if (p.requests > 0) controller.abort();
          },
        }),
      );
      expect(err.code).toBe('ABORTED');
      expect(await snapshot()).toEqual(before);
      expect(ctx.blobs.inFlightFor(repoId).size).toBe(0);
    } finally {
      answerBlobs = (w) => packAnswer(w);
    }
  });

  it('two calls wanting the same blobs share one request; one leaving does not cancel it for the other', async () => {
    const wanted = take(3);
    const release = gate<null>();
    const started = gate();
    answerBlobs = async (w, signal) => {
      const bytes = packfileSection(await packOf(w));
      started.open();
      return streamed(bytes, release.opened, signal);
    };
    try {
      asked.length = 0;
      const controller = new AbortController();
      const first = ensureBlobs(ctx, repoId, wanted, { signal: controller.signal });
      await started.opened;
      const events: BlobFetchProgress[] = [];
      const joined = [gate(), gate()];
      const second = ensureBlobs(ctx, repoId, [...wanted, ...take(1)], {
        onProgress: (p) => {
          events.push({ ...p });
          joined[0].open();
        },
      });
      const third = ensureBlobs(ctx, repoId, wanted, { onProgress: () => joined[1].open() });
      await Promise.all(joined.map((j) => j.opened));
      controller.abort();
      expect((await failure(first)).code).toBe('ABORTED');
      release.open(null);
      const [r2, r3] = await Promise.all([second, third]);
      expect(asked).toHaveLength(2);
      expect(asked[0]).toEqual(wanted);
      // Shared blobs count in progress, not in the call's own fetched.
      expect(r2.fetched).toBe(1);
      expect(r3).toEqual({ fetched: 0, requests: 0, bytes: 0, objects: [] });
      expect(events.at(-1)).toMatchObject({ objects: 4, totalObjects: 4, requests: 2 });
      expect(await held(wanted)).toEqual(wanted);
    } finally {
      answerBlobs = (w) => packAnswer(w);
    }
  });

  it('a call aborted: its queued requests are not sent, and its listeners hear nothing more', async () => {
    const wanted = take(3);
    const release = gate();
    const started = gate();
    answerBlobs = async (w, signal) => {
      const bytes = packfileSection(await packOf(w));
      started.open();
      return streamed(
        bytes.subarray(0, 40),
        release.opened.then(() => bytes.subarray(40)),
        signal,
      );
    };
    try {
      asked.length = 0;
      const controller = new AbortController();
      const heard: string[] = [];
      const first = ensureBlobs(ctx, repoId, wanted, {
        signal: controller.signal,
        batching: { size: 1, concurrency: 1 },
        onProgress: () => heard.push('progress'),
        onPack: () => {
          heard.push('pack');
        },
        onObject: () => heard.push('object'),
      });
      await started.opened;
      // Another call joins the request in flight, which goes on for it.
      const joined = gate();
      const other = ensureBlobs(ctx, repoId, [wanted[0]], { onProgress: () => joined.open() });
      await joined.opened;
      controller.abort();
      expect((await failure(first)).code).toBe('ABORTED');
      heard.length = 0;
      release.open();
      expect((await other).fetched).toBe(0);
      expect(heard).toEqual([]);
      expect(asked).toEqual([[wanted[0]]]);
      expect(await held(wanted)).toEqual([wanted[0]]);
    } finally {
      answerBlobs = (w) => packAnswer(w);
    }
  });

  it('after a request fails, one that another call waits for is still sent', async () => {
    const wanted = take(3);
    const release = gate();
    const started = gate();
    answerBlobs = async (w) => {
      if (w[0] !== wanted[0]) return packAnswer(w);
      started.open();
      await release.opened;
      throw new TypeError('fetch failed');
    };
    try {
      asked.length = 0;
      const first = ensureBlobs(ctx, repoId, wanted, { batching: { size: 1, concurrency: 1 } });
      await started.opened;
      const joined = gate();
      const other = ensureBlobs(ctx, repoId, [wanted[2]], { onProgress: () => joined.open() });
      await joined.opened;
      release.open();
      expect(await failure(first)).toMatchObject({ oid: wanted[0], others: 1 });
      await other;
      // The first twice (the transport's retry), the second given up, the third sent for the other call.
      expect(asked).toEqual([[wanted[0]], [wanted[0]], [wanted[2]]]);
      expect(await held(wanted)).toEqual([wanted[2]]);
    } finally {
      answerBlobs = (w) => packAnswer(w);
    }
  });

  it('a cancelled request that ends late leaves the newer request for its blob to later calls', async () => {
    const [blob] = take(1);
    const first = gate<Response>();
    const second = gate<Response>();
    const firstAsked = gate();
    const secondAsked = gate();
    answerBlobs = (w) => {
      if (asked.length === 1) {
        firstAsked.open();
        return first.opened;
      }
      if (asked.length === 2) {
        secondAsked.open();
        return second.opened;
      }
      return packAnswer(w);
    };
    try {
      asked.length = 0;
      const controller = new AbortController();
      const cancelled = ensureBlobs(ctx, repoId, [blob], { signal: controller.signal });
      await firstAsked.opened;
      // Cancelled, but its answer not in yet: a new call sends its own request.
      controller.abort();
      const newer = ensureBlobs(ctx, repoId, [blob]);
      await secondAsked.opened;
      first.open(await packAnswer([blob]));
      expect((await failure(cancelled)).code).toBe('ABORTED');
      // The cancelled request's end does not unregister the newer one: a third call joins it.
      const joining = ensureBlobs(ctx, repoId, [blob]);
      second.open(await packAnswer([blob]));
      expect((await newer).fetched).toBe(1);
      expect((await joining).fetched).toBe(0);
      expect(asked).toEqual([[blob], [blob]]);
    } finally {
      answerBlobs = (w) => packAnswer(w);
    }
  });

  it("leaves no listener on the caller's signal", async () => {
    const { signal } = new AbortController();
    const listeners = new Set<unknown>();
    const add = signal.addEventListener.bind(signal);
    const remove = signal.removeEventListener.bind(signal);
    signal.addEventListener = (...args: Parameters<AbortSignal['addEventListener']>) => {
      listeners.add(args[1]);
      add(...args);
    };
    signal.removeEventListener = (...args: Parameters<AbortSignal['removeEventListener']>) => {
      listeners.delete(args[1]);
      remove(...args);
    };
    await ensureBlobs(ctx, repoId, take(1), { signal });
    expect(listeners.size).toBe(0);
    await failure(ensureBlobs(ctx, repoId, ['0'.repeat(40)], { signal }));
    expect(listeners.size).toBe(0);
  });

  it('aborted while its pack is stored: ABORTED, and the pack stored whole', async () => {
    const wanted = take(2);
    const controller = new AbortController();
    const err = await failure(
      ensureBlobs(ctx, repoId, wanted, {
        signal: controller.signal,
        onPack: () => controller.abort(),
      }),
    );
    expect(err.code).toBe('ABORTED');
    expect((await ctx.store.packs.for(repoId)).missing(wanted)).toEqual([]);
    expect(await held(wanted)).toEqual(wanted);
  });

  it('aborted while its pack is handed out: returns only once that batch has stopped', async () => {
    const wanted = take(1);
    const controller = new AbortController();
    const inPack = gate();
    const hold = gate();
    let returned = false;
    const failed = failure(
      ensureBlobs(ctx, repoId, wanted, {
        signal: controller.signal,
        onPack: () => {
          controller.abort();
          inPack.open();
          return hold.opened;
        },
      }),
    ).finally(() => {
      returned = true;
    });
    await inPack.opened;
    // Every microtask has run: an abort that did not wait for the batch would have returned by now.
    await new Promise((resolve) => setImmediate(resolve));
    expect(returned).toBe(false);
    hold.open();
    expect((await failed).code).toBe('ABORTED');
    expect((await ctx.store.packs.for(repoId)).missing(wanted)).toEqual([]);
  });

  it('cancelBlobFetches resolves only once the fetches it cancelled have stopped', async () => {
    const wanted = take(1);
    const inPack = gate();
    const hold = gate();
    let cancelled = false;
    let cancelling: Promise<void> | undefined;
    const call = ensureBlobs(ctx, repoId, wanted, {
      onPack: () => {
        cancelling = cancelBlobFetches(ctx, repoId).then(() => {
          cancelled = true;
        });
        inPack.open();
        return hold.opened;
      },
    });
    await inPack.opened;
    await new Promise((resolve) => setImmediate(resolve));
    expect(cancelled).toBe(false);
    hold.open();
    await cancelling;
    await call;
    expect((await ctx.store.packs.for(repoId)).missing(wanted)).toEqual([]);
  });

  it('cancelBlobFetches while a pack is stored: the pack stored whole; with nothing in flight it resolves', async () => {
    const wanted = take(2);
    let cancelled: Promise<string[]> | undefined;
    await ensureBlobs(ctx, repoId, wanted, {
      onPack: () => {
        cancelled = cancelBlobFetches(ctx, repoId).then(async () =>
          (await ctx.store.packs.for(repoId)).missing(wanted),
        );
      },
    });
    expect(await cancelled).toEqual([]);
    await cancelBlobFetches(ctx, 'no-such-repo');
  });

  it('cancelBlobFetches stops every fetch of the repo: its waiting call fails, nothing written', async () => {
    const wanted = take(2);
    const before = await snapshot();
    const started = gate();
    const never = gate<Uint8Array | null>();
    answerBlobs = async (w, signal) => {
      const bytes = packfileSection(await packOf(w));
      started.open();
      return streamed(bytes.subarray(0, 40), never.opened, signal);
    };
    try {
      // The requests sent, as the call's timeline records them (its listeners are gone once it failed).
      const sent: string[] = [];
      const steps = {
        step: <T>(name: string, work: () => Promise<T>) => {
          if (name === 'fetch-response') sent.push(name);
          return work();
        },
        measure: () => {},
        clear: () => {},
      };
      const call = ensureBlobs(ctx, repoId, wanted, { batching: { size: 1, concurrency: 1 }, steps });
      await started.opened;
      await cancelBlobFetches(ctx, repoId);
      // The call was not cancelled itself: its blobs are missing, because their requests were.
      const err = await failure(call);
      expect(err).toBeInstanceOf(MissingObjectError);
      expect(err).toMatchObject({ oid: wanted[0], others: 1 });
      expect(err.message).toContain('the request fetching it was cancelled');
      expect((err as Error & { cause: { code: string } }).cause.code).toBe('ABORTED');
      expect(await snapshot()).toEqual(before);
      // The queued request, cancelled, is not sent when the first ends: the queue skips it.
      expect(sent).toEqual(['fetch-response']);
      expect(ctx.blobs.inFlightByRepo.has(repoId)).toBe(false);
    } finally {
      answerBlobs = (w) => packAnswer(w);
    }
  });

  it('a request cancelled and another that failed: the error is the failure, not the cancel', async () => {
    const [mine, theirs] = take(2);
    const theirsAsked = gate();
    const mineAsked = gate();
    const fail = gate();
    const never = gate<Uint8Array | null>();
    answerBlobs = async (w, signal) => {
      if (w[0] === theirs) {
        theirsAsked.open();
        await fail.opened;
        return new Response('no', { status: 418 });
      }
      const bytes = packfileSection(await packOf(w));
      mineAsked.open();
      return streamed(bytes.subarray(0, 40), never.opened, signal);
    };
    try {
      const other = ensureBlobs(ctx, repoId, [theirs]);
      await theirsAsked.opened;
      // Its own request first (cancelled below), then the one it joined (failed).
      const call = ensureBlobs(ctx, repoId, [mine, theirs]);
      await mineAsked.opened;
      fail.open();
      expect(await failure(other)).toMatchObject({ code: 'MISSING_OBJECT', oid: theirs });
      await cancelBlobFetches(ctx, repoId);
      const err = await failure(call);
      expect(err).toBeInstanceOf(MissingObjectError);
      expect(err).toMatchObject({ code: 'MISSING_OBJECT', oid: theirs, others: 1, advice: '' });
      expect(err.message).toContain('HTTP 418');
      expect(err.message).not.toContain('cancelled');
    } finally {
      answerBlobs = (w) => packAnswer(w);
    }
  });

  it('cancelled once its pack is indexed: nothing of it stored', async () => {
    const wanted = take(2);
    const before = await snapshot();
    const steps = {
      step: <T>(_name: string, work: () => Promise<T>) => work(),
      measure: (name: string) => {
        if (name === 'pack-index') void cancelBlobFetches(ctx, repoId);
      },
      clear: () => {},
    };
    const err = await failure(ensureBlobs(ctx, repoId, wanted, { steps }));
    expect(err).toMatchObject({ code: 'MISSING_OBJECT', oid: wanted[0], others: 1 });
    expect(err.message).toContain('the request fetching it was cancelled');
    expect(await snapshot()).toEqual(before);
  });
});
