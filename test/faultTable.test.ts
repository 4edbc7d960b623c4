// The fault table: every fault the relay can make, against every operation that talks to the server. Each
// cell ends either in success (after a retry where the fault is transient) or in a typed error whose message
// says what to do; after each, the repo holds all it held before and nothing half-written, an export passes
// `git fsck --connectivity-only`, and the same operation without the fault succeeds. The last run's table is
// written to test-results/fault-table.md (the README carries a copy).

import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { maintenanceIdle } from '../workers/ops/maintenance/packMaintenance.ts';
import { checkedExport, exportRepo } from './support/cloneOracle.ts';
import { testEngine } from './support/engine.ts';
import { git as gitCli } from './support/git.ts';
import { type Fault, type Relay, startRelay } from './support/relay.ts';
import { snapshotGitDir } from './support/repoChecks.ts';
import { serveScratchRepo } from './support/scratchServer.ts';
import { useTmpDir } from './support/tmpDir.ts';

/** Short waits, so the table runs in seconds: backoff 20 ms doubling, Retry-After capped at 1.5 s. */
const { engine, ctx } = testEngine({ retry: { baseDelayMs: 20, maxDelayMs: 1_500, stallTimeoutMs: 300 } });

const tmp = useTmpDir('faults');

/** One row: the fault, how often it strikes, and what each operation must end in. */
interface Row {
  name: string;
  fault: Fault;
  /** Faulted responses before the relay lets requests through (the retry then succeeds). */
  times: number;
  /** 'ok' (success, after a retry when `retried`), or the error's code and, for lazy fetches, its cause's. */
  /** fetch ends as clone does (its pack is not retried either) unless it says otherwise. */
  expect: Record<Exclude<Op, 'fetch' | 'push'>, Outcome> & { fetch?: Outcome; push: Outcome | NotApplicable };
}
type Op = 'clone' | 'checkout' | 'readFile' | 'fetch' | 'push';
/** A fault of the pack in an upload-pack answer: a push's answer (report-status) carries none. */
type NotApplicable = 'n/a';
type Outcome = { ok: true; retried: boolean } | { code: string; cause?: string };

const ok = (retried = true): Outcome => ({ ok: true, retried });
const missing = (cause: string): Outcome => ({ code: 'MISSING_OBJECT', cause });
const all = (o: Outcome, push: Outcome | NotApplicable): Row['expect'] => ({
  clone: o,
  checkout: o,
  readFile: o,
  push,
});
/*
 * push: receive-pack's POST is never sent twice (a second one could apply the push twice, or over a change
 * made meanwhile), so every fault of it is a typed error. A fault the relay answers itself (a status, an
 * HTML page, a reset) never reached the server; one that breaks the server's answer (a cut, a stall, a bad
 * pkt-line) came after the server took the push, and the message says so. Either way the next push
 * succeeds: it sends the commit, or finds the server already has it.
 */

