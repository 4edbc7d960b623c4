// receivePack against real git upload-pack answers (test/support/uploadPackFetch.ts: `git upload-pack
// --stateless-rpc` per request, no server): what each section of a fetch response becomes, and that the
// engine's limits, signal, thin-pack bases and progress reach the wire parser and the ingester. A few git
// processes per case, so each mutant of receivePack.ts costs well under a second. Through the whole engine,
// against the crafted responder: test/receivePack.test.ts.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { uploadPackFetch } from '../../../test/support/uploadPackFetch.ts';
import { DEFAULT_PACK_LIMITS } from '../../pack/packLimits.ts';
import { GitHttpClient } from '../../transport/gitHttp.ts';
import { buildFetchRequest, type FetchRequestOptions } from '../../wire/fetchCommand.ts';
import { concatBytes, DELIM_PKT, encodePktLine, FLUSH_PKT } from '../../wire/pktLine.ts';
import { DEFAULT_WIRE_LIMITS } from '../../wire/wireLimits.ts';
import type { EngineLimits } from '../common/engineContext.ts';
import type { Timeline } from '../common/timeline.ts';
import { type ReceiveOptions, type RemoteProgressLine, receivePack } from './receivePack.ts';

const LIMITS: EngineLimits = { ...DEFAULT_WIRE_LIMITS, ...DEFAULT_PACK_LIMITS };
let dir: string;
let server: string;
const commits: string[] = [];
const git = (args: string[], input?: string) =>
  execFileSync('git', args, {
    cwd: server,
    input,
    env: {
      ...process.env,
      GIT_AUTHOR_DATE: '1700000000 +0000',
      GIT_COMMITTER_DATE: '1700000000 +0000',
    },
  });
const gitText = (args: string[]) => git(args).toString().trim();

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'blobless-receivePack-'));
  server = join(dir, 'r');
  execFileSync('git', ['init', '-q', '-b', 'main', server]);
  git(['config', 'user.name', 'A U Thor']);
  git(['config', 'user.email', 'author@example.com']);
  // Three versions of a file long enough that git sends the later ones as deltas of the earlier.
  const lines = Array.from({ length: 200 }, (_, i) => `line ${i} of a file that changes a little\n`);
  for (let i = 0; i < 3; i++) {
    lines[i * 50] = `changed in commit ${i}\n`;
    execFileSync('sh', ['-c', 'cat > a.txt'], { cwd: server, input: lines.join('') });
    git(['add', 'a.txt']);
    git(['commit', '-q', '-m', `commit ${i}`]);
    commits.push(gitText(['rev-parse', 'HEAD']));
  }
});

afterAll(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
});

function client(env?: Record<string, string>) {
  const served = uploadPackFetch(() => server, env);
  return new GitHttpClient(`${served.base}/r`, {
    fetch: served.fetch,
    protocol: 'version=2',
    retry: { attempts: 1, baseDelayMs: 1, maxDelayMs: 1 },
  });
}

const request = (opts: Partial<FetchRequestOptions>) =>
  buildFetchRequest({ wants: [commits[2]], ofsDelta: true, ...opts });

/** What git says the repo's object `oid` is: for a thin pack's base. */
const fromGit = async (oid: string) => ({
  type: gitText(['cat-file', '-t', oid]) as 'blob',
  data: new Uint8Array(git(['cat-file', gitText(['cat-file', '-t', oid]), oid])),
});

const objectsOf = (args: string[]) =>
  gitText(['rev-list', '--objects', ...args])
    .split('\n')
    .map((l) => l.slice(0, 40))
    .sort();

