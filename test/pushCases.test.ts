// push.ts case by case against git itself, fast enough to mutate: one small remote built here with the git CLI,
// cloned once; each case pushes to a fresh copy of it served by git http-backend (started by this file, not
// the global setup), and a few answers are edited or scripted in the engine's fetch where git will not send
// them. git is the oracle: the bare repository's refs and `git fsck` after the push, the pack sent read by
// `git index-pack`, its objects compared with `git rev-list --objects`. The clone-and-push paths against the
// fixtures are in push.test.ts.
import { cp, mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import git from 'isomorphic-git';
import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { type GitServer, startGitServer } from '../server/gitServer.ts';
import { openRepo } from '../workers/ops/common/repoAccess.ts';
import { objectsToSend, type PushProgress, push } from '../workers/ops/sync/push.ts';
import { GITDIR } from '../workers/store/repoFs.ts';
import { concatBytes, encodePktLine, FLUSH_PKT } from '../workers/wire/pktLine.ts';
import { testEngine } from './support/engine.ts';
import { git as gitCli } from './support/git.ts';
import { failure } from './support/repoChecks.ts';
import { useTmpDir } from './support/tmpDir.ts';
import { setTreeEntry, type TreeEntry } from './support/treeEdit.ts';

const ZERO = '0'.repeat(40);
const readCommit = git.readCommit;
const PROXY = 'http://cors-proxy.test/p';
const tmp = useTmpDir('push-cases');

/** Answers the engine's fetch gives instead of the server's, or edits of the server's. */
type Intercept = (
  url: string,
  init: RequestInit | undefined,
  real: () => Promise<Response>,
) => Promise<Response>;
let intercept: Intercept | undefined;
/** Every request of the current case: the URL asked, path (from the repository on), headers and body. */
let requests: { url: string; path: string; headers: Headers; body: Uint8Array | undefined }[] = [];
let server: GitServer;
/** The repository the current case pushes to (a fresh copy of the template). */
let current = 'origin.git';

const { engine, ctx } = testEngine({
  fetch: (async (input: RequestInfo | URL, init?: RequestInit) => {
    const asked = String(input);
    // Through the CORS proxy of a case that sets one: straight to the server instead.
    const url = asked.replace(`${PROXY}/`, 'http://').replace('/origin.git/', `/${current}/`);
    requests.push({
      url: asked,
      path: url.slice(url.indexOf(current)),
      headers: new Headers(init?.headers),
      body: init?.body as Uint8Array | undefined,
    });
    const real = () => globalThis.fetch(url, init);
    return intercept ? intercept(url, init, real) : real();
  }) as typeof fetch,
});

const bare = () => join(tmp(), 'served', current);
const bareGit = (args: string[]) => gitCli(args, { cwd: bare() });
const revParse = async (rev: string) => (await bareGit(['rev-parse', rev])).trim();

/**
 * The template remote's commits: main p0…p7-c1-c2-c3 (c2 deletes old.txt), side branching off c2 (s1), skew
 * x-r on c3 (r dated between p7 and c1), annotated tag v1 on p0.
 */
const T: Record<'p0' | 'p7' | 'c1' | 'c2' | 'c3' | 's1' | 'x' | 'r' | 'v1', string> = {
  p0: '',
  p7: '',
  c1: '',
  c2: '',
  c3: '',
  s1: '',
  x: '',
  r: '',
  v1: '',
};
/** The remote's branch tips, all commits this clone has. */
const tips = () => [T.c3, T.s1, T.r];
let repoId: string;
let copies = 0;
/** packed-refs as the clone wrote it: each case starts from it. */
let packedRefs: string;

beforeAll(async () => {
  const work = join(tmp(), 'work');
  await mkdir(work);
  const w = (args: string[], time?: number) =>
    gitCli(args, {
      cwd: work,
      env: {
        GIT_AUTHOR_NAME: 'A',
        GIT_AUTHOR_EMAIL: 'a@example.com',
        GIT_COMMITTER_NAME: 'A',
        GIT_COMMITTER_EMAIL: 'a@example.com',
        GIT_AUTHOR_DATE: `${time ?? 1_700_000_000} +0000`,
        GIT_COMMITTER_DATE: `${time ?? 1_700_000_000} +0000`,
      },
    });
  const put = async (path: string, text: string) => {
    await mkdir(join(work, path, '..'), { recursive: true });
    await writeFile(join(work, path), text);
    await w(['add', path]);
  };
  await w(['init', '-q', '-b', 'main']);
  // History below c1 that a push walk must not read: p0 (the root) … p7.
  for (let i = 0; i < 8; i++) await w(['commit', '-q', '--allow-empty', '-m', `p${i}`], 1_699_990_000 + i);
  await put('a.txt', 'one\n');
  await put('dir/b.txt', 'b\n');
  await put('dir/sub/c.txt', 'c\n');
  await put('old.txt', 'old\n');
  await w(['commit', '-q', '-m', 'c1'], 1_700_001_000);
  await w(['rm', '-q', 'old.txt']);
  await put('a.txt', 'two\n');
  await w(['commit', '-q', '-m', 'c2'], 1_700_002_000);
  await w(['branch', 'side']);
  await put('d.txt', 'd\n');
  await w(['commit', '-q', '-m', 'c3'], 1_700_003_000);
  await w(['checkout', '-q', 'side']);
  await put('dir/b.txt', 'b side\n');
  await w(['commit', '-q', '-m', 's1'], 1_700_002_500);
  // isomorphic-git's readCommit peels it: to the push, a remote tip (as old as can be, so it is queued last).
  await w(['tag', '-a', '-m', 'v1', 'v1', 'main~10']);
  // A remote branch whose tip's clock went backwards: x on c3, then r dated between p7 and c1.
  await w(['checkout', '-q', '-b', 'skew', 'main']);
  await w(['commit', '-q', '--allow-empty', '-m', 'x'], 1_700_005_000);
  await w(['commit', '-q', '--allow-empty', '-m', 'r'], 1_700_000_900);
  const served = join(tmp(), 'served');
  await gitCli(['clone', '-q', '--bare', work, join(served, 'origin.git')]);
  for (const [k, v] of [
    ['uploadpack.allowFilter', 'true'],
    ['uploadpack.allowAnySHA1InWant', 'true'],
  ])
    await gitCli(['config', k, v], { cwd: join(served, 'origin.git') });
  server = await startGitServer({
    root: served,
    receivePackRepos: Array.from({ length: 100 }, (_, i) => `r${i}.git`),
  });
  for (const [k, rev] of [
    ['c1', 'main~2'],
    ['c2', 'main~1'],
    ['c3', 'main'],
    ['s1', 'side'],
    ['x', 'skew~1'],
    ['r', 'skew'],
    ['p0', 'main~10'],
    ['p7', 'main~3'],
    ['v1', 'v1'],
  ] as const)
    T[k] = (await gitCli(['rev-parse', rev], { cwd: work })).trim();
  ({ repoId } = await engine.clone({ url: `${server.url}/origin.git` }));
  packedRefs = (await fsOf().promises.readFile(`${GITDIR}/packed-refs`, 'utf8')) as string;
});

afterAll(async () => {
  await server?.close();
});

beforeEach(async () => {
  current = `r${copies++}.git`;
  await cp(join(tmp(), 'served', 'origin.git'), bare(), { recursive: true });
  intercept = undefined;
  requests = [];
  const fs = ctx.store.repoFs.open(repoId);
  await fs.promises.writeFile(`${GITDIR}/packed-refs`, packedRefs, 'utf8');
  await git.writeRef({
    fs,
    gitdir: GITDIR,
    ref: 'HEAD',
    value: 'refs/heads/main',
    symbolic: true,
    force: true,
  });
  await git.writeRef({ fs, gitdir: GITDIR, ref: 'refs/heads/main', value: T.c3, force: true });
});

const fsOf = () => ctx.store.repoFs.open(repoId);
const enc = new TextEncoder();

/**
 * A commit made with isomorphic-git's writers, no working tree: `files` maps paths to new contents, or null
 * to delete them, or to `{ oid }` to name a blob without storing it (`{ oid, gitlink: true }`: a submodule's
 * commit), applied to the first parent's tree. Sets `branch` to it when given. In the clone, or in `repo`.
 */
async function commit(
  parents: string[],
  files: Record<string, string | null | { oid: string; gitlink?: true }>,
  opts: { time?: number; branch?: string; message?: string; repo?: string } = {},
): Promise<string> {
  const fs = ctx.store.repoFs.open(opts.repo ?? repoId);
  const gitdir = GITDIR;
  const setEntry = (tree: string | null, parts: string[], entry: TreeEntry | null) =>
    setTreeEntry(fs, gitdir, tree, parts, entry);
  let tree = parents.length ? (await git.readCommit({ fs, gitdir, oid: parents[0] })).commit.tree : null;
  for (const [path, text] of Object.entries(files)) {
    const oid =
      typeof text === 'string' ? await git.writeBlob({ fs, gitdir, blob: enc.encode(text) }) : text?.oid;
    const entry: TreeEntry | null = !oid
      ? null
      : typeof text === 'object' && text?.gitlink
        ? { mode: '160000', path, oid, type: 'commit' }
        : { mode: '100644', path, oid, type: 'blob' };
    tree = await setEntry(tree, path.split('/'), entry);
  }
  tree ??= await git.writeTree({ fs, gitdir, tree: [] });
  const ident = {
    name: 'B',
    email: 'b@example.com',
    timestamp: opts.time ?? 1_700_010_000,
    timezoneOffset: 0,
  };
  const oid = await git.writeCommit({
    fs,
    gitdir,
    commit: {
      tree,
      parent: parents,
      author: ident,
      committer: ident,
      message: `${opts.message ?? 'local'}\n`,
    },
  });
  if (opts.branch)
    await git.writeRef({ fs, gitdir, ref: `refs/heads/${opts.branch}`, value: oid, force: true });
  return oid;
}

/** The POST to receive-pack of the current case, if any. */
const posted = () => requests.find((r) => r.path.endsWith('/git-receive-pack'));

/** The object ids of the pack the push sent, by `git index-pack` (which checks it whole). */
async function sentObjects(): Promise<string[]> {
  const body = Buffer.from(posted()!.body!);
  const file = join(tmp(), `${current}.pack`);
  await writeFile(file, body.subarray(body.indexOf('PACK')));
  await gitCli(['index-pack', file], { cwd: bare() });
  const out = await gitCli(['verify-pack', '-v', file.replace(/\.pack$/, '.idx')]);
  return out
    .split('\n')
    .map((l) => l.split(/\s+/))
    .filter((f) => /^[0-9a-f]{40}$/.test(f[0]) && ['commit', 'tree', 'blob'].includes(f[1]))
    .map((f) => f[0])
    .sort();
}

/** `git rev-list --objects <tip> --not <remote tips>` in the remote, after the push. */
async function oracle(
  tip: string,
  not: string[],
): Promise<{ oids: string[]; counts: Record<string, number> }> {
  const oids = (await bareGit(['rev-list', '--objects', tip, '--not', ...not]))
    .split('\n')
    .filter(Boolean)
    .map((l) => l.slice(0, 40))
    .sort();
  const types = (
    await gitCli(['cat-file', '--batch-check=%(objecttype)'], { cwd: bare(), input: `${oids.join('\n')}\n` })
  )
    .split('\n')
    .filter(Boolean);
  const counts: Record<string, number> = { commit: 0, tree: 0, blob: 0 };
  for (const t of types) counts[t]++;
  return { oids, counts };
}

const trackingRef = (branch: string) =>
  git.resolveRef({ fs: fsOf(), gitdir: GITDIR, ref: `refs/remotes/origin/${branch}` });

/** Runs `run` with the clone's registry record changed, then puts the record back. */
async function withRecord(change: Record<string, unknown>, run: () => Promise<void>) {
  const before = (await ctx.store.registry.get(repoId))!;
  await ctx.store.registry.update(repoId, (r) => ({ ...r, ...change }));
  try {
    await run();
  } finally {
    await ctx.store.registry.update(repoId, () => before);
  }
}

describe('push to git receive-pack', () => {
  it('fast-forwards main, sending what rev-list says the remote lacks, and moves origin/main', async () => {
    const tip = await commit([T.c3], { 'dir/sub/c.txt': 'c changed\n', 'e.txt': 'e\n' }, { branch: 'main' });
    const progress: PushProgress[] = [];
    const result = await push(ctx, repoId, {}, { onProgress: (p) => progress.push(p) });
    expect(await revParse('main')).toBe(tip);
    await bareGit(['fsck', '--strict', '--no-progress']);
    const want = await oracle(tip, tips());
    expect(await sentObjects()).toEqual(want.oids);
    expect(result).toEqual({
      ref: 'refs/heads/main',
      oldOid: T.c3,
      newOid: tip,
      upToDate: false,
      sent: {
        commits: want.counts.commit,
        trees: want.counts.tree,
        blobs: want.counts.blob,
        packBytes: Buffer.from(posted()!.body!).length - Buffer.from(posted()!.body!).indexOf('PACK'),
      },
      remoteMessages: '',
    });
    expect(want.counts).toEqual({ commit: 1, tree: 3, blob: 2 });
    expect(progress).toEqual([
      { phase: 'negotiating' },
      { phase: 'counting', commits: 1, trees: 3, blobs: 2 },
      { phase: 'sending', bytes: posted()!.body!.length },
    ]);
    expect(await trackingRef('main')).toBe(tip);
    expect(await fsOf().promises.readFile(`${GITDIR}/packed-refs`, 'utf8')).toContain(
      `${tip} refs/remotes/origin/main\n`,
    );
    // receive-pack has no v2: no Git-Protocol header on either request.
    expect(requests.map((r) => [r.path, r.headers.has('Git-Protocol')])).toEqual([
      [`${current}/info/refs?service=git-receive-pack`, false],
      [`${current}/git-receive-pack`, false],
    ]);
    // The request's capabilities: those of git's we want, in our order, and our agent.
    const commands = Buffer.from(posted()!.body!).toString('latin1');
    expect(commands).toMatch(
      new RegExp(
        `^[0-9a-f]{4}${T.c3} ${tip} refs/heads/main\\0report-status side-band-64k quiet agent=\\S+0000PACK`,
      ),
    );
  });

  it('is up to date when the remote branch is at the commit: no POST, origin/main set again', async () => {
    await fsOf().promises.writeFile(
      `${GITDIR}/packed-refs`,
      packedRefs.replace(`${T.c3} refs/remotes/origin/main`, `${T.c1} refs/remotes/origin/main`),
      'utf8',
    );
    expect(await trackingRef('main')).toBe(T.c1);
    const result = await push(ctx, repoId);
    expect(result).toEqual({
      ref: 'refs/heads/main',
      oldOid: T.c3,
      newOid: T.c3,
      upToDate: true,
      sent: { commits: 0, trees: 0, blobs: 0, packBytes: 0 },
      remoteMessages: '',
    });
    expect(posted()).toBeUndefined();
    expect(await trackingRef('main')).toBe(T.c3);
    // A clone with no packed-refs (all its refs loose) gets one holding the remote-tracking ref alone.
    await fsOf().promises.unlink(`${GITDIR}/packed-refs`);
    expect((await push(ctx, repoId)).upToDate).toBe(true);
    expect(await trackingRef('main')).toBe(T.c3);
    await expect(trackingRef('side')).rejects.toThrow();
  });

  it('creates a branch under another name from a commit no remote ref names', async () => {
    const tip = await commit([T.c1], { 'dir/new.txt': 'new\n' }, { branch: 'topic', time: 1_700_000_500 });
    const result = await push(ctx, repoId, { branch: 'topic', remoteBranch: 'feature/x' });
    expect(result).toMatchObject({ ref: 'refs/heads/feature/x', oldOid: ZERO, newOid: tip, upToDate: false });
    expect(await revParse('refs/heads/feature/x')).toBe(tip);
    expect(await revParse('main')).toBe(T.c3);
    await bareGit(['fsck', '--strict', '--no-progress']);
    const want = await oracle(tip, tips());
    expect(await sentObjects()).toEqual(want.oids);
    expect(want.counts).toEqual({ commit: 1, tree: 2, blob: 1 });
    expect(result.sent).toMatchObject({ commits: 1, trees: 2, blobs: 1 });
    expect(await trackingRef('feature/x')).toBe(tip);
    expect(posted()!.path).toBe(`${current}/git-receive-pack`);
  });

  it('keeps the other remote-tracking refs of packed-refs when it moves one, and drops a loose one', async () => {
    const before = await trackingRef('side');
    // A loose origin/main (isomorphic-git writes refs loose) would hide the moved packed value.
    await git.writeRef({
      fs: fsOf(),
      gitdir: GITDIR,
      ref: 'refs/remotes/origin/main',
      value: T.c1,
      force: true,
    });
    const tip = await commit([T.c3], { 'x.txt': 'x\n' }, { branch: 'main' });
    await push(ctx, repoId);
    expect(await trackingRef('side')).toBe(before);
    expect(await trackingRef('main')).toBe(tip);
    // Byte for byte what `git clone` of the remote writes now: each ref once, in order, the tag peeled.
    const cloned = join(tmp(), `${current}-clone`);
    await gitCli(['clone', '-q', '--no-checkout', bare(), cloned]);
    expect(await fsOf().promises.readFile(`${GITDIR}/packed-refs`, 'utf8')).toBe(
      await readFile(join(cloned, '.git', 'packed-refs'), 'utf8'),
    );
  });
});

describe('how it reaches the server', () => {
  it("goes through the repository's CORS proxy", async () => {
    const tip = await commit([T.c3], { 'x.txt': 'x\n' }, { branch: 'main' });
    await withRecord({ corsProxy: PROXY }, async () => {
      await push(ctx, repoId);
    });
    expect(await revParse('main')).toBe(tip);
    expect(requests.map((r) => r.url.startsWith(`${PROXY}/127.0.0.1:`))).toEqual([true, true]);
  });

  it("sends the repository's credentials", async () => {
    await commit([T.c3], { 'x.txt': 'x\n' }, { branch: 'main' });
    await withRecord({ auth: { username: 'u', password: 'p' } }, async () => {
      await push(ctx, repoId);
    });
    const basic = `Basic ${Buffer.from('u:p').toString('base64')}`;
    expect(requests.map((r) => r.headers.get('Authorization'))).toEqual([basic, basic]);
  });

  it('passes its crash points in order: the remote updated, then the remote-tracking ref written', async () => {
    await commit([T.c3], { 'x.txt': 'x\n' }, { branch: 'main' });
    const points: string[] = [];
    ctx.store.crash.setHook((point) => {
      points.push(point);
    });
    try {
      await push(ctx, repoId);
      expect(points).toEqual(['push:remote-updated', 'push:tracking-written']);
      points.length = 0;
      await push(ctx, repoId);
      expect(points).toEqual(['push:tracking-written']);
    } finally {
      ctx.store.crash.setHook(undefined);
    }
  });
});

describe('refused before sending', () => {
  it('needs a branch: a detached HEAD, or a branch that does not exist', async () => {
    const fs = fsOf();
    await git.writeRef({ fs, gitdir: GITDIR, ref: 'HEAD', value: T.c3, force: true });
    const detached = await failure(push(ctx, repoId));
    expect(detached.code).toBe('DETACHED_HEAD');
    expect(detached.message).toBe(
      'HEAD is not on a branch. Create a branch for these commits, then push it.',
    );
    const missing = await failure(push(ctx, repoId, { branch: 'nope' }));
    expect(missing.code).toBe('REF_NOT_FOUND');
    expect(missing.message).toBe('There is no local branch "nope" to push.');
    expect(requests).toEqual([]);
  });

  it('refuses a new tree deeper than maxTreeDepth, naming its folder, and leaves the remote alone', async () => {
    // The remote's dir/sub sits 2 folders deep: within the limit, as the boundary's tree is read too.
    await commit([T.c3], { 'd1/d2/d3/f.txt': 'f\n' }, { branch: 'main' });
    let err: Error | undefined;
    await withRecord({ treeLimits: { maxTreeDepth: 2 } }, async () => {
      err = await failure(push(ctx, repoId));
    });
    expect(err).toMatchObject({ name: 'HostileTreeError', path: 'd1/d2/d3', check: 'TREE_TOO_DEEP' });
    expect(posted()).toBeUndefined();
    expect(await revParse('main')).toBe(T.c3);
  });

  it('says "fetch first" when the remote tip is a commit this clone lacks', async () => {
    await gitCli(['update-ref', 'refs/heads/main', T.c3], { cwd: bare() });
    const theirs = (await bareGit(['commit-tree', '-p', T.c3, '-m', 'theirs', `${T.c3}^{tree}`])).trim();
    await bareGit(['update-ref', 'refs/heads/main', theirs]);
    await commit([T.c3], { 'x.txt': 'x\n' }, { branch: 'main' });
    const err = (await failure(push(ctx, repoId))) as Error & {
      code: string;
      ref: string;
      remoteMessage: string;
    };
    expect(err).toMatchObject({
      name: 'PushRejectedError',
      code: 'PUSH_NON_FAST_FORWARD',
      ref: 'refs/heads/main',
    });
    expect(err.remoteMessage).toBe('fetch first');
    expect(err.message).toBe(
      'The remote branch main has commits that this clone does not (fetch first). Pull to merge them into main, then push again.',
    );
    expect(posted()).toBeUndefined();
    expect(await revParse('main')).toBe(theirs);
  });

  it('refuses a non-fast-forward it can see, and sends it when forced', async () => {
    const tip = await commit([T.c2], { 'x.txt': 'x\n' }, { branch: 'main' });
    const err = (await failure(push(ctx, repoId))) as Error & { code: string; remoteMessage: string };
    expect(err.code).toBe('PUSH_NON_FAST_FORWARD');
    expect(err.remoteMessage).toBe('non-fast-forward');
    expect(err.message).toBe(
      "main does not contain the remote main's latest commit (non-fast-forward): pushing would drop commits. Pull to merge them, then push again, or force the push.",
    );
    expect(posted()).toBeUndefined();
    const result = await push(ctx, repoId, { force: true });
    expect(result).toMatchObject({ oldOid: T.c3, newOid: tip });
    expect(await revParse('main')).toBe(tip);
    await bareGit(['fsck', '--strict', '--no-progress']);
    expect(await sentObjects()).toEqual((await oracle(tip, tips())).oids);
  });

  it('pushes over a remote tip that is a commit it lacks when forced', async () => {
    const theirs = (await bareGit(['commit-tree', '-p', T.c3, '-m', 'theirs', `${T.c3}^{tree}`])).trim();
    await bareGit(['update-ref', 'refs/heads/main', theirs]);
    const tip = await commit([T.c3], { 'x.txt': 'x\n' }, { branch: 'main' });
    const result = await push(ctx, repoId, { force: true });
    expect(result).toMatchObject({ oldOid: theirs, newOid: tip });
    expect(await revParse('main')).toBe(tip);
    await bareGit(['fsck', '--strict', '--no-progress']);
  });

  it('says the server takes no pushes on a 403, and passes other HTTP errors on', async () => {
    await commit([T.c3], { 'x.txt': 'x\n' }, { branch: 'main' });
    intercept = async () => new Response('no', { status: 403 });
    const forbidden = await failure(push(ctx, repoId));
    expect(forbidden.code).toBe('PUSH_FORBIDDEN');
    expect(forbidden.message).toBe(
      `${server.url}/origin.git does not accept pushes from you (403): the repository is read-only, or the token lacks write access.`,
    );
    intercept = async () => new Response('gone', { status: 404 });
    const missing = await failure(push(ctx, repoId));
    expect(missing.name).toBe('TransportError');
    expect(missing.code).not.toBe('PUSH_FORBIDDEN');
  });

  it('refuses a protocol v2 answer, and a server without report-status', async () => {
    await commit([T.c3], { 'x.txt': 'x\n' }, { branch: 'main' });
    const v2 = concatBytes([
      encodePktLine('# service=git-receive-pack\n'),
      FLUSH_PKT,
      encodePktLine('version 2\n'),
      encodePktLine('agent=git/2.39\n'),
      FLUSH_PKT,
    ]);
    intercept = async () =>
      new Response(v2 as BodyInit, {
        status: 200,
        headers: { 'Content-Type': 'application/x-git-receive-pack-advertisement' },
      });
    const err = await failure(push(ctx, repoId));
    expect(err.code).toBe('PUSH_REJECTED');
    expect(err.message).toBe('The server answered the push with protocol v2, which has no push.');

    intercept = editAdvertisement((caps) => caps.filter((c) => c !== 'report-status'));
    requests = [];
    const blind = await failure(push(ctx, repoId));
    expect(blind.code).toBe('PUSH_REJECTED');
    expect(blind.message).toBe(
      'The server does not report push results (no report-status); Blobless will not push blind.',
    );
    expect(posted()).toBeUndefined();
    expect(await revParse('main')).toBe(T.c3);
  });
});

/** An intercept that hands on git's advertisement with its capabilities edited by `edit`. */
function editAdvertisement(edit: (caps: string[]) => string[]): Intercept {
  return async (url, _init, real) => {
    const res = await real();
    if (!url.includes('info/refs')) return res;
    const text = Buffer.from(await res.arrayBuffer()).toString('latin1');
    // The first ref line after the service line and its flush carries the capabilities after a NUL.
    const start = text.indexOf('0000') + 4;
    const len = Number.parseInt(text.slice(start, start + 4), 16);
    const line = text.slice(start + 4, start + len);
    const [refPart, caps] = line.replace(/\n$/, '').split('\0');
    const edited = `${refPart}\0${edit(caps.split(' ')).join(' ')}\n`;
    const body = Buffer.concat([
      Buffer.from(text.slice(0, start), 'latin1'),
      Buffer.from(encodePktLine(edited)),
      Buffer.from(text.slice(start + len), 'latin1'),
    ]);
    return new Response(body, { status: 200, headers: res.headers });
  };
}

/** An intercept that answers the receive-pack POST with `answer` (the advertisement stays git's). */
function answerPost(answer: (real: () => Promise<Response>) => Promise<Response> | Response): Intercept {
  return async (url, _init, real) => (url.endsWith('/git-receive-pack') ? answer(real) : real());
}

const sideband = (inner: Uint8Array, messages = '') =>
  concatBytes([
    ...(messages ? [encodePktLine(concatBytes([Uint8Array.of(2), enc.encode(messages)]))] : []),
    encodePktLine(concatBytes([Uint8Array.of(1), inner])),
    FLUSH_PKT,
  ]);
const report = (...lines: string[]) => concatBytes([...lines.map((l) => encodePktLine(`${l}\n`)), FLUSH_PKT]);
const resultResponse = (body: Uint8Array) =>
  new Response(body as BodyInit, {
    status: 200,
    headers: { 'Content-Type': 'application/x-git-receive-pack-result' },
  });

describe("the server's report", () => {
  it('reads a report without sideband when the server has none, and asks for no quiet it lacks', async () => {
    const tip = await commit([T.c3], { 'x.txt': 'x\n' }, { branch: 'main' });
    intercept = editAdvertisement((caps) => caps.filter((c) => c !== 'side-band-64k' && c !== 'quiet'));
    const result = await push(ctx, repoId);
    expect(result.newOid).toBe(tip);
    expect(await revParse('main')).toBe(tip);
    const commands = Buffer.from(posted()!.body!).toString('latin1');
    expect(commands).toMatch(/\0report-status agent=\S+0000PACK/);
  });

  it("passes on a hook's refusal and its message, and a hook's message on success", async () => {
    const tip = await commit([T.c3], { 'x.txt': 'x\n' }, { branch: 'main' });
    const hook = join(bare(), 'hooks', 'pre-receive');
    await writeFile(hook, '#!/bin/sh\necho "protected by policy" >&2\nexit 1\n', { mode: 0o755 });
    const err = (await failure(push(ctx, repoId))) as Error & {
      code: string;
      remoteMessage: string;
      ref: string;
    };
    expect(err).toMatchObject({ name: 'PushRejectedError', code: 'PUSH_REJECTED', ref: 'refs/heads/main' });
    expect(err.remoteMessage).toBe('pre-receive hook declined');
    expect(err.message).toBe('The remote refused main: pre-receive hook declined.');
    expect(await revParse('main')).toBe(T.c3);
    expect(await trackingRef('main')).not.toBe(tip);

    await writeFile(hook, '#!/bin/sh\necho "thanks" >&2\nexit 0\n', { mode: 0o755 });
    const result = await push(ctx, repoId);
    expect(result.remoteMessages).toContain('thanks');
    expect(await revParse('main')).toBe(tip);
  });

  it('reports an unpack failure (receive.maxInputSize) as PUSH_REJECTED with its reason', async () => {
    await commit([T.c3], { 'big.txt': 'x'.repeat(5000) }, { branch: 'main' });
    await bareGit(['config', 'receive.maxInputSize', '100']);
    const err = (await failure(push(ctx, repoId))) as Error & { code: string; remoteMessage: string };
    expect(err.code).toBe('PUSH_REJECTED');
    expect(err.remoteMessage).toMatch(/abnormal exit/);
    expect(err.message).toBe(`The server could not store the pushed objects: ${err.remoteMessage}.`);
    expect(await revParse('main')).toBe(T.c3);
  });

  it('is refused by receive.denyNonFastForwards when forced, and names the reason', async () => {
    await commit([T.c2], { 'x.txt': 'x\n' }, { branch: 'main' });
    await bareGit(['config', 'receive.denyNonFastForwards', 'true']);
    const err = (await failure(push(ctx, repoId, { force: true }))) as Error & {
      code: string;
      remoteMessage: string;
    };
    expect(err.code).toBe('PUSH_NON_FAST_FORWARD');
    expect(err.remoteMessage).toBe('non-fast-forward');
    expect(err.message).toBe(
      'The remote refused main (non-fast-forward): it has commits main lacks. Pull to merge them, then push again.',
    );
    expect(await revParse('main')).toBe(T.c3);
  });

  it('is refused when the branch moved between the advertisement and the push', async () => {
    await commit([T.c3], { 'x.txt': 'x\n' }, { branch: 'main' });
    intercept = answerPost(async (real) => {
      await bareGit(['update-ref', 'refs/heads/main', T.s1]);
      return real();
    });
    const err = (await failure(push(ctx, repoId))) as Error & { code: string; remoteMessage: string };
    expect(err.code).toBe('PUSH_REJECTED');
    expect(err.remoteMessage).toBe('failed to update ref');
    expect(await revParse('main')).toBe(T.s1);
  });

  it('takes "fetch first" and "stale info" for non-fast-forwards, anything else as a refusal', async () => {
    await commit([T.c3], { 'x.txt': 'x\n' }, { branch: 'main' });
    for (const [reason, code] of [
      ['fetch first', 'PUSH_NON_FAST_FORWARD'],
      ['stale info', 'PUSH_NON_FAST_FORWARD'],
      ['non-fast-forward', 'PUSH_NON_FAST_FORWARD'],
      ['deny updating a hidden ref', 'PUSH_REJECTED'],
    ]) {
      intercept = answerPost(() =>
        resultResponse(sideband(report('unpack ok', `ng refs/heads/main ${reason}`))),
      );
      const err = (await failure(push(ctx, repoId))) as Error & { code: string; remoteMessage: string };
      expect([reason, err.code, err.remoteMessage]).toEqual([reason, code, reason]);
    }
  });

  it('refuses a report that names no status for the branch, or only for another one', async () => {
    await commit([T.c3], { 'x.txt': 'x\n' }, { branch: 'main' });
    for (const lines of [['unpack ok'], ['unpack ok', 'ok refs/heads/other']]) {
      intercept = answerPost(() => resultResponse(sideband(report(...lines))));
      const err = (await failure(push(ctx, repoId))) as Error & { code: string; remoteMessage: string };
      expect(err.code).toBe('PUSH_REJECTED');
      expect(err.remoteMessage).toBe('no status for the branch');
      expect(err.message).toBe('The remote refused main: no status for the branch.');
    }
    expect(await trackingRef('main')).toBe(T.c3);
  });

  it('keeps sideband 2 messages of a scripted success', async () => {
    const tip = await commit([T.c3], { 'x.txt': 'x\n' }, { branch: 'main' });
    intercept = answerPost(() =>
      resultResponse(sideband(report('unpack ok', 'ok refs/heads/main'), 'remote: hello\n')),
    );
    const result = await push(ctx, repoId);
    expect(result.remoteMessages).toBe('remote: hello\n');
    expect(await trackingRef('main')).toBe(tip);
  });

  it('says the outcome is unknown when the answer breaks off, or fails on the way', async () => {
    await commit([T.c3], { 'x.txt': 'x\n' }, { branch: 'main' });
    intercept = answerPost(async (real) => {
      const bytes = new Uint8Array(await (await real()).arrayBuffer());
      return resultResponse(bytes.subarray(0, bytes.length - 6));
    });
    const err = (await failure(push(ctx, repoId))) as Error & { code: string; cause: Error };
    expect(err.code).toBe('PUSH_OUTCOME_UNKNOWN');
    expect(err.cause.name).toBe('WireError');
    expect(err.message).toBe(
      `The server's answer to the push of main broke off (${err.cause.message}). The server may have updated main anyway: push again (it says so if it already has the commits), or fetch to see.`,
    );
    // It did: git applied the push before its answer broke off.
    expect(await revParse('main')).not.toBe(T.c3);
  });

  it('says the outcome is unknown when the connection drops while the answer streams in', async () => {
    await commit([T.c3], { 'x.txt': 'x\n' }, { branch: 'main' });
    intercept = answerPost(async (real) => {
      await (await real()).arrayBuffer();
      return new Response(new ReadableStream({ pull: (c) => c.error(new TypeError('network error')) }), {
        status: 200,
        headers: { 'Content-Type': 'application/x-git-receive-pack-result' },
      });
    });
    const err = (await failure(push(ctx, repoId))) as Error & { code: string; cause: Error };
    expect(err.code).toBe('PUSH_OUTCOME_UNKNOWN');
    expect(err.cause.name).toBe('TransportError');
  });

  it("passes on the server's fatal error (sideband 3) as it is: the push failed, it is not unknown", async () => {
    await commit([T.c3], { 'x.txt': 'x\n' }, { branch: 'main' });
    intercept = answerPost(() =>
      resultResponse(
        concatBytes([encodePktLine(concatBytes([Uint8Array.of(3), enc.encode('disk full')])), FLUSH_PKT]),
      ),
    );
    const err = (await failure(push(ctx, repoId))) as Error & { code: string; remoteMessage?: string };
    expect(err.name).toBe('RemoteError');
    expect(err.remoteMessage).toBe('disk full');
  });
});

describe('abort', () => {
  it('stops before anything when aborted, and while counting, leaving the remote alone', async () => {
    const first = await commit([T.c3], { 'x1.txt': 'x\n' });
    const second = await commit([first], { 'x2.txt': 'x\n' });
    await commit([second], { 'x3.txt': 'x\n' }, { branch: 'main' });
    const err = await failure(push(ctx, repoId, {}, { signal: AbortSignal.abort() }));
    expect(err.code).toBe('ABORTED');
    expect(requests).toEqual([]);
    const ctrl = new AbortController();
    const progress: string[] = [];
    const late = await failure(
      push(
        ctx,
        repoId,
        {},
        {
          signal: ctrl.signal,
          onProgress: (p) => {
            progress.push(p.phase);
            if (p.phase === 'counting') ctrl.abort();
          },
        },
      ),
    );
    expect(late.code).toBe('ABORTED');
    // Three new commits: the count stops after the first.
    expect(progress).toEqual(['negotiating', 'counting']);
    expect(posted()).toBeUndefined();
    expect(await revParse('main')).toBe(T.c3);
  });

  it('stops the walk at the next commit once aborted', async () => {
    await commit([T.c3], { 'x.txt': 'x\n' }, { branch: 'main' });
    const ctrl = new AbortController();
    const read: string[] = [];
    const spy = vi.spyOn(git, 'readCommit');
    spy.mockImplementation(async (args) => {
      if (ctrl.signal.aborted) read.push(args.oid);
      // c2 is read only by the walk (queued when c3 is taken): abort there.
      if (args.oid === T.c2) ctrl.abort();
      return readCommit(args);
    });
    try {
      expect((await failure(push(ctx, repoId, {}, { signal: ctrl.signal }))).code).toBe('ABORTED');
    } finally {
      spy.mockRestore();
    }
    expect(ctrl.signal.aborted).toBe(true);
    expect(read).toEqual([]);
  });

  it('passes the broken answer on as it is, not as an unknown outcome, when aborted meanwhile', async () => {
    await commit([T.c3], { 'x.txt': 'x\n' }, { branch: 'main' });
    const ctrl = new AbortController();
    intercept = answerPost(async (real) => {
      const bytes = new Uint8Array(await (await real()).arrayBuffer());
      ctrl.abort();
      return resultResponse(bytes.subarray(0, 3));
    });
    const err = await failure(push(ctx, repoId, {}, { signal: ctrl.signal }));
    expect(err).toMatchObject({ name: 'WireError', code: 'PKT_LINE_TRUNCATED' });
  });
});

describe('the push walk (docs/decisions/push-walk.md): what the remote lacks, by rev-list', () => {
  it('sends merges and both their sides once each, leaving out what any remote tip has', async () => {
    // A diamond: n0 is reached from both sides of the merge m.
    const n0 = await commit([T.c3], { 'n0.txt': 'n0\n' }, { time: 1_700_009_000 });
    const a = await commit([n0], { 'dir/sub/c.txt': 'merge side a\n' }, { time: 1_700_010_000 });
    const b = await commit(
      [n0, T.s1],
      { 'dir/b.txt': 'b from side\n', 'f.txt': 'f\n' },
      { time: 1_700_011_000 },
    );
    const m = await commit([a, b], { 'dir/b.txt': 'b from side\n', 'f.txt': 'f\n' }, { time: 1_700_012_000 });
    const tip = await commit([m], { 'a.txt': null }, { time: 1_700_013_000, branch: 'main' });
    const result = await push(ctx, repoId);
    expect(await revParse('main')).toBe(tip);
    await bareGit(['fsck', '--strict', '--no-progress']);
    const want = await oracle(tip, tips());
    expect(await sentObjects()).toEqual(want.oids);
    expect(result.sent).toMatchObject({
      commits: want.counts.commit,
      trees: want.counts.tree,
      blobs: want.counts.blob,
    });
  });

  it('walks past commits whose clocks went backwards (the slop) and stops at the merge base', async () => {
    // New commits older than the remote's tips: a walk stopping at the first remote-only queue would miss them.
    let parent = T.c3;
    for (let i = 0; i < 8; i++)
      parent = await commit([parent], { [`old${i}.txt`]: `${i}\n` }, { time: 1_600_000_000 + i });
    const tip = await commit([parent], { 'new.txt': 'n\n' }, { time: 1_700_020_000, branch: 'main' });
    const result = await push(ctx, repoId);
    expect(await revParse('main')).toBe(tip);
    await bareGit(['fsck', '--strict', '--no-progress']);
    const want = await oracle(tip, tips());
    expect(await sentObjects()).toEqual(want.oids);
    expect(result.sent.commits).toBe(9);
  });

  it('never sends a blob this clone does not store: the remote has it deeper in history', async () => {
    // a.txt as c1 had it: not in the boundary commit's tree, never fetched by this blob:none clone.
    const one = await revParse(`${T.c1}:a.txt`);
    const tip = await commit([T.c3], { 'a.txt': { oid: one }, 'g.txt': 'g\n' }, { branch: 'main' });
    const result = await push(ctx, repoId);
    expect(await revParse('main')).toBe(tip);
    await bareGit(['fsck', '--strict', '--no-progress']);
    // rev-list lists it (only the boundary's trees are the remote's), and the clone leaves it out.
    const want = await oracle(tip, tips());
    expect(want.oids).toContain(one);
    expect(await sentObjects()).toEqual(want.oids.filter((o) => o !== one));
    expect(result.sent).toMatchObject({ commits: 1, trees: 1, blobs: 1 });
  });

  it('sends a blob the boundary lacks when it is stored in a pack (fetched), as rev-list lists it', async () => {
    await engine.repo(repoId).readFile({ ref: T.c1, path: 'old.txt' });
    const old = await revParse(`${T.c1}:old.txt`);
    const tip = await commit([T.c3], { 'old.txt': { oid: old } }, { branch: 'main' });
    const result = await push(ctx, repoId);
    expect(await revParse('main')).toBe(tip);
    const want = await oracle(tip, tips());
    expect(want.oids).toContain(old);
    expect(await sentObjects()).toEqual(want.oids);
    expect(result.sent).toMatchObject({ commits: 1, trees: 1, blobs: 1 });
  });

  it("leaves out a stored blob the remote's tree has, beside a new one in a new subtree", async () => {
    // c.txt written again (so stored loose) with the remote's content, in a dir/sub that changes.
    const tip = await commit([T.c3], { 'dir/sub/c.txt': 'c\n', 'dir/sub/z.txt': 'z\n' }, { branch: 'main' });
    const result = await push(ctx, repoId);
    expect(await revParse('main')).toBe(tip);
    const want = await oracle(tip, tips());
    expect(await sentObjects()).toEqual(want.oids);
    expect(want.counts).toEqual({ commit: 1, tree: 3, blob: 1 });
    expect(result.sent).toMatchObject({ commits: 1, trees: 3, blobs: 1 });
  });

  it('reads only the commits down to the merge base and a slop of 5, never the root', async () => {
    const [p6] = (await readCommit({ fs: fsOf(), gitdir: GITDIR, oid: T.p7 })).commit.parent;
    const read = new Set<string>();
    const spy = vi.spyOn(git, 'readCommit');
    spy.mockImplementation(async (args) => {
      read.add(args.oid);
      return readCommit(args);
    });
    const tip = await commit([T.c3], { 'y.txt': 'y\n' }, { branch: 'main' });
    try {
      await push(ctx, repoId);
    } finally {
      spy.mockRestore();
    }
    expect(await revParse('main')).toBe(tip);
    expect(await sentObjects()).toEqual((await oracle(tip, tips())).oids);
    // The tip, then 5 commits of the remote's only, newest first (c3, s1, c2, c1, r), and what they queued
    // (p7, x): never p6 and below, nor p0 but through the tag.
    // In queue order alone (not by date), the remote's side would be walked down to p5.
    expect(read.has(T.p7)).toBe(true);
    expect(read.has(T.x)).toBe(true);
    expect(read.has(p6)).toBe(false);
    expect(read.has(T.p0)).toBe(false);
  });

  it("stops 5 commits after only the remote's are left, late enough to find x the remote has", async () => {
    // l on x, which the walk first takes for new (newer than every remote tip), until r (dated before c1)
    // marks it: the 5th commit read after only remote ones are left (c3, s1, c2, c1, r).
    const tip = await commit([T.x], { 'l.txt': 'l\n' }, { branch: 'main', time: 1_700_006_000 });
    const result = await push(ctx, repoId);
    expect(await revParse('main')).toBe(tip);
    expect(await sentObjects()).toEqual((await oracle(tip, tips())).oids);
    expect(result.sent).toMatchObject({ commits: 1, trees: 1, blobs: 1 });
  });

  it("never sends a submodule's commit, even one this clone stores, as rev-list leaves it out", async () => {
    // The gitlink names a commit made here that the remote lacks: git sends only the tree naming it.
    const sub = await commit([], { 's.txt': 's\n' });
    const tip = await commit([T.c3], { mod: { oid: sub, gitlink: true } }, { branch: 'main' });
    const result = await push(ctx, repoId);
    expect(await revParse('main')).toBe(tip);
    await bareGit(['fsck', '--strict', '--no-progress']);
    const want = await oracle(tip, tips());
    expect(await sentObjects()).toEqual(want.oids);
    expect(result.sent).toMatchObject({ commits: 1, trees: 1, blobs: 0 });
    // The same list from the exported walk itself, asked without hooks.
    const listed = await objectsToSend(ctx, await openRepo(ctx, repoId), tip, tips());
    expect([...listed.oids].sort()).toEqual(want.oids);
  });

  it('pushes from a shallow clone: the walk stops where its history does', async () => {
    // At depth 1 the remote tips' parents are missing here: the walk reads them as nothing and goes on.
    const { repoId: shallow } = await engine.clone({
      url: `${server.url}/origin.git`,
      depth: 1,
      singleBranch: true,
      ref: 'main',
      tags: false,
    });
    const tip = await commit([T.c3], { 'z.txt': 'z\n' }, { branch: 'main', repo: shallow });
    const result = await push(ctx, shallow, { branch: 'main' });
    expect(await revParse('main')).toBe(tip);
    await bareGit(['fsck', '--strict', '--no-progress']);
    expect(await sentObjects()).toEqual((await oracle(tip, tips())).oids);
    expect(result.sent).toMatchObject({ commits: 1, trees: 1, blobs: 1 });
  });

  it('keeps ties in the order queued, as git does: a remote tip as old as r, advertised after it, waits', async () => {
    // q (on c3, dated as r) is the remote's branch tie, after skew: queued behind r, so the 5 commits of slop
    // still reach r, which marks x (as in the case above). Queued before r, q would spend the last one.
    const q = await commit([T.c3], {}, { time: 1_700_000_900, message: 'tie' });
    const { object } = await git.readObject({ fs: fsOf(), gitdir: GITDIR, oid: q, format: 'content' });
    await gitCli(['hash-object', '-t', 'commit', '-w', '--stdin'], {
      cwd: bare(),
      input: Buffer.from(object as Uint8Array).toString('utf8'),
    });
    await bareGit(['update-ref', 'refs/heads/tie', q]);
    const tip = await commit([T.x], { 'l.txt': 'l\n' }, { branch: 'main', time: 1_700_006_000 });
    const result = await push(ctx, repoId);
    expect(await revParse('main')).toBe(tip);
    expect(await sentObjects()).toEqual((await oracle(tip, [...tips(), q])).oids);
    expect(result.sent).toMatchObject({ commits: 1, trees: 1, blobs: 1 });
  });

  it('sends a root commit of an unrelated history whole', async () => {
    const root = await commit([], { 'u.txt': 'u\n', 'w/v.txt': 'v\n' }, { branch: 'lone' });
    const result = await push(ctx, repoId, { branch: 'lone' });
    expect(await revParse('lone')).toBe(root);
    await bareGit(['fsck', '--strict', '--no-progress']);
    expect(await sentObjects()).toEqual((await oracle(root, tips())).oids);
    expect(result.sent).toMatchObject({ commits: 1, trees: 2, blobs: 2 });
  });
});