const ROWS: Row[] = [
  ...[0.1, 0.5, 0.9].map(
    (at): Row => ({
      name: `cut at ${at * 100} % of the pack response`,
      fault: { type: 'cut', at },
      times: 1,
      // A clone's pack is never retried (nothing of it is stored to resume from); a lazy batch asks again
      // for the blobs still missing.
      expect: {
        clone: { code: 'NETWORK_ERROR' },
        checkout: ok(),
        readFile: ok(),
        push: { code: 'PUSH_OUTCOME_UNKNOWN' },
      },
    }),
  ),
  {
    name: 'HTTP 500, once',
    fault: { type: 'status', status: 500 },
    times: 1,
    expect: all(ok(), { code: 'HTTP_ERROR' }),
  },
  {
    name: 'HTTP 502, once',
    fault: { type: 'status', status: 502 },
    times: 1,
    expect: all(ok(), { code: 'HTTP_ERROR' }),
  },
  {
    name: 'HTTP 503, every time',
    fault: { type: 'status', status: 503 },
    times: Number.POSITIVE_INFINITY,
    expect: {
      clone: { code: 'HTTP_ERROR' },
      checkout: missing('HTTP_ERROR'),
      readFile: missing('HTTP_ERROR'),
      push: { code: 'HTTP_ERROR' },
    },
  },
  {
    name: 'HTTP 401',
    fault: { type: 'status', status: 401 },
    times: 1,
    expect: {
      clone: { code: 'HTTP_UNAUTHORIZED' },
      // For a stored repo the API asks for the token (the UI answers with a prompt, then calls again).
      checkout: { code: 'AUTH_REQUIRED' },
      readFile: { code: 'AUTH_REQUIRED' },
      fetch: { code: 'AUTH_REQUIRED' },
      push: { code: 'AUTH_REQUIRED' },
    },
  },
  {
    name: 'HTTP 429, Retry-After: 1, once',
    fault: { type: 'status', status: 429, retryAfter: 1 },
    times: 1,
    expect: all(ok(), { code: 'HTTP_ERROR' }),
  },
  {
    name: 'drip: 8 slices, 25 ms apart',
    fault: { type: 'drip', ticks: 8, intervalMs: 25 },
    times: 1,
    expect: all(ok(false), ok(false)),
  },
  {
    name: 'drip slower than the stall timeout, once',
    fault: { type: 'drip', ticks: 4, intervalMs: 1_000 },
    times: 1,
    expect: {
      clone: { code: 'TIMEOUT' },
      checkout: ok(),
      readFile: ok(),
      push: { code: 'PUSH_OUTCOME_UNKNOWN' },
    },
  },
  {
    name: 'one byte of the pack flipped',
    fault: { type: 'flip-byte', seed: 7 },
    times: 1,
    expect: {
      clone: { code: 'PACK_CORRUPT' },
      checkout: missing('PACK_CORRUPT'),
      readFile: missing('PACK_CORRUPT'),
      push: 'n/a',
    },
  },
  {
    name: 'pack trailer truncated',
    fault: { type: 'truncate-trailer', keep: 8 },
    times: 1,
    expect: {
      clone: { code: 'PACK_TRUNCATED' },
      checkout: missing('PACK_TRUNCATED'),
      readFile: missing('PACK_TRUNCATED'),
      push: 'n/a',
    },
  },
  {
    name: 'malformed pkt-line length',
    fault: { type: 'bad-pkt-length' },
    times: 1,
    expect: {
      clone: { code: 'PKT_LINE_INVALID' },
      checkout: missing('PKT_LINE_INVALID'),
      readFile: missing('PKT_LINE_INVALID'),
      push: { code: 'PUSH_OUTCOME_UNKNOWN' },
    },
  },
  {
    name: 'side-band error',
    fault: { type: 'sideband-error', text: 'pack-objects died of signal 9' },
    times: 1,
    expect: {
      clone: { code: 'REMOTE_ERROR' },
      checkout: missing('REMOTE_ERROR'),
      readFile: missing('REMOTE_ERROR'),
      // The relay puts it after the pack's first packet; a push's report fits in one, so it would not strike.
      push: 'n/a',
    },
  },
  {
    name: 'HTML page instead of git',
    fault: { type: 'html' },
    times: 1,
    expect: {
      clone: { code: 'HTTP_ERROR' },
      checkout: missing('HTTP_ERROR'),
      readFile: missing('HTTP_ERROR'),
      push: { code: 'HTTP_ERROR' },
    },
  },
  {
    name: 'connection reset before any byte, once',
    fault: { type: 'reset' },
    times: 1,
    expect: all(ok(), { code: 'NETWORK_ERROR' }),
  },
];

const OPS: Op[] = ['clone', 'checkout', 'readFile', 'fetch', 'push'];
const applies = (row: Row, op: Op) => op !== 'push' || row.expect.push !== 'n/a';
/** Cell text for the report, by row name then operation. */
const table = new Map<string, Partial<Record<Op, string>>>();

let server: Awaited<ReturnType<typeof serveScratchRepo>>;
let relay: Relay;