describe('receivePack', () => {
  it('a pack with done: every object git lists, the progress lines with their meters, no other section', async () => {
    const lines: RemoteProgressLine[] = [];
    let packProgress = 0;
    const received = await receivePack(client(), request({ done: true }), {
      limits: LIMITS,
      onRemoteProgress: (l) => lines.push(l),
      onPackProgress: () => packProgress++,
    });
    expect(received.acknowledgments).toBeNull();
    expect(received.shallowInfo).toBeNull();
    const pack = await received.ingester!.finish();
    expect(pack.objects.map((o) => o.oid).sort()).toEqual(objectsOf([commits[2]]));
    expect(packProgress).toBeGreaterThan(0);
    // git's meter: `Enumerating objects: 9, done.`, `Counting objects: 100% (9/9), done.`
    const counting = lines.find(
      (l) => l.text === `Counting objects: 100% (${pack.objects.length}/${pack.objects.length})`,
    );
    const n = pack.objects.length;
    expect(counting).toEqual({
      phase: 'remote',
      text: `Counting objects: 100% (${n}/${n})`,
      loaded: n,
      total: n,
    });
    expect(lines.every((l) => l.phase === 'remote' && typeof l.text === 'string')).toBe(true);
    const enumerating = lines.find((l) => l.text.startsWith('Enumerating objects'));
    expect(enumerating).toEqual({
      phase: 'remote',
      text: `Enumerating objects: ${n}, done.`,
      loaded: n,
      total: undefined,
    });
  });

  it('a progress line without a meter (what a pack-objects hook says), and a wanted-refs section, no progress', async () => {
    // uploadpack.packObjectsHook is read from protected config only: the command line's, as GIT_CONFIG_*.
    const hook = join(dir, 'hook.sh');
    writeFileSync(hook, '#!/bin/sh\necho "Packed by the hook" >&2\nexec "$@"\n', { mode: 0o755 });
    const env = {
      GIT_CONFIG_COUNT: '1',
      GIT_CONFIG_KEY_0: 'uploadpack.packObjectsHook',
      GIT_CONFIG_VALUE_0: hook,
    };
    git(['config', 'uploadpack.allowRefInWant', 'true']);
    // buildFetchRequest has no want-ref: the request as git's fetch-pack.c writes it.
    const req = concatBytes([
      ...['command=fetch\n', 'object-format=sha1\n'].map((l) => encodePktLine(l)),
      DELIM_PKT,
      ...['ofs-delta\n', 'want-ref refs/heads/main\n', 'done\n'].map((l) => encodePktLine(l)),
      FLUSH_PKT,
    ]);
    const lines: RemoteProgressLine[] = [];
    const received = await receivePack(client(env), req, {
      limits: LIMITS,
      onRemoteProgress: (l) => lines.push(l),
    });
    expect(lines).toContainEqual({
      phase: 'remote',
      text: 'Packed by the hook',
      loaded: undefined,
      total: undefined,
    });
    expect(lines.every((l) => typeof l.text === 'string')).toBe(true);
    expect((await received.ingester!.finish()).counts.commit).toBe(3);
  });

  it('without a progress listener, the progress text is read and dropped', async () => {
    const received = await receivePack(client(), request({ done: true }), { limits: LIMITS });
    expect((await received.ingester!.finish()).objects).toHaveLength(objectsOf([commits[2]]).length);
  });

  it('haves in common: the ACKs and ready, then a thin pack completed from the repo (externalBase)', async () => {
    const req = request({ haves: [commits[1]], done: false, thinPack: true });
    const received = await receivePack(client(), req, { limits: LIMITS, externalBase: fromGit });
    expect(received.acknowledgments).toEqual({
      type: 'acknowledgments',
      acks: [commits[1]],
      nak: false,
      ready: true,
    });
    const pack = await received.ingester!.finish();
    expect(pack.appendedBases).toBeGreaterThan(0);
    expect(pack.objects.map((o) => o.oid).sort()).toEqual(
      [...new Set([...objectsOf([commits[2], `^${commits[1]}`]), ...pack.objects.map((o) => o.oid)])].sort(),
    );
    // Without the repo's objects, the same thin pack cannot be completed.
    const bare = await receivePack(client(), req, { limits: LIMITS });
    await expect(bare.ingester!.finish()).rejects.toMatchObject({ code: 'PACK_DELTA_BASE_MISSING' });
  });

  it('no have in common: a NAK and no pack', async () => {
    const received = await receivePack(client(), request({ haves: ['1'.repeat(40)], done: false }), {
      limits: LIMITS,
    });
    expect(received.acknowledgments).toEqual({ type: 'acknowledgments', acks: [], nak: true, ready: false });
    expect(received.ingester).toBeNull();
    expect(received.shallowInfo).toBeNull();
  });

  it('a depth: the shallow-info section', async () => {
    const received = await receivePack(client(), request({ deepen: 1, done: true }), { limits: LIMITS });
    expect(received.shallowInfo).toEqual({ type: 'shallow-info', shallow: [commits[2]], unshallow: [] });
    expect((await received.ingester!.finish()).counts.commit).toBe(1);
  });

  it('records its steps on the timeline', async () => {
    const steps: string[] = [];
    const timeline: Timeline = {
      step: (name, work) => {
        steps.push(`step ${name}`);
        return work();
      },
      measure: (name) => steps.push(`measure ${name}`),
      clear: () => undefined,
    };
    await receivePack(client(), request({ done: true }), { limits: LIMITS, steps: timeline });
    expect(steps).toEqual(['step fetch-response', 'step ingester-create', 'measure receive']);
  });

  it("holds the engine's limits: progress line length on the wire, object size in the pack", async () => {
    const long = await receivePack(client(), request({ done: true }), {
      limits: { ...LIMITS, maxProgressLineBytes: 8 },
    }).catch((e: unknown) => e);
    expect(long).toMatchObject({ code: 'LIMIT_EXCEEDED', limit: 'maxProgressLineBytes' });
    const big = await receivePack(client(), request({ done: true, noProgress: true }), {
      limits: { ...LIMITS, maxObjectSize: 100 },
    })
      .then((r) => r.ingester!.finish())
      .catch((e: unknown) => e);
    expect(big).toMatchObject({ code: 'PACK_OBJECT_TOO_LARGE' });
  });

  it('gives the ingester the signal: an aborted receive stores nothing', async () => {
    const options: ReceiveOptions = { limits: LIMITS, signal: AbortSignal.abort() };
    const err = await receivePack(client(), request({ done: true }), options)
      .then((r) => r.ingester!.finish())
      .catch((e: unknown) => e);
    expect(err).toMatchObject({ code: 'ABORTED' });
  });
});