beforeAll(async () => {
  // One folder per checkout cell, one file per readFile cell: each cell's blobs are still missing when it runs.
  server = await serveScratchRepo(
    join(tmp(), 'served'),
    [],
    async (run) => {
      const { writeFile: write, mkdir: md } = await import('node:fs/promises');
      const work = (await run(['rev-parse', '--show-toplevel'])).trim();
      for (let i = 0; i < ROWS.length; i++) {
        await md(join(work, 'c', String(i)), { recursive: true });
        await md(join(work, 'r'), { recursive: true });
        const text = (tag: string) =>
          `${tag} ${i}\n${'the quick brown fox jumps over the lazy dog '.repeat(40 + i)}\n`;
        await write(join(work, 'c', String(i), 'a.txt'), text('a'));
        await write(join(work, 'c', String(i), 'b.txt'), text('b'));
        await write(join(work, 'r', `${i}.txt`), text('r'));
      }
      await run(['add', '-A']);
      await run(['commit', '-q', '-m', 'fault table fixture']);
    },
    { acceptPushes: true },
  );
  relay = await startRelay(server.url, { kind: 'fault', fault: { type: 'reset' }, on: 'fetch', times: 0 });
});

afterAll(async () => {
  for (const r of await engine.listRepos()) await engine.repo(r.id).delete();
  await relay?.close();
  await server?.close();
  const lines = [
    `| fault | ${OPS.join(' | ')} |`,
    `| --- | ${OPS.map(() => '---').join(' | ')} |`,
    ...ROWS.map(
      (r) =>
        `| ${r.name} | ${OPS.map((op) => (applies(r, op) ? (table.get(r.name)?.[op] ?? 'not run') : 'n/a')).join(' | ')} |`,
    ),
  ];
  const report = `${lines.join('\n')}\n`;
  // A run of some rows only (-t) prints its part and keeps the last full table.
  const complete = ROWS.every((r) => OPS.every((op) => !applies(r, op) || table.get(r.name)?.[op]));
  console.log(`\nThe fault table${complete ? ' (test-results/fault-table.md)' : ', in part'}:\n\n${report}`);
  if (!complete) return;
  await mkdir('test-results', { recursive: true });
  await writeFile('test-results/fault-table.md', report);
});

const passThrough = () => relay.setMode({ kind: 'fault', fault: { type: 'reset' }, on: 'fetch', times: 0 });
const arm = (row: Row, op: Op) =>
  relay.setMode({ kind: 'fault', fault: row.fault, on: op === 'push' ? 'push' : 'fetch', times: row.times });

/** Runs one cell; records and returns what it ended in. */
async function runCell(
  row: Row,
  op: Op,
  call: (onRetry: (text: string) => void) => Promise<unknown>,
): Promise<CellOutcome> {
  let retries = 0;
  const notices: string[] = [];
  arm(row, op);
  let error: (Error & { code: string; cause?: unknown }) | undefined;
  try {
    await call((text) => {
      // Progress repeats a waiting notice with every report; count each notice once.
      if (notices.at(-1) !== text) {
        notices.push(text);
        retries++;
      }
    });
  } catch (err) {
    error = err as Error & { code: string };
  }
  const faults = relay.faults;
  passThrough();
  // A lazy fetch's MissingObjectError names the file, then the failure: the table shows the failure.
  const cause = error?.cause instanceof Error ? (error.cause as Error & { code?: string }) : undefined;
  const cell = error
    ? cause?.code && cause.code !== error.code
      ? `${error.code} ← ${cause.code}: ${oneLine(cause.message)}`
      : `${error.code}: ${oneLine(error.message)}`
    : retries > 0
      ? `ok after ${retries} ${retries === 1 ? 'retry' : 'retries'}`
      : 'ok';
  table.set(row.name, { ...table.get(row.name), [op]: cell });
  return { error, retries, faults, notices };
}

interface CellOutcome {
  error?: Error & { code: string; cause?: unknown };
  retries: number;
  /** Responses the relay broke: 0 would mean the cell tested nothing. */
  faults: number;
  /** What progress said while waiting to retry. */
  notices: string[];
}

const causeCode = (err: Error & { cause?: unknown }): string | undefined =>
  (err.cause as { code?: string } | undefined)?.code;

/** The message for the table: one line, the test's port left out, long ones cut after 110 characters. */
const oneLine = (message: string) => {
  const text = message
    .replace(/\s+/g, ' ')
    .replace(/\|/g, '\\|')
    .replace(/(http:\/\/)?127\.0\.0\.1:\d+/g, (_, scheme) => `${scheme ?? ''}host`);
  return text.length > 120 ? `${text.slice(0, 120)}…` : text;
};

/** The outcome the row asks for, checked; the message must be one a person can act on. */
function expectOutcome(row: Row, op: Op, outcome: CellOutcome): void {
  expect(outcome.faults).toBeGreaterThan(0);
  const want = op === 'fetch' ? (row.expect.fetch ?? row.expect.clone) : row.expect[op];
  if (want === 'n/a') throw new Error(`${row.name} does not apply to ${op}`);
  if ('ok' in want) {
    expect(outcome.error, outcome.error?.message).toBeUndefined();
    if (want.retried) expect(outcome.retries).toBeGreaterThan(0);
    else expect(outcome.retries).toBe(0);
    // The server's Retry-After (1 s here, under the cap) is the wait progress announces.
    if (row.fault.type === 'status' && row.fault.retryAfter !== undefined)
      expect(outcome.notices[0]).toMatch(/retrying in 1 s… \(attempt 2 of 4\)/);
    return;
  }
  expect(outcome.error?.code, outcome.error?.message).toBe(want.code);
  if (want.cause) expect(causeCode(outcome.error as Error)).toBe(want.cause);
  const message = outcome.error?.message ?? '';
  expect(message).not.toMatch(/undefined|\[object|^Error$/);
  // A message that lost its advice fails here, whatever its length.
  const guidance = GUIDANCE[want.code];
  expect(
    guidance,
    `no guidance listed for ${want.code}: add what its message must tell a person`,
  ).toBeDefined();
  expect(message).toMatch(guidance);
}

/**
 * What a message of each code must tell the person to do. A lazy fetch's MISSING_OBJECT says it for its
 * cause too; PUSH_OUTCOME_UNKNOWN says how to find out whether the push happened.
 */
const GUIDANCE: Record<string, RegExp> = {
  NETWORK_ERROR: /try again|try a CORS proxy/i,
  TIMEOUT: /try again/i,
  HTTP_ERROR: /try again later|wait a minute, then try again|check it/i,
  HTTP_UNAUTHORIZED: /give a user name and token/i,
  AUTH_REQUIRED: /give it to continue/i,
  PACK_CORRUPT: /try again/i,
  PACK_TRUNCATED: /try again/i,
  PKT_LINE_INVALID: /try again/i,
  REMOTE_ERROR: /try again later/i,
  MISSING_OBJECT: /try again|connect to the network|removed from the remote|check it/i,
  PUSH_OUTCOME_UNKNOWN: /push again .* or fetch to see/i,
};

/** After any pack merge has settled: the export checked with git (cloneOracle.checkedExport). */
async function settledExport(repoId: string, name: string): Promise<string[]> {
  await maintenanceIdle(ctx, repoId);
  return checkedExport(ctx, repoId, tmp(), name);
}

const expectSuperset = (after: string[], before: string[]) => {
  const held = new Set(after);
  expect(before.filter((oid) => !held.has(oid))).toEqual([]);
};

describe('the fault table', () => {
  describe('clone', () => {
    it.each(ROWS.map((r) => [r.name, r] as const))('%s', async (_, row) => {
      const outcome = await runCell(row, 'clone', (onRetry) =>
        engine.clone(
          { url: `${relay.url}/repo.git` },
          {
            onProgress: (p) => {
              if (p.phase === 'retrying') onRetry(p.text);
            },
          },
        ),
      );
      expectOutcome(row, 'clone', outcome);
      const repos = await engine.listRepos();
      if (outcome.error) {
        // Nothing of a failed clone remains: no record, no database.
        expect(repos).toEqual([]);
        const dbs = (await indexedDB.databases()).map((d) => d.name ?? '');
        expect(dbs.filter((n) => n.startsWith('blobless-repo-'))).toEqual([]);
      } else {
        expect(repos).toHaveLength(1);
        await settledExport(repos[0].id, `clone-${ROWS.indexOf(row)}`);
        await engine.repo(repos[0].id).delete();
      }
      // The next clone, without the fault, succeeds.
      const next = await engine.clone({ url: `${relay.url}/repo.git` });
      await settledExport(next.repoId, `clone-next-${ROWS.indexOf(row)}`);
      await engine.repo(next.repoId).delete();
    });
  });

  describe('checkout (lazy blobs), one clone for the column', () => {
    let repoId: string;
    beforeAll(async () => {
      repoId = (await engine.clone({ url: `${relay.url}/repo.git` })).repoId;
    });

    it.each(ROWS.map((r) => [r.name, r] as const))('%s', async (_, row) => {
      const i = ROWS.indexOf(row);
      const paths = [`c/${i}`];
      const objectsBefore = await settledExport(repoId, `co-before-${i}`);
      const before = await snapshotGitDir(ctx, repoId);
      const outcome = await runCell(row, 'checkout', (onRetry) =>
        engine.repo(repoId).checkout(
          { ref: 'main', paths },
          {
            onProgress: (p) => {
              if (p.phase === 'fetching-blobs' && p.retrying) onRetry(p.retrying);
            },
          },
        ),
      );
      expectOutcome(row, 'checkout', outcome);
      const objectsAfter = await settledExport(repoId, `co-after-${i}`);
      expectSuperset(objectsAfter, objectsBefore);
      // A failed checkout leaves the git directory byte for byte: no pack, no index, no ref moved.
      if (outcome.error) expect(await snapshotGitDir(ctx, repoId)).toEqual(before);
      // The same checkout without the fault succeeds, and writes what git has.
      await engine.repo(repoId).checkout({ ref: 'main', paths });
      for (const name of ['a.txt', 'b.txt']) {
        const file = await engine.repo(repoId).readFile({ ref: 'main', path: `c/${i}/${name}` });
        const want = await gitCli(['show', `main:c/${i}/${name}`], { cwd: server.bare });
        expect(new TextDecoder().decode(file.bytes)).toBe(want);
      }
    });
  });

  describe('readFile (one lazy blob), one clone for the column', () => {
    let repoId: string;
    beforeAll(async () => {
      repoId = (await engine.clone({ url: `${relay.url}/repo.git` })).repoId;
    });

    it.each(ROWS.map((r) => [r.name, r] as const))('%s', async (_, row) => {
      const i = ROWS.indexOf(row);
      const path = `r/${i}.txt`;
      const objectsBefore = await settledExport(repoId, `rf-before-${i}`);
      const before = await snapshotGitDir(ctx, repoId);
      const outcome = await runCell(row, 'readFile', (onRetry) =>
        engine.repo(repoId).readFile(
          { ref: 'main', path },
          {
            onProgress: (p) => {
              if (p.retrying) onRetry(p.retrying);
            },
          },
        ),
      );
      expectOutcome(row, 'readFile', outcome);
      const objectsAfter = await settledExport(repoId, `rf-after-${i}`);
      expectSuperset(objectsAfter, objectsBefore);
      if (outcome.error) expect(await snapshotGitDir(ctx, repoId)).toEqual(before);
      const file = await engine.repo(repoId).readFile({ ref: 'main', path });
      expect(new TextDecoder().decode(file.bytes)).toBe(
        await gitCli(['show', `main:${path}`], { cwd: server.bare }),
      );
    });
  });

  describe('fetch (a new commit on the server before each cell), one clone for the column', () => {
    let repoId: string;
    const work = () => join(tmp(), 'served', 'work');
    const env = { GIT_CONFIG_GLOBAL: '/dev/null', GIT_CONFIG_NOSYSTEM: '1' };
    beforeAll(async () => {
      repoId = (await engine.clone({ url: `${relay.url}/repo.git` })).repoId;
    });

    it.each(ROWS.map((r) => [r.name, r] as const))('%s', async (_, row) => {
      const i = ROWS.indexOf(row);
      await writeFile(join(work(), `fetch-${i}.txt`), `fetched ${i}\n`.repeat(200));
      await gitCli(['add', '-A'], { cwd: work(), env });
      await gitCli(
        ['-c', 'user.name=Ada', '-c', 'user.email=ada@x.test', 'commit', '-q', '-m', `fetch ${i}`],
        {
          cwd: work(),
          env,
        },
      );
      await gitCli(['push', '-q', server.bare, 'main'], { cwd: work(), env });
      const tip = (await gitCli(['rev-parse', 'main'], { cwd: server.bare })).trim();
      const objectsBefore = await settledExport(repoId, `fe-before-${i}`);
      const before = await snapshotGitDir(ctx, repoId);
      const outcome = await runCell(row, 'fetch', (onRetry) =>
        engine.repo(repoId).fetch(
          {},
          {
            onProgress: (p) => {
              if (p.phase === 'retrying') onRetry(p.text);
            },
          },
        ),
      );
      expectOutcome(row, 'fetch', outcome);
      const objectsAfter = await settledExport(repoId, `fe-after-${i}`);
      expectSuperset(objectsAfter, objectsBefore);
      // A failed fetch leaves the git directory byte for byte: no pack, no ref moved.
      if (outcome.error) expect(await snapshotGitDir(ctx, repoId)).toEqual(before);
      // The next fetch, without the fault, brings the server's tip.
      await engine.repo(repoId).fetch();
      const exported = await exportRepo(ctx, repoId, tmp(), `fe-next-${i}`);
      expect((await gitCli(['rev-parse', 'refs/remotes/origin/main'], { cwd: exported })).trim()).toBe(tip);
      await gitCli(['fsck', '--connectivity-only', '--no-progress'], { cwd: exported });
    });
  });

  describe('push (a new commit before each cell), one clone for the column', () => {
    let repoId: string;
    const author = { name: 'Ada Lovelace', email: 'ada@example.com' };
    beforeAll(async () => {
      repoId = (await engine.clone({ url: `${relay.url}/repo.git` })).repoId;
      await engine.repo(repoId).checkout({ ref: 'main' });
    });

    it.each(ROWS.filter((r) => applies(r, 'push')).map((r) => [r.name, r] as const))('%s', async (_, row) => {
      const i = ROWS.indexOf(row);
      await engine
        .repo(repoId)
        .writeWorktreeFile({ path: `push-${i}.txt`, content: `pushed ${i}\n`.repeat(100) });
      await engine.repo(repoId).stage({ paths: [`push-${i}.txt`] });
      const { oid } = await engine.repo(repoId).commit({ message: `push ${i}`, author });
      const objectsBefore = await settledExport(repoId, `pu-before-${i}`);
      const before = await snapshotGitDir(ctx, repoId);
      const outcome = await runCell(row, 'push', () => engine.repo(repoId).push());
      expectOutcome(row, 'push', outcome);
      const objectsAfter = await settledExport(repoId, `pu-after-${i}`);
      expectSuperset(objectsAfter, objectsBefore);
      // A failed push moves nothing here: the remote-tracking ref stays where the server last said it was.
      if (outcome.error) expect(await snapshotGitDir(ctx, repoId)).toEqual(before);
      // The next push, without the fault, leaves the server's main at the commit, as git sees it.
      await engine.repo(repoId).push();
      expect((await gitCli(['rev-parse', 'main'], { cwd: server.bare })).trim()).toBe(oid);
      await gitCli(['fsck', '--no-progress'], { cwd: server.bare });
      const exported = await exportRepo(ctx, repoId, tmp(), `pu-next-${i}`);
      expect((await gitCli(['rev-parse', 'refs/remotes/origin/main'], { cwd: exported })).trim()).toBe(oid);
      await gitCli(['fsck', '--connectivity-only', '--no-progress'], { cwd: exported });
    });
  });
});
