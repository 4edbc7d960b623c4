// fetchRepo against real git upload-pack answers (test/support/uploadPackFetch.ts: `git upload-pack
// --stateless-rpc` per request, no HTTP server) on small repos made here with the git CLI, the engine on
// memory storage: each case clones, changes the server with git, fetches, and holds the refs and
// `packed-refs` to what `git fetch` writes from the same repo. A case costs a second or less, so each mutant
// of fetch.ts is judged in seconds (stryker.config.mjs). Against git http-backend and the fixtures, with the
// byte counts and a long negotiation: test/fetch.test.ts, test/fetchTags.test.ts.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { deflateSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { exportAsDotGit } from '../../../test/support/cloneOracle.ts';
import { requestLines } from '../../../test/support/craftedServer.ts';
import { datedGitEnv } from '../../../test/support/datedGit.ts';
import { testEngine } from '../../../test/support/engine.ts';
import { looseRefNames, packedRefsAsGitWrites, showRefs } from '../../../test/support/refsOracle.ts';
import { failure, packFiles, snapshotGitDir } from '../../../test/support/repoChecks.ts';
import { uploadPackFetch } from '../../../test/support/uploadPackFetch.ts';
import { memoryStorage } from '../../storage/memory.ts';
import { GITDIR } from '../../store/repoFs.ts';
import { openRepo } from '../common/repoAccess.ts';
import { commitGraphStatus } from '../maintenance/commitGraphUpdate.ts';
import { fetchRepo, nextHaveBatch, TAG_LIST_MAX_AGE_MS } from './fetch.ts';

let root: string;
const served = uploadPackFetch((name) => join(root, name));
/** info/refs GETs to fail before they reach git, as a dropped connection does (the GET is retried). */
let dropped = 0;
/**
 * Servers git cannot be made to be, scripted on git's own answers: `v0` asks without `Git-Protocol` (git
 * then answers in protocol v0), `advertisement` and `lsRefs` edit the pkt-lines (null: flush) of the v2
 * capability advertisement and of the ls-refs answer.
 */
const script: {
  v0?: boolean;
  advertisement?: (lines: (string | null)[]) => (string | null)[];
  lsRefs?: (lines: (string | null)[]) => (string | null)[];
} = {};
/** Told each POST's body as it goes out, before git answers it (a test cancels from here). */
let onPost: ((body: string) => void) | undefined;
const { engine, ctx } = testEngine({
  storage: memoryStorage(),
  fetch: async (input, init) => {
    if (init?.method === 'GET' && dropped-- > 0) throw new TypeError('connection reset');
    if (onPost && init?.body instanceof Uint8Array) onPost(Buffer.from(init.body).toString('latin1'));
    const headers = new Headers(init?.headers);
    if (script.v0) headers.delete('Git-Protocol');
    const answer = await served.fetch(input, { ...init, headers });
    const edit =
      init?.method === 'GET'
        ? script.advertisement
        : init?.body instanceof Uint8Array &&
            Buffer.from(init.body).toString('latin1').includes('command=ls-refs')
          ? script.lsRefs
          : undefined;
    if (!edit) return answer;
    const lines = edit(pktLines(Buffer.from(await answer.arrayBuffer()).toString('latin1')));
    const text = lines.map((l) =>
      l === null ? '0000' : `${(l.length + 4).toString(16).padStart(4, '0')}${l}`,
    );
    return new Response(Buffer.from(text.join(''), 'latin1'), { headers: answer.headers });
  },
  retry: { baseDelayMs: 1, maxDelayMs: 1 },
});

/** The pkt-lines of an answer, with their LFs; null for a flush (the answers edited here have no other). */
function pktLines(text: string): (string | null)[] {
  const lines: (string | null)[] = [];
  for (let i = 0; i < text.length; ) {
    const length = Number.parseInt(text.slice(i, i + 4), 16);
    lines.push(length === 0 ? null : text.slice(i + 4, i + length));
    i += length === 0 ? 4 : length;
  }
  return lines;
}

beforeAll(() => {
  root = mkdtempSync(join(tmpdir(), 'blobless-fetchRepo-'));
});
afterAll(async () => {
  await engine.close();
  if (root) rmSync(root, { recursive: true, force: true });
});

let clock = 1_700_000_000;
/** git in `dir`, each commit a second later than the last, so that history has an order. */
function git(dir: string, args: string[]): string {
  clock++;
  return execFileSync('git', args, {
    cwd: dir,
    env: datedGitEnv(clock),
  })
    .toString()
    .trim();
}

/** A commit on the server's current branch, changing `file`; returns its id. */
function commit(dir: string, file: string, text = `${file} at ${clock}\n`): string {
  execFileSync('sh', ['-c', `mkdir -p "$(dirname "${file}")" && cat > "${file}"`], { cwd: dir, input: text });
  git(dir, ['add', file]);
  git(dir, ['commit', '-q', '-m', `change ${file}`]);
  return git(dir, ['rev-parse', 'HEAD']);
}

/** A server repo `name` with `commits` commits on main, an annotated tag v1 on the first; its path and URL. */
function server(name: string, commits = 2) {
  const dir = join(root, name);
  execFileSync('git', ['init', '-q', '-b', 'main', dir]);
  git(dir, ['config', 'uploadpack.allowFilter', 'true']);
  const ids: string[] = [];
  for (let i = 0; i < commits; i++) ids.push(commit(dir, `f${i}.txt`));
  git(dir, ['tag', '-a', '-m', 'Release 1', 'v1', ids[0]]);
  return { dir, url: `${served.base}/${name}`, ids };
}

/** The server cloned by the engine and by git (blob:none, as Blobless clones), for git to fetch alongside. */
async function twin(name: string, commits = 2, depth?: number) {
  const s = await cloned(name, commits, depth);
  const cli = join(root, `${name}-cli`);
  const deep = depth ? ['--depth', String(depth)] : [];
  git(root, ['clone', '-q', '--filter=blob:none', '--no-checkout', ...deep, `file://${s.dir}`, cli]);
  return { ...s, cli };
}

/** The server cloned by the engine only. */
async function cloned(name: string, commits = 2, depth?: number) {
  const s = server(name, commits);
  const { repoId } = await engine.clone({ url: s.url, depth });
  return { ...s, repoId };
}

const readStored = (repoId: string, path: string) =>
  ctx.store.repoFs
    .open(repoId)
    .promises.readFile(`${GITDIR}/${path}`, 'utf8')
    .catch(() => '') as Promise<string>;

/** Our packed-refs byte for byte as git's after the same fetches, and git's reading of every ref. */
async function expectGitsRefs(repoId: string, cli: string, round: string) {
  const ours = join(await exportAsDotGit(ctx, repoId, root), '.git');
  const packed = readFileSync(join(ours, 'packed-refs'), 'utf8');
  expect(packed, round).toBe(await packedRefsAsGitWrites(join(cli, '.git'), await looseRefNames(ours)));
  expect(await showRefs(ours), round).toEqual(await showRefs(join(cli, '.git')));
}

const fetchBodies = () => served.requests.filter((r) => r.body.includes('command=fetch')).map((r) => r.body);
const kinds = (r: { updated: { kind: string; name: string }[] }) =>
  r.updated.map((u) => `${u.kind} ${u.name}`).sort();

describe('fetchRepo against git upload-pack', () => {
  it('brings new commits, a branch and the annotated tags on them, then every tag; packed-refs as git writes', async () => {
    const { dir, repoId, cli, ids } = await twin('grow');
    const c1 = commit(dir, 'src/a.txt');
    const c2 = commit(dir, 'src/b.txt');
    git(dir, ['branch', 'feature', c1]);
    git(dir, ['tag', '-a', '-m', 'Release 2', 'v2', c2]);
    const progress: { phase: string }[] = [];
    served.requests.length = 0;
    const result = await engine.repo(repoId).fetch({}, { onProgress: (p) => progress.push(p) });
    git(cli, ['fetch', '-q', 'origin']);
    expect(kinds(result)).toEqual([
      'fast-forward refs/remotes/origin/main',
      'new refs/remotes/origin/feature',
      'new refs/tags/v2',
    ]);
    expect(result.updated.find((u) => u.name === 'refs/remotes/origin/main')).toMatchObject({
      old: ids[1],
      new: c2,
    });
    expect(result).toMatchObject({
      tags: 'follow',
      forced: [],
      newCommits: 2,
      objects: { commit: 2, tree: expect.any(Number), blob: 0, tag: 1 },
      completedFromLocal: 0,
      shallow: false,
      filter: 'blob:none',
      warnings: [],
      negotiation: { rounds: 1, haves: 2 },
    });
    expect(result.requests).toBe(served.requests.length);
    expect(result.bytesReceived).toBeGreaterThan(500);
    await expectGitsRefs(repoId, cli, 'follow');
    // The phases in order, the round told; asked with progress, so no `no-progress`.
    const phases = progress.map((p) => p.phase).filter((p, i, a) => p !== a[i - 1]);
    expect(phases[0]).toBe('connecting');
    expect(phases).toContain('negotiating');
    expect(phases.at(-1)).toBe('writing');
    expect(progress.find((p) => p.phase === 'negotiating')).toEqual({
      phase: 'negotiating',
      round: 1,
      haves: 2,
    });
    const [request] = fetchBodies().map(requestLines);
    const followPrefixes = served.requests
      .filter((r) => r.body.includes('command=ls-refs'))
      .map((r) => requestLines(r.body).filter((l) => l.startsWith('ref-prefix')));
    expect(followPrefixes[0]).toEqual(['ref-prefix refs/heads/']);
    // The listing that confirms the followed tags says who asks, as the fetch does: git sends its agent
    // with every command to a server that advertises one (GIT_TRACE_PACKET=1 git fetch).
    const agentOf = (body: string) => requestLines(body).filter((l) => l.startsWith('agent='));
    const fetchAgent = agentOf(fetchBodies()[0] ?? '');
    expect(fetchAgent).toHaveLength(1);
    expect(followPrefixes[1]).toEqual(['ref-prefix refs/tags/v2']);
    const confirming = served.requests.filter((r) => r.body.includes('command=ls-refs'))[1];
    expect(agentOf(confirming?.body ?? '')).toEqual(fetchAgent);
    expect(request).not.toContain('no-progress');
    expect(request).toEqual(
      expect.arrayContaining([
        'thin-pack',
        'include-tag',
        'ofs-delta',
        'filter blob:none',
        `want ${c1}`,
        `want ${c2}`,
      ]),
    );
    // The promisor note names every ref fetched, as git's.
    const packs = await packFiles(ctx, repoId);
    const promisors = await Promise.all(
      packs.filter((p) => p.endsWith('.promisor')).map((p) => readStored(repoId, `objects/pack/${p}`)),
    );
    const v2 = git(dir, ['rev-parse', 'v2']);
    expect(promisors).toContain(`${c1} refs/heads/feature\n${c2} refs/heads/main\n${v2} refs/tags/v2\n`);

    // Every tag: a lightweight one too, with nothing to fetch. (Not before: git fetch follows tags on
    // commits it held already, Blobless's follow only those in the pack, FetchTags.)
    git(dir, ['tag', 'light', ids[1]]);
    served.requests.length = 0;
    const all = await engine.repo(repoId).fetch({ tags: 'all' });
    git(cli, ['fetch', '-q', '--tags', 'origin']);
    expect(kinds(all)).toEqual(['new refs/tags/light']);
    // Only `all` lists the tags: ls-refs asks for them then, and a follow fetch does not.
    const lsRefsPrefixes = served.requests
      .filter((r) => r.body.includes('command=ls-refs'))
      .map((r) => requestLines(r.body).filter((l) => l.startsWith('ref-prefix')));
    expect(lsRefsPrefixes[0]).toEqual(['ref-prefix refs/heads/', 'ref-prefix refs/tags/']);
    expect(all).toMatchObject({ tags: 'all', newCommits: 0, negotiation: { rounds: 0, haves: 0 } });
    expect(fetchBodies()).toEqual([]);
    await expectGitsRefs(repoId, cli, 'all');

    // Up to date: two small requests, no pack, nothing written.
    const before = await packFiles(ctx, repoId);
    const again = await engine.repo(repoId).fetch();
    expect(again).toMatchObject({
      updated: [],
      requests: 2,
      newCommits: 0,
      objects: { commit: 0, tree: 0, blob: 0, tag: 0 },
    });
    expect(await packFiles(ctx, repoId)).toEqual(before);
  });

  it('a rewritten branch is forced, a moved tag is tag-moved; packed-refs as git fetch --force --tags writes', async () => {
    const { dir, repoId, cli, ids } = await twin('rewrite', 3);
    git(dir, ['reset', '-q', '--hard', ids[0]]);
    const fresh = commit(dir, 'other.txt');
    git(dir, ['tag', '-f', '-a', '-m', 'Release 1, again', 'v1', fresh]);
    const result = await engine.repo(repoId).fetch({ tags: 'all' });
    git(cli, ['fetch', '-q', '--force', '--tags', 'origin']);
    expect(kinds(result)).toEqual(['forced refs/remotes/origin/main', 'tag-moved refs/tags/v1']);
    expect(kinds({ updated: result.forced })).toEqual(kinds(result));
    expect(result.updated.find((u) => u.kind === 'forced')).toMatchObject({ old: ids[2], new: fresh });
    await expectGitsRefs(repoId, cli, 'forced');
  });

  it('fetches only the branches named, with or without refs/heads/; a branch the remote lacks is REF_NOT_FOUND', async () => {
    const { dir, repoId } = await cloned('named');
    git(dir, ['branch', 'feature']);
    git(dir, ['branch', 'other']);
    git(dir, ['branch', 'topic/refs/heads/x']);
    commit(dir, 'main-only.txt');
    const two = await engine.repo(repoId).fetch({ refs: ['refs/heads/feature', 'other'] });
    expect(kinds(two)).toEqual(['new refs/remotes/origin/feature', 'new refs/remotes/origin/other']);
    // Only a leading refs/heads/ is the prefix; one inside a name is the name's.
    const nested = await engine.repo(repoId).fetch({ refs: ['topic/refs/heads/x'] });
    expect(kinds(nested)).toEqual(['new refs/remotes/origin/topic/refs/heads/x']);
    const err = await failure(engine.repo(repoId).fetch({ refs: ['nope', 'other', 'gone'] }));
    expect(err.code).toBe('REF_NOT_FOUND');
    expect(err.message).toBe('The remote has no branch nope, gone.');
    // And the default fetch brings the rest.
    expect(kinds(await engine.repo(repoId).fetch())).toEqual(['fast-forward refs/remotes/origin/main']);
  });

  it('tags none: no include-tag and no tag; follow confirms only the tags in the pack', async () => {
    const { dir, repoId } = await cloned('notags');
    const c = commit(dir, 'n.txt');
    git(dir, ['tag', '-a', '-m', 'Release 2', 'v2', c]);
    served.requests.length = 0;
    const none = await engine.repo(repoId).fetch({ tags: 'none' });
    expect(kinds(none)).toEqual(['fast-forward refs/remotes/origin/main']);
    expect(none.tags).toBe('none');
    const lines = requestLines(fetchBodies()[0]);
    expect(lines).not.toContain('include-tag');
    // No progress listener: the server is asked for none.
    expect(lines).toContain('no-progress');
    // The tag's commit is held now: a follow fetch has nothing to ask for, and so no tag to follow.
    expect(kinds(await engine.repo(repoId).fetch())).toEqual([]);
    expect(kinds(await engine.repo(repoId).fetch({ tags: 'all' }))).toEqual(['new refs/tags/v2']);
  });

  it('lists every tag once the last full listing is a day old, and then waits another day', async () => {
    const { dir, repoId, ids } = await cloned('daily');
    git(dir, ['tag', 'light', ids[1]]);
    const setListed = (tagsListedAt: number | undefined, createdAt?: number) =>
      ctx.store.registry.update(repoId, (r) => ({ ...r, tagsListedAt, createdAt: createdAt ?? r.createdAt }));
    await setListed(Date.now() - TAG_LIST_MAX_AGE_MS + 60_000);
    expect((await engine.repo(repoId).fetch()).tags).toBe('follow');
    // No full listing yet: the clone's time counts.
    await setListed(undefined, Date.now() - TAG_LIST_MAX_AGE_MS - 1000);
    const due = await engine.repo(repoId).fetch();
    expect(due.tags).toBe('all');
    expect(kinds(due)).toEqual(['new refs/tags/light']);
    const listedAt = (await ctx.store.registry.get(repoId))?.tagsListedAt ?? 0;
    expect(Date.now() - listedAt).toBeLessThan(60_000);
    expect((await engine.repo(repoId).fetch()).tags).toBe('follow');
  });

  it('deepens, sets a depth and unshallows a shallow clone as git fetch does; the shallow file as git writes', async () => {
    const { dir, repoId, cli } = await twin('shallow', 6, 1);
    const shallowOf = (d: string) => readFileSync(join(d, '.git/shallow'), 'utf8');
    const deeper = await engine.repo(repoId).fetch({ deepen: 2 });
    git(cli, ['fetch', '-q', '--deepen=2', 'origin']);
    expect(deeper.shallow).toBe(true);
    expect(await readStored(repoId, 'shallow')).toBe(shallowOf(cli));
    expect(requestLines(fetchBodies().at(-1) ?? '')).toContain('deepen-relative');

    await engine.repo(repoId).fetch({ depth: 2 });
    git(cli, ['fetch', '-q', '--depth=2', 'origin']);
    expect(await readStored(repoId, 'shallow')).toBe(shallowOf(cli));

    const whole = await engine.repo(repoId).fetch({ unshallow: true });
    expect(whole.shallow).toBe(false);
    expect(await readStored(repoId, 'shallow')).toBe('');
    expect((await ctx.store.registry.get(repoId))?.shallow).toBe(false);
    const count = git(join(await exportAsDotGit(ctx, repoId, root), '.git'), [
      'rev-list',
      '--count',
      '--all',
    ]);
    expect(count).toBe(git(dir, ['rev-list', '--count', '--all']));

    // Complete now: deepening has nothing to do, and asks for no depth.
    commit(dir, 'later.txt');
    served.requests.length = 0;
    const after = await engine.repo(repoId).fetch({ deepen: 3 });
    expect(after.newCommits).toBe(1);
    expect(fetchBodies().join('')).not.toContain('deepen');
    // Unshallowing a complete repo changes nothing either (git dies on it; the history fill's last step
    // relies on it), nor does a deepen of 0 (git fetch --deepen=0 is no deepening).
    commit(dir, 'later2.txt');
    served.requests.length = 0;
    expect((await engine.repo(repoId).fetch({ unshallow: true })).newCommits).toBe(1);
    commit(dir, 'later3.txt');
    expect((await engine.repo(repoId).fetch({ deepen: 0 })).newCommits).toBe(1);
    expect(fetchBodies().join('')).not.toContain('deepen');
    expect(await readStored(repoId, 'shallow')).toBe('');
  });

  it('refuses, before any request and storing nothing, the depths git fetch and git clone refuse', async () => {
    const { dir, repoId, cli } = await twin('baddepth', 3, 1);
    commit(dir, 'b.txt');
    /** git's stderr when it refuses `args`, null when it does them. */
    const gitRefuses = (cwd: string, args: string[]) => {
      try {
        execFileSync('git', args, { cwd, stdio: 'pipe' });
        return null;
      } catch (err) {
        return String((err as { stderr: Buffer }).stderr);
      }
    };
    const before = await snapshotGitDir(ctx, repoId);
    const cases: [Parameters<ReturnType<typeof engine.repo>['fetch']>[0], string][] = [
      [{ depth: 0 }, '--depth=0'],
      [{ depth: -1 }, '--depth=-1'],
      [{ depth: 1.5 }, '--depth=1.5'],
      [{ deepen: -1 }, '--deepen=-1'],
      [{ deepen: 1.5 }, '--deepen=1.5'],
      // "options '--deepen' and '--depth' cannot be used together", "options '--depth' and '--unshallow' …"
      [{ depth: 1, deepen: 1 }, '--depth=1 --deepen=1'],
      [{ depth: 2, unshallow: true }, '--depth=2 --unshallow'],
      [{ deepen: 3, unshallow: true }, '--deepen=3 --unshallow'],
    ];
    for (const [opts, flags] of cases) {
      const flag = flags.split(' ');
      // git 2.39: "depth 0 is not a positive number", "transport: invalid depth option '1.5'", "negative
      // depth in --deepen is not supported", "option `deepen' expects a numerical value".
      expect(gitRefuses(cli, ['fetch', '-q', ...flag, 'origin']), flags).toMatch(/depth|deepen/);
      served.requests.length = 0;
      const err = await failure(engine.repo(repoId).fetch(opts));
      expect(err.code, flags).toBe('INVALID_INPUT');
      const named = Object.keys(opts ?? {});
      expect(err.message, flags).toContain(
        named.length > 1 ? `${named.join(' and ')} cannot` : `${named[0]} ${Object.values(opts ?? {})[0]} `,
      );
      expect(served.requests, flags).toEqual([]);
    }
    expect(await snapshotGitDir(ctx, repoId)).toEqual(before);
    // A deepen of 0 is none, so it goes with a depth: git fetch --deepen=0 --depth=2 does it.
    expect(gitRefuses(cli, ['fetch', '-q', '--deepen=0', '--depth=2', 'origin'])).toBeNull();
    await engine.repo(repoId).fetch({ deepen: 0, depth: 2 });
    expect(requestLines(fetchBodies().at(-1) ?? '')).toContain('deepen 2');

    for (const flag of ['--depth=0', '--depth=-1', '--depth=1.5']) {
      expect(
        gitRefuses(root, ['clone', '-q', flag, `file://${dir}`, join(root, 'baddepth-never')]),
        flag,
      ).toMatch(/depth/);
    }
    const repos = (await ctx.store.registry.list()).length;
    for (const depth of [0, -1, 1.5, Number.NaN]) {
      served.requests.length = 0;
      const err = await failure(engine.clone({ url: `${served.base}/baddepth`, depth }));
      expect(err.code, `${depth}`).toBe('INVALID_INPUT');
      expect(served.requests, `${depth}`).toEqual([]);
    }
    expect((await ctx.store.registry.list()).length).toBe(repos);
  });

  it('negotiates in rounds of doubling haves when the local history is long and unknown to the server', async () => {
    const { dir, repoId } = await cloned('diverged');
    // 40 commits on a branch the clone gets, which the server then forgets.
    git(dir, ['checkout', '-q', '-b', 'long']);
    // One shell for the 40, each a second apart: a git process per commit would cost seconds.
    execFileSync(
      'sh',
      [
        '-c',
        'for i in $(seq 40); do echo $i > long.txt; git add long.txt; GIT_COMMITTER_DATE="$((T + i)) +0000" GIT_AUTHOR_DATE="$((T + i)) +0000" git commit -q -m "long $i"; done',
      ],
      {
        cwd: dir,
        env: {
          ...process.env,
          T: String(clock),
          GIT_AUTHOR_NAME: 'A',
          GIT_AUTHOR_EMAIL: 'a@example.com',
          GIT_COMMITTER_NAME: 'A',
          GIT_COMMITTER_EMAIL: 'a@example.com',
        },
      },
    );
    clock += 41;
    await engine.repo(repoId).fetch();
    git(dir, ['checkout', '-q', 'main']);
    git(dir, ['branch', '-D', 'long']);
    // No tag either: nothing the server lists is known here, so only the haves find what is common.
    git(dir, ['tag', '-d', 'v1']);
    git(dir, ['reflog', 'expire', '--expire=now', '--all']);
    git(dir, ['gc', '-q', '--prune=now']);
    commit(dir, 'main.txt');
    served.requests.length = 0;
    const rounds: { phase: string; round?: number }[] = [];
    const result = await engine
      .repo(repoId)
      .fetch({}, { onProgress: (p) => p.phase === 'negotiating' && rounds.push(p) });
    const haves = fetchBodies().map((b) => requestLines(b).filter((l) => l.startsWith('have ')).length);
    expect(result.negotiation).toEqual({ rounds: haves.length, haves: haves.reduce((a, b) => a + b, 0) });
    expect(rounds.map((r) => r.round)).toEqual(haves.map((_, i) => i + 1));
    // The first round git's INITIAL_FLUSH (16) haves; the server found enough in common in the second and said
    // `ready`, so no `done` was sent.
    expect(haves[0]).toBe(16);
    expect(haves).toHaveLength(2);
    expect(fetchBodies().map((b) => requestLines(b).includes('done'))).toEqual([false, false]);
    const exported = join(await exportAsDotGit(ctx, repoId, root), '.git');
    expect(git(exported, ['rev-parse', 'refs/remotes/origin/main'])).toBe(git(dir, ['rev-parse', 'main']));
    git(exported, ['fsck', '--connectivity-only', '--no-progress']);
  });

  it("follows the fetch refspec of the repo config, and git's default when it has none", async () => {
    const { dir, repoId } = await cloned('refspec');
    git(dir, ['branch', 'feature']);
    commit(dir, 'r.txt');
    const { fs, gitdir } = await openRepo(ctx, repoId);
    const isogit = (await import('isomorphic-git')).default;
    await isogit.setConfig({
      fs,
      gitdir,
      path: 'remote.origin.fetch',
      value: '+refs/heads/main:refs/remotes/mirror/main',
    });
    expect(kinds(await engine.repo(repoId).fetch())).toEqual(['new refs/remotes/mirror/main']);
    await isogit.setConfig({ fs, gitdir, path: 'remote.origin.fetch', value: undefined });
    ctx.repos.forget(repoId);
    expect(kinds(await engine.repo(repoId).fetch())).toEqual([
      'fast-forward refs/remotes/origin/main',
      'new refs/remotes/origin/feature',
    ]);
  });

  it('a fetch refspec of the config that covers tags updates them, whatever `tags` says, as git fetch does', async () => {
    // `git config --add remote.origin.fetch '+refs/tags/*:refs/tags/*'`, as git users add to have every
    // tag kept in step: git 2.39's `git fetch --no-tags` still brings the lightweight tag, the moved tag
    // and the new one ("* [new tag] light -> light", "t [tag update] v1 -> v1"), as a plain `git fetch`.
    const { dir, repoId, cli, ids } = await twin('tagspec', 2);
    const isogit = (await import('isomorphic-git')).default;
    const addRefspec = async (spec: string) => {
      const { fs, gitdir } = await openRepo(ctx, repoId);
      await isogit.setConfig({ fs, gitdir, path: 'remote.origin.fetch', value: spec, append: true });
      ctx.repos.forget(repoId);
      git(cli, ['config', '--add', 'remote.origin.fetch', spec]);
    };
    await addRefspec('+refs/tags/*:refs/tags/*');
    git(dir, ['tag', 'light', ids[0]]);
    git(dir, ['tag', '-f', '-a', '-m', 'Release 1, again', 'v1', ids[1]]);
    const c = commit(dir, 't.txt');
    git(dir, ['tag', '-a', '-m', 'Release 3', 'v3', c]);
    const none = await engine.repo(repoId).fetch({ tags: 'none' });
    git(cli, ['fetch', '-q', '--no-tags', 'origin']);
    expect(kinds(none)).toEqual([
      'fast-forward refs/remotes/origin/main',
      'new refs/tags/light',
      'new refs/tags/v3',
      'tag-moved refs/tags/v1',
    ]);
    await expectGitsRefs(repoId, cli, 'tags none');
    // The default fetch (follow): a new lightweight tag on a commit held, which no pack brings, and an
    // annotated one that is both followed and mapped: once.
    git(dir, ['tag', 'light2', c]);
    git(dir, ['tag', '-a', '-m', 'Release 4', 'v4', commit(dir, 'v4.txt')]);
    const follow = await engine.repo(repoId).fetch();
    git(cli, ['fetch', '-q', 'origin']);
    expect(kinds(follow)).toEqual([
      'fast-forward refs/remotes/origin/main',
      'new refs/tags/light2',
      'new refs/tags/v4',
    ]);
    await expectGitsRefs(repoId, cli, 'follow');
    // Every tag, mapped by the refspec and by --tags to the same name: once.
    git(dir, ['tag', '-f', 'light', c]);
    const all = await engine.repo(repoId).fetch({ tags: 'all' });
    git(cli, ['fetch', '-q', '--tags', 'origin']);
    expect(kinds(all)).toEqual(['tag-moved refs/tags/light']);
    await expectGitsRefs(repoId, cli, 'all');
    // A refspec naming one tag, to another name: that tag alone, with the commit it needs.
    await addRefspec('+refs/tags/solo:refs/tags/kept/solo');
    const d = commit(dir, 'solo.txt');
    git(dir, ['tag', 'solo', d]);
    git(dir, ['reset', '-q', '--hard', 'HEAD~1']);
    const solo = await engine.repo(repoId).fetch({ tags: 'none' });
    git(cli, ['fetch', '-q', '--no-tags', 'origin']);
    expect(kinds(solo)).toEqual(['new refs/tags/kept/solo', 'new refs/tags/solo']);
    expect(solo.newCommits).toBe(1);
    await expectGitsRefs(repoId, cli, 'one tag');
  });

  it('tells each retry of a dropped request, and then fetches', async () => {
    const { dir, repoId } = await cloned('retry');
    commit(dir, 'x.txt');
    dropped = 1;
    const phases: { phase: string; attempt?: number }[] = [];
    const result = await engine.repo(repoId).fetch({}, { onProgress: (p) => phases.push(p) });
    expect(result.newCommits).toBe(1);
    const retry = phases.find((p) => p.phase === 'retrying');
    // The info/refs GET failed once: the second attempt of the policy's, after its (test-sized) delay.
    expect(retry).toMatchObject({ phase: 'retrying', attempt: 2, attempts: 4, delayMs: 1 });
    expect(retry).toHaveProperty('text');
    // And without a listener, a retry is not told.
    commit(dir, 'y.txt');
    dropped = 1;
    expect((await engine.repo(repoId).fetch()).newCommits).toBe(1);
  });

  it('keeps nothing of a fetch cancelled while writing, and the next fetch does the whole job', async () => {
    const { dir, repoId } = await cloned('cancel');
    commit(dir, 'c.txt');
    const packs = await packFiles(ctx, repoId);
    const refs = await readStored(repoId, 'packed-refs');
    const controller = new AbortController();
    const err = await failure(
      engine.repo(repoId).fetch(
        {},
        {
          signal: controller.signal,
          onProgress: (p) => {
            if (p.phase === 'writing') controller.abort();
          },
        },
      ),
    );
    expect(err.code).toBe('ABORTED');
    expect(await packFiles(ctx, repoId)).toEqual(packs);
    expect(await readStored(repoId, 'packed-refs')).toBe(refs);
    expect((await engine.repo(repoId).fetch()).newCommits).toBe(1);
  });

  it('a server that stopped filtering: a warning, every new blob, and no filter', async () => {
    const { dir, repoId } = await cloned('nofilter');
    git(dir, ['config', 'uploadpack.allowFilter', 'false']);
    commit(dir, 'blob.txt');
    const before = await packFiles(ctx, repoId);
    const result = await engine.repo(repoId).fetch();
    expect(result.filter).toBeNull();
    expect(result.objects.blob).toBe(1);
    // Its pack has every blob: no promisor note, as git's after an unfiltered fetch.
    const added = (await packFiles(ctx, repoId)).filter((p) => !before.includes(p));
    expect(added.map((p) => p.slice(-4)).sort()).toEqual(['.idx', 'pack']);
    expect(result.warnings).toEqual([
      'The server no longer supports partial clone (no `filter` capability); fetched everything new.',
    ]);
    expect(fetchBodies().at(-1)).not.toContain('filter');
  });

  it('with lockToStore: stores under the lock, or nothing when the shallow boundary changed meanwhile', async () => {
    const { dir, repoId } = await cloned('locked', 3, 1);
    const c = commit(dir, 'l.txt');
    const stale = await failure(
      fetchRepo(
        ctx,
        repoId,
        {},
        {
          onProgress: async (p) => {
            if (p.phase === 'negotiating')
              await ctx.store.repoFs.open(repoId).promises.writeFile(`${GITDIR}/shallow`, `${c}\n`);
          },
        },
        { lockToStore: { what: 'history fill' } },
      ),
    );
    expect(stale.code).toBe('FETCH_STALE');
    expect(stale.message).toBe(
      'The repository changed while its history was fetched; nothing was stored, and the next fetch asks again.',
    );
    ctx.repos.forget(repoId);
    ctx.store.forgetRepo(repoId);
    const shallow = await readStored(repoId, 'shallow');
    expect(shallow).toBe(`${c}\n`);
    const ok = await fetchRepo(ctx, repoId, {}, {}, { lockToStore: { what: 'history fill' } });
    expect(ok.updated.map((u) => u.name)).toEqual(['refs/remotes/origin/main']);
  });
});

describe('fetchRepo against servers git cannot be made to be (git answers, scripted)', () => {
  /** `fetch` run with the script `edit`, which is undone afterwards whatever happens. */
  async function scripted<T>(edit: typeof script, fetch: () => Promise<T>): Promise<T> {
    Object.assign(script, edit);
    try {
      return await fetch();
    } finally {
      for (const key of Object.keys(script) as (keyof typeof script)[]) delete script[key];
    }
  }

  it('a server without `shallow` in its fetch changes no depth (a warning), and a deepen of 0 none', async () => {
    const { dir, repoId } = await cloned('noshallow', 3, 1);
    // A deepen of 0 is none: with nothing new, nothing is asked.
    served.requests.length = 0;
    const none = await engine.repo(repoId).fetch({ deepen: 0 });
    expect(none).toMatchObject({ updated: [], shallow: true, negotiation: { rounds: 0, haves: 0 } });
    expect(fetchBodies()).toEqual([]);
    const boundary = await readStored(repoId, 'shallow');
    commit(dir, 's.txt');
    served.requests.length = 0;
    const noShallow = {
      advertisement: (lines: (string | null)[]) =>
        lines.map((l) => (l?.startsWith('fetch=') ? 'fetch=wait-for-done filter\n' : l)),
    };
    const result = await scripted(noShallow, () => engine.repo(repoId).fetch({ deepen: 1 }));
    expect(result.warnings).toEqual([
      'The server does not support shallow fetches; fetched without changing the depth.',
    ]);
    expect(result).toMatchObject({ newCommits: 1, shallow: true, filter: 'blob:none' });
    const request = fetchBodies().join('');
    expect(request).toContain('shallow ');
    expect(request).not.toContain('deepen');
    expect(await readStored(repoId, 'shallow')).toBe(boundary);
    // Asked for no depth, that server lacks nothing the fetch needs: no warning, as git fetch gives none.
    commit(dir, 's2.txt');
    const plain = await scripted(noShallow, () => engine.repo(repoId).fetch());
    expect(plain).toMatchObject({ newCommits: 1, shallow: true, warnings: [] });
    expect(await readStored(repoId, 'shallow')).toBe(boundary);
  });

  it('a server answering in v0 is UNSUPPORTED_PROTOCOL; one without the fetch command is fetched with warnings', async () => {
    const { dir, repoId } = await cloned('nofetchcmd');
    commit(dir, 'b.txt');
    const refs = await readStored(repoId, 'packed-refs');
    const err = await failure(scripted({ v0: true }, () => engine.repo(repoId).fetch()));
    expect(err.code).toBe('UNSUPPORTED_PROTOCOL');
    expect(err.message).toBe(
      `${served.base}/nofetchcmd no longer speaks git protocol v2, which Blobless fetches with. Clone it again to get its latest state.`,
    );
    expect(await readStored(repoId, 'packed-refs')).toBe(refs);
    served.requests.length = 0;
    const result = await scripted(
      { advertisement: (lines) => lines.filter((l) => !l?.startsWith('fetch=')) },
      () => engine.repo(repoId).fetch({ depth: 1 }),
    );
    expect(result.warnings).toEqual([
      'The server does not support shallow fetches; fetched without changing the depth.',
      'The server no longer supports partial clone (no `filter` capability); fetched everything new.',
    ]);
    expect(result).toMatchObject({ newCommits: 1, shallow: false, filter: null, objects: { blob: 1 } });
    expect(fetchBodies().join('')).not.toMatch(/deepen|filter/);
  });

  it('an unborn branch the server lists is no ref to fetch: skipped, or REF_NOT_FOUND when named', async () => {
    const { dir, repoId } = await cloned('unborn');
    commit(dir, 'u.txt');
    const withUnborn = {
      lsRefs: (lines: (string | null)[]) => ['unborn refs/heads/empty\n', ...lines],
    };
    const err = await failure(scripted(withUnborn, () => engine.repo(repoId).fetch({ refs: ['empty'] })));
    expect(err.code).toBe('REF_NOT_FOUND');
    expect(err.message).toBe('The remote has no branch empty.');
    const result = await scripted(withUnborn, () => engine.repo(repoId).fetch());
    expect(kinds(result)).toEqual(['fast-forward refs/remotes/origin/main']);
  });

  it('stores of a listing only the branches named or mapped, and no tag with tags none, as git fetch does', async () => {
    // gitprotocol-v2 ls-refs: ref-prefix "is purely for optimization; a server MAY show refs not matching the
    // prefix if it chooses, and clients should filter the result themselves". git's own is a prefix match.
    const { dir, repoId, cli } = await twin('unasked');
    git(dir, ['branch', 'feature']);
    git(dir, ['branch', 'feature2']);
    const c = commit(dir, 'x.txt');
    git(dir, ['tag', '-a', '-m', 'Release 2', 'v2', c]);
    git(dir, ['notes', 'add', '-m', 'a note', c]);
    const named = await engine.repo(repoId).fetch({ refs: ['feature'], tags: 'none' });
    git(cli, ['fetch', '-q', '--no-tags', 'origin', 'feature']);
    expect(kinds(named)).toEqual(['new refs/remotes/origin/feature']);
    await expectGitsRefs(repoId, cli, 'refs/heads/feature lists feature2');
    // A server that ignores ref-prefix: every ref it has, tags and notes too.
    const format = '%(objectname) %(refname)%(if)%(*objectname)%(then) peeled:%(*objectname)%(end)';
    const everything = {
      lsRefs: () => [
        ...git(dir, ['for-each-ref', `--format=${format}`])
          .split('\n')
          .map((l) => `${l}\n`),
        null,
      ],
    };
    const all = await scripted(everything, () => engine.repo(repoId).fetch({ tags: 'none' }));
    git(cli, ['fetch', '-q', '--no-tags', 'origin']);
    expect(kinds(all)).toEqual(['fast-forward refs/remotes/origin/main', 'new refs/remotes/origin/feature2']);
    await expectGitsRefs(repoId, cli, 'every ref listed');
  });

  it('lists every tag exactly when the last listing is TAG_LIST_MAX_AGE_MS old, not a millisecond before', async () => {
    const { dir, repoId, ids } = await cloned('boundary');
    git(dir, ['tag', 'light', ids[1]]);
    const now = Date.now();
    vi.useFakeTimers({ toFake: ['Date'], now });
    try {
      await ctx.store.registry.update(repoId, (r) => ({ ...r, tagsListedAt: now - TAG_LIST_MAX_AGE_MS + 1 }));
      expect((await engine.repo(repoId).fetch()).tags).toBe('follow');
      await ctx.store.registry.update(repoId, (r) => ({ ...r, tagsListedAt: now - TAG_LIST_MAX_AGE_MS }));
      const due = await engine.repo(repoId).fetch();
      expect(due.tags).toBe('all');
      expect(kinds(due)).toEqual(['new refs/tags/light']);
    } finally {
      vi.useRealTimers();
    }
  });

  it('a followed tag the server moved since its pack: kept when its new object is here, skipped when not', async () => {
    const { dir, repoId, ids } = await cloned('movedtag');
    const c = commit(dir, 'm.txt');
    git(dir, ['tag', '-a', '-m', 'Release 2', 'v2', c]);
    git(dir, ['tag', '-a', '-m', 'Release 3', 'v3', c]);
    // The confirming listing (not the branches') answers with where the tags are now.
    const moved = (lines: (string | null)[]) =>
      lines.map((l) =>
        l?.includes(' refs/tags/v2')
          ? `${ids[0]} refs/tags/v2\n`
          : l?.includes(' refs/tags/v3')
            ? `${'1'.repeat(40)} refs/tags/v3\n`
            : l,
      );
    const result = await scripted({ lsRefs: moved }, () => engine.repo(repoId).fetch());
    expect(kinds(result)).toEqual(['fast-forward refs/remotes/origin/main', 'new refs/tags/v2']);
    expect(result.updated.find((u) => u.name === 'refs/tags/v2')?.new).toBe(ids[0]);
    expect(result.objects.tag).toBe(2);
  });

  it('records what the fetch cost and when, forgets an old move, and puts the new commit in the commit-graph', async () => {
    const { dir, repoId } = await cloned('record');
    commit(dir, 'r.txt');
    await ctx.store.registry.update(repoId, (r) => ({ ...r, movedTo: 'https://elsewhere.test/record' }));
    const before = (await ctx.store.registry.get(repoId))!;
    // The clone's graph is written in the background: once it is, the fetch's commits come on top.
    const graphBefore = await commitGraphStatus(ctx, repoId);
    const packsBefore = await packFiles(ctx, repoId);
    const now = Date.now() + 60_000;
    vi.useFakeTimers({ toFake: ['Date'], now });
    const result = await engine
      .repo(repoId)
      .fetch()
      .finally(() => vi.useRealTimers());
    const after = (await ctx.store.registry.get(repoId))!;
    expect(after.movedTo).toBeUndefined();
    expect(after.lastFetchedAt).toBe(now);
    expect(after.bytesFetched).toBe((before.bytesFetched ?? 0) + result.bytesReceived);
    const fs = ctx.store.repoFs.open(repoId).promises;
    let added = 0;
    for (const p of (await packFiles(ctx, repoId)).filter((p) => !packsBefore.includes(p))) {
      if (/\.(pack|idx)$/.test(p)) added += (await fs.readFile(`${GITDIR}/objects/pack/${p}`)).length;
    }
    expect(added).toBeGreaterThan(0);
    expect(after.sizeBytes).toBe(before.sizeBytes + added);
    expect((await commitGraphStatus(ctx, repoId)).commits).toBe(graphBefore.commits + 1);
  });

  it('passes its crash points in order; one failing while writing keeps nothing and is the error told', async () => {
    const { dir, repoId } = await cloned('crash');
    commit(dir, 'k.txt');
    const packs = await packFiles(ctx, repoId);
    const refs = await readStored(repoId, 'packed-refs');
    const full = new Error('the disk is full');
    ctx.store.crash.setHook((point) => {
      if (point === 'fetch:files-written') throw full;
    });
    const err = await failure(engine.repo(repoId).fetch()).finally(() => ctx.store.crash.setHook(undefined));
    expect(err).toBe(full);
    expect(await packFiles(ctx, repoId)).toEqual(packs);
    expect(await readStored(repoId, 'packed-refs')).toBe(refs);
    // Cancelled as the write fails: the cancel is what the caller hears, not the failure that came with it.
    const controller = new AbortController();
    ctx.store.crash.setHook((point) => {
      if (point !== 'fetch:files-written') return;
      controller.abort();
      throw full;
    });
    const cancelled = await failure(engine.repo(repoId).fetch({}, { signal: controller.signal })).finally(
      () => ctx.store.crash.setHook(undefined),
    );
    expect(cancelled.code).toBe('ABORTED');
    expect(await packFiles(ctx, repoId)).toEqual(packs);
    const points: string[] = [];
    ctx.store.crash.setHook((point) => {
      points.push(point);
    });
    const result = await engine
      .repo(repoId)
      .fetch()
      .finally(() => ctx.store.crash.setHook(undefined));
    expect(points).toEqual(['fetch:files-written', 'fetch:files-committed']);
    expect(kinds(result)).toEqual(['fast-forward refs/remotes/origin/main']);
    // Nothing new: nothing is written, so no crash point is passed.
    points.length = 0;
    ctx.store.crash.setHook((point) => {
      points.push(point);
    });
    await engine
      .repo(repoId)
      .fetch()
      .finally(() => ctx.store.crash.setHook(undefined));
    expect(points).toEqual([]);
  });

  it('a repo whose packed-refs is gone gets its refs back as new, with nothing to fetch', async () => {
    const { repoId, ids } = await cloned('norefs');
    await ctx.store.repoFs.open(repoId).promises.unlink(`${GITDIR}/packed-refs`);
    ctx.repos.forget(repoId);
    const result = await engine.repo(repoId).fetch();
    expect(kinds(result)).toEqual(['new refs/remotes/origin/main']);
    expect(result).toMatchObject({ newCommits: 0, negotiation: { rounds: 0 } });
    expect(await readStored(repoId, 'packed-refs')).toContain(`${ids[1]} refs/remotes/origin/main\n`);
  });
});

describe('fetchRepo: what it reads of the local repo (mutfetch9b)', () => {
  const writeStored = (repoId: string, path: string, text: string) =>
    ctx.store.repoFs.open(repoId).promises.writeFile(`${GITDIR}/${path}`, text);
  const haveLines = (body: string) => requestLines(body).filter((l) => l.startsWith('have '));

  it('offers as haves a detached HEAD, loose branches and tags (peeled), packed refs; no ref outside them', async () => {
    const s = server('tips');
    const side: Record<string, string> = {};
    for (const b of ['head-only', 'loose-only', 'tagged-only', 'hidden-only']) {
      git(s.dir, ['checkout', '-q', '-b', b, s.ids[0]]);
      side[b] = commit(s.dir, `${b}.txt`);
    }
    git(s.dir, ['tag', '-a', '-m', 'Side', 'side-tag', side['tagged-only']]);
    const tagObject = git(s.dir, ['rev-parse', 'side-tag']);
    git(s.dir, ['checkout', '-q', 'main']);
    const { repoId } = await engine.clone({ url: s.url });
    // Each side commit is named now by one ref of another kind only, as git keeps them.
    const packed = await readStored(repoId, 'packed-refs');
    expect(packed).toContain(`${side['hidden-only']} refs/remotes/origin/hidden-only\n`);
    const kept = packed
      .split('\n')
      .filter((l, i, a) => !/-only|side-tag/.test(l) && !/side-tag/.test(a[i - 1] ?? ''));
    await writeStored(repoId, 'packed-refs', kept.join('\n'));
    await writeStored(repoId, 'HEAD', `${side['head-only']}\n`);
    await writeStored(repoId, 'refs/heads/loose-only', `${side['loose-only']}\n`);
    await ctx.store.repoFs
      .open(repoId)
      .promises.mkdir(`${GITDIR}/refs/tags`)
      .catch(() => undefined);
    await writeStored(repoId, 'refs/tags/side-tag', `${tagObject}\n`);
    // Named like a branch below refs/keep/, but no branch: only refs/heads/, refs/remotes/ and refs/tags/ are.
    for (const d of ['refs/keep', 'refs/keep/refs', 'refs/keep/refs/heads'])
      await ctx.store.repoFs.open(repoId).promises.mkdir(`${GITDIR}/${d}`);
    await writeStored(repoId, 'refs/keep/refs/heads/hidden-only', `${side['hidden-only']}\n`);
    ctx.repos.forget(repoId);
    for (const b of Object.keys(side)) git(s.dir, ['branch', '-D', b]);
    git(s.dir, ['tag', '-d', 'side-tag']);
    commit(s.dir, 'next.txt');
    served.requests.length = 0;
    const result = await engine.repo(repoId).fetch();
    expect(kinds(result)).toEqual(['fast-forward refs/remotes/origin/main']);
    const haves = haveLines(fetchBodies()[0]);
    for (const b of ['head-only', 'loose-only', 'tagged-only', 'main']) {
      expect(haves, b).toContain(`have ${b === 'main' ? s.ids[1] : side[b]}`);
    }
    expect(haves).not.toContain(`have ${side['hidden-only']}`);
    expect(haves).not.toContain(`have ${tagObject}`);
  });

  it("offers a commit the remote's refs name and the packs hold, not its ancestors; one held only loose is wanted", async () => {
    const { dir, repoId, ids } = await cloned('known-tips');
    git(dir, ['branch', 'stable']);
    const next = commit(dir, 'k.txt');
    // The new commit stored here loose, as a local commit pushed to the remote is: the fetch wants what
    // the packs lack (wants), and takes as known common only what they hold, so it never offers a want.
    const raw = execFileSync('git', ['cat-file', 'commit', next], { cwd: dir });
    const loose = deflateSync(Buffer.concat([Buffer.from(`commit ${raw.length}\0`), raw]));
    const fs = ctx.store.repoFs.open(repoId).promises;
    await fs.mkdir(`${GITDIR}/objects/${next.slice(0, 2)}`).catch(() => undefined);
    await fs.writeFile(`${GITDIR}/objects/${next.slice(0, 2)}/${next.slice(2)}`, loose);
    ctx.repos.forget(repoId);
    served.requests.length = 0;
    const result = await engine.repo(repoId).fetch();
    expect(kinds(result)).toEqual([
      'fast-forward refs/remotes/origin/main',
      'new refs/remotes/origin/stable',
    ]);
    const [request] = fetchBodies();
    expect(requestLines(request)).toContain(`want ${next}`);
    // stable's commit, advertised and held: sent once, and what is below it (ids[0], tag v1's) is common.
    expect(haveLines(request)).toEqual([`have ${ids[1]}`]);
  });

  it('wants no commit a ref here names: a commit made here and pushed, held loose, arrives with no fetch', async () => {
    const { dir, repoId, ids } = await cloned('lead11-pushed');
    const next = commit(dir, 'k.txt');
    // The commit, its tree and its blob stored here loose, and main naming it, as a local commit pushed leaves them.
    const fs = ctx.store.repoFs.open(repoId).promises;
    for (const oid of [
      next,
      git(dir, ['rev-parse', `${next}^{tree}`]),
      git(dir, ['rev-parse', `${next}:k.txt`]),
    ]) {
      const type = git(dir, ['cat-file', '-t', oid]);
      const raw = execFileSync('git', ['cat-file', type, oid], { cwd: dir });
      await fs.mkdir(`${GITDIR}/objects/${oid.slice(0, 2)}`).catch(() => undefined);
      const loose = deflateSync(Buffer.concat([Buffer.from(`${type} ${raw.length}\0`), raw]));
      await fs.writeFile(`${GITDIR}/objects/${oid.slice(0, 2)}/${oid.slice(2)}`, loose);
    }
    await writeStored(repoId, 'refs/heads/main', `${next}\n`);
    ctx.repos.forget(repoId);
    served.requests.length = 0;
    const result = await engine.repo(repoId).fetch();
    expect(kinds(result)).toEqual(['fast-forward refs/remotes/origin/main']);
    expect(result.updated[0]).toMatchObject({ old: ids[1], new: next });
    expect(result).toMatchObject({ newCommits: 0, negotiation: { rounds: 0 } });
    expect(fetchBodies()).toEqual([]);
    expect(await readStored(repoId, 'packed-refs')).toContain(`${next} refs/remotes/origin/main\n`);
    const exported = join(await exportAsDotGit(ctx, repoId, root), '.git');
    git(exported, ['fsck', '--connectivity-only', '--no-progress']);
  });

  it('completes a thin pack from stored trees, and a base blob a filter left out is fetched first', async () => {
    const s = server('thin');
    // Trees big enough that git sends the changed ones as deltas against those the client has.
    const files = Array.from({ length: 40 }, (_, i) => `dir/file${i}.txt`);
    execFileSync('sh', ['-c', 'mkdir -p dir && for f in "$@"; do echo "$f" > "$f"; done', 'sh', ...files], {
      cwd: s.dir,
    });
    const lines = Array.from(
      { length: 200 },
      (_, i) => `line ${i} of a file long enough to be a delta base\n`,
    );
    commit(s.dir, 'big.txt', lines.join(''));
    const notes = Array.from(
      { length: 200 },
      (_, i) => `note ${i}, a second file long enough to be a base\n`,
    );
    commit(s.dir, 'notes.txt', notes.join(''));
    git(s.dir, ['add', 'dir']);
    git(s.dir, ['commit', '-q', '-m', 'dir']);
    const { repoId } = await engine.clone({ url: s.url });
    commit(s.dir, 'dir/file7.txt');
    const progress: { phase: string }[] = [];
    const thin = await engine.repo(repoId).fetch({}, { onProgress: (p) => progress.push(p) });
    expect(thin.objects).toMatchObject({ commit: 1, blob: 0 });
    expect(thin.completedFromLocal).toBeGreaterThan(0);
    // The pack's own progress is told too: its bytes, and the deltas resolved.
    expect(progress.map((p) => p.phase)).toEqual(expect.arrayContaining(['receiving', 'resolving']));
    // Unfiltered now: big.txt's new version comes as a delta against the old, which the clone left out.
    git(s.dir, ['config', 'uploadpack.allowFilter', 'false']);
    commit(s.dir, 'big.txt', `${lines.join('')}one more line\n`);
    // Cancelled while that base is fetched (the blob fetch's request: no haves): its batch is cancelled
    // with the fetch, and neither stores anything.
    const packsBefore = await packFiles(ctx, repoId);
    const controller = new AbortController();
    const blobRequests: string[] = [];
    onPost = (body) => {
      if (!body.includes('command=fetch') || body.includes('have ')) return;
      blobRequests.push(body);
      controller.abort();
    };
    const cancelled = await failure(engine.repo(repoId).fetch({}, { signal: controller.signal })).finally(
      () => (onPost = undefined),
    );
    expect(cancelled.code).toBe('ABORTED');
    expect(blobRequests).toHaveLength(1);
    expect(await packFiles(ctx, repoId)).toEqual(packsBefore);
    const lazy = await engine.repo(repoId).fetch();
    expect(lazy.completedFromLocal).toBeGreaterThan(0);
    const exported = join(await exportAsDotGit(ctx, repoId, root), '.git');
    git(exported, ['fsck', '--connectivity-only', '--no-progress']);
    expect(git(exported, ['cat-file', '-p', 'refs/remotes/origin/main:big.txt'])).toBe(
      git(s.dir, ['cat-file', '-p', 'main:big.txt']),
    );

    // Recorded as a full clone, the repo is no promisor: a base it lacks is not asked for but refused, and
    // nothing is stored.
    await ctx.store.registry.update(repoId, (r) => ({ ...r, filter: null }));
    commit(s.dir, 'notes.txt', `${notes.join('')}one more note\n`);
    const held = await packFiles(ctx, repoId);
    served.requests.length = 0;
    const missing = await failure(engine.repo(repoId).fetch());
    expect(missing.code).toBe('PACK_DELTA_BASE_MISSING');
    expect(fetchBodies()).toHaveLength(1);
    expect(await packFiles(ctx, repoId)).toEqual(held);
  });

  it('tells a fast-forward from a forced update past a shallow boundary, from an old tip not stored, and a day of clock skew', async () => {
    // Depth 1 both sides: the new commit's parent is not stored, the walk ends there. (Not the first
    // commit: the clone holds it, tag v1's.)
    const shallow = await cloned('forcedshallow', 3, 1);
    git(shallow.dir, ['reset', '-q', '--hard', shallow.ids[1]]);
    commit(shallow.dir, 'fresh.txt');
    expect(kinds(await engine.repo(shallow.repoId).fetch({ depth: 1 }))).toEqual([
      'forced refs/remotes/origin/main',
    ]);

    const { dir, repoId, ids } = await cloned('skew');
    // A commit dated a day before the old tip (as a skewed clock makes), then one at the usual time.
    const old = Number(git(dir, ['log', '-1', '--format=%ct', ids[1]]));
    const skewed = (seconds: number, file: string) => {
      execFileSync('sh', ['-c', `echo ${seconds} > ${file} && git add ${file} && git commit -q -m skewed`], {
        cwd: dir,
        env: datedGitEnv(seconds),
      });
      commit(dir, `after-${file}`);
    };
    skewed(old - 86_400, 'day.txt');
    expect(kinds(await engine.repo(repoId).fetch())).toEqual(['fast-forward refs/remotes/origin/main']);
    // More than a day older than the old tip: the walk stops there, and calls it forced (git would not).
    const tip = git(dir, ['rev-parse', 'HEAD']);
    skewed(Number(git(dir, ['log', '-1', '--format=%ct', tip])) - 86_401, 'more.txt');
    expect(kinds(await engine.repo(repoId).fetch())).toEqual(['forced refs/remotes/origin/main']);

    // The remote-tracking branch names a commit this repo does not hold: no walk finds it.
    const packed = await readStored(repoId, 'packed-refs');
    const here = git(dir, ['rev-parse', 'HEAD']);
    await writeStored(repoId, 'packed-refs', packed.replaceAll(here, '1'.repeat(40)));
    ctx.repos.forget(repoId);
    commit(dir, 'last.txt');
    expect(kinds(await engine.repo(repoId).fetch())).toEqual(['forced refs/remotes/origin/main']);
  });

  it('fetches a full clone without a filter, and skips a fetch refspec it cannot read', async () => {
    const s = server('fullclone');
    git(s.dir, ['branch', 'feature']);
    const { repoId } = await engine.clone({ url: s.url, filter: null });
    commit(s.dir, 'full.txt');
    git(s.dir, ['checkout', '-q', 'feature']);
    commit(s.dir, 'feature.txt');
    const { fs, gitdir } = await openRepo(ctx, repoId);
    const isogit = (await import('isomorphic-git')).default;
    await isogit.setConfig({
      fs,
      gitdir,
      path: 'remote.origin.fetch',
      value: 'refs/heads/*:refs/remotes/x/one',
    });
    await isogit.setConfig({
      fs,
      gitdir,
      path: 'remote.origin.fetch',
      value: '+refs/heads/main:refs/remotes/origin/main',
      append: true,
    });
    served.requests.length = 0;
    const result = await engine.repo(repoId).fetch();
    expect(kinds(result)).toEqual(['fast-forward refs/remotes/origin/main']);
    expect(result).toMatchObject({ filter: null, objects: { blob: 1 }, warnings: [] });
    expect(fetchBodies().join('')).not.toContain('filter');
  });

  it('ends a negotiation 256 haves in vain after the last new ACK, resending what is common once a round; never before an ACK', async () => {
    const { dir, ids } = server('invain', 1);
    // 271 branches of a commit each, dated between main's two commits, which the server will forget: the
    // skipping negotiator sends every tip (through a line of 271 commits it would skip). One git fast-import.
    const stream = Array.from({ length: 271 }, (_, i) => {
      const message = `old ${i}\n`;
      const content = `${i}\n`;
      return `commit refs/heads/old/${i}\ncommitter A <a@example.com> ${clock + 1 + i} +0000\ndata ${message.length}\n${message}M 644 inline old.txt\ndata ${content.length}\n${content}\n`;
    });
    execFileSync('git', ['fast-import', '--quiet'], { cwd: dir, input: stream.join('') });
    clock += 400;
    const tip = commit(dir, 'tip.txt');
    const { repoId } = await engine.clone({ url: `${served.base}/invain` });
    execFileSync(
      'sh',
      ['-c', "git for-each-ref --format='delete %(refname)' refs/heads/old | git update-ref --stdin"],
      { cwd: dir },
    );
    git(dir, ['reflog', 'expire', '--expire=now', '--all']);
    git(dir, ['gc', '-q', '--prune=now']);
    // main now a history of its own: its old commits stay on the server, unlisted, and are ACKed; nothing
    // common leads to the new one, so the server never says ready.
    git(dir, ['checkout', '-q', '--orphan', 'next']);
    commit(dir, 'next.txt');
    git(dir, ['branch', '-f', 'main', 'next']);
    git(dir, ['checkout', '-q', 'main']);
    git(dir, ['branch', '-D', 'next']);
    served.requests.length = 0;
    const result = await engine.repo(repoId).fetch();
    expect(kinds(result)).toEqual(['forced refs/remotes/origin/main']);
    const rounds = fetchBodies().map(requestLines);
    // The first round: main's tip, ACKed (a new common commit), and 15 old ones; then 32 + 64 + 128 + 32 more
    // in vain, exactly 256 (MAX_IN_VAIN) with the fifth, which says done. The tip is sent again in each, once.
    expect(rounds.map((r) => r.includes('done'))).toEqual([false, false, false, false, true]);
    expect(rounds.map((r) => r.filter((l) => l.startsWith('have ')).length)).toEqual([16, 33, 65, 129, 33]);
    expect(rounds[0]).toContain(`have ${tip}`);
    for (const r of rounds.slice(1)) {
      expect(r.filter((l) => l === `have ${tip}` || l === `have ${ids[0]}`)).toEqual([`have ${tip}`]);
    }

    // A server that now holds none of this repo's commits ACKs nothing: the haves are not in vain until it
    // ACKs one (as git's seen_ack), so all 274 are sent (the 271, main's two and the last tip) and done
    // only when none is left.
    git(dir, ['tag', '-d', 'v1']);
    git(dir, ['checkout', '-q', '--orphan', 'again']);
    commit(dir, 'again.txt');
    git(dir, ['branch', '-f', 'main', 'again']);
    git(dir, ['checkout', '-q', 'main']);
    git(dir, ['branch', '-D', 'again']);
    git(dir, ['reflog', 'expire', '--expire=now', '--all']);
    git(dir, ['gc', '-q', '--prune=now']);
    served.requests.length = 0;
    expect(kinds(await engine.repo(repoId).fetch())).toEqual(['forced refs/remotes/origin/main']);
    const unacked = fetchBodies().map(requestLines);
    expect(unacked.map((r) => r.includes('done'))).toEqual([false, false, false, false, false, true]);
    expect(unacked.map((r) => r.filter((l) => l.startsWith('have ')).length)).toEqual([
      16, 32, 64, 128, 34, 0,
    ]);
  });

  it('grows the haves of each round as git does: doubled up to 16384, then by a tenth', () => {
    const sizes = [16];
    while (sizes.length < 13) sizes.push(nextHaveBatch(sizes.at(-1) ?? 0));
    expect(sizes).toEqual([16, 32, 64, 128, 256, 512, 1024, 2048, 4096, 8192, 16384, 18022, 19824]);
  });

  it('a fetch answered without a pack, `done` too, is NOT_GIT', async () => {
    let dropPack = false;
    const scripted = testEngine({
      storage: memoryStorage(),
      fetch: async (input, init) => {
        const answer = await served.fetch(input, init);
        const body = init?.body instanceof Uint8Array ? Buffer.from(init.body).toString('latin1') : '';
        if (!dropPack || !body.includes('command=fetch')) return answer;
        // Acknowledgments and nothing else, after `done` too: the only answer without a pack the parser takes.
        return new Response(Buffer.from('0014acknowledgments\n0008NAK\n0000'), { headers: answer.headers });
      },
    });
    try {
      const { dir, url } = server('nopack');
      const { repoId } = await scripted.engine.clone({ url });
      commit(dir, 'p.txt');
      dropPack = true;
      const err = await failure(scripted.engine.repo(repoId).fetch());
      expect(err.code).toBe('NOT_GIT');
      expect(err.message).toBe(`${url} ended its fetch response without a pack.`);
    } finally {
      await scripted.engine.close();
    }
  });
});

describe('fetchRepo: what it stores, records and tells (mutfetch9a)', () => {
  it('the pack set learnt marks a promisor pack as its files do; the record says whether the repo is shallow', async () => {
    const { dir, repoId } = await cloned('marks', 3, 1);
    const packsAsRead = async () => {
      const held = (await ctx.store.packs.for(repoId)).packs.map((p) => `${p.checksum} ${p.promisor}`);
      ctx.store.packs.forget(repoId);
      const read = (await ctx.store.packs.for(repoId)).packs.map((p) => `${p.checksum} ${p.promisor}`);
      return { held: held.sort(), read: read.sort() };
    };
    commit(dir, 'p.txt');
    await engine.repo(repoId).fetch();
    const filtered = await packsAsRead();
    expect(filtered.held).toEqual(filtered.read);
    expect((await ctx.store.registry.get(repoId))?.shallow).toBe(true);
    // A server that stopped filtering sends a pack with its blobs: no promisor, in the files or here.
    git(dir, ['config', 'uploadpack.allowFilter', 'false']);
    commit(dir, 'q.txt');
    expect((await engine.repo(repoId).fetch()).filter).toBeNull();
    const whole = await packsAsRead();
    expect(whole.held).toEqual(whole.read);
    expect(whole.held.filter((p) => p.endsWith(' false'))).toHaveLength(1);
  });

  it('tells how many bases of a thin pack came from the local objects, and none when nothing came', async () => {
    const { dir, repoId } = await cloned('thin-bases', 1);
    // A tree big enough for git to send its next version as a delta against this one, which we hold.
    execFileSync('sh', ['-c', 'mkdir many && for i in $(seq 30); do echo $i > many/file-$i.txt; done'], {
      cwd: dir,
    });
    git(dir, ['add', 'many']);
    git(dir, ['commit', '-q', '-m', 'many files']);
    await engine.repo(repoId).fetch();
    commit(dir, 'many/file-1.txt', 'changed\n');
    const thin = await engine.repo(repoId).fetch();
    expect(thin.completedFromLocal).toBeGreaterThan(0);
    const exported = join(await exportAsDotGit(ctx, repoId, root), '.git');
    git(exported, ['fsck', '--connectivity-only', '--no-progress']);
    expect((await engine.repo(repoId).fetch()).completedFromLocal).toBe(0);
  });

  it('with lockToStore: an abort ends the wait for the lock', async () => {
    const { dir, repoId } = await cloned('lockwait', 3, 1);
    commit(dir, 'w.txt');
    // Another operation holds the lock: the fetch waits for it until its signal fires.
    let release = () => {};
    const holding = ctx.store.locks.withRepoLock(
      repoId,
      'test',
      () => new Promise<void>((r) => (release = r)),
    );
    const controller = new AbortController();
    const waiting = failure(
      fetchRepo(ctx, repoId, {}, { signal: controller.signal }, { lockToStore: { what: 'history fill' } }),
    );
    while (!(await ctx.store.locks.repoLockWanted(repoId))) await new Promise((r) => setTimeout(r, 5));
    controller.abort();
    release();
    await holding;
    const err = await waiting;
    expect(err.code).toBe('ABORTED');
    expect(err.message).toBe(`Stopped waiting for the other tab's work on this repository.`);
  });

  it("waits for the repo's running maintenance before writing, but not under the repo's lock", async () => {
    const { dir, repoId } = await cloned('idle', 3, 1);
    // A merge that says when the fetch waits for it (maintenanceIdle), and ends then.
    const waitedFor: string[] = [];
    const merge = (what: string) => {
      const p = Promise.resolve();
      p.catch = ((onRejected) => {
        waitedFor.push(what);
        ctx.maintenance.running.delete(repoId);
        return Promise.prototype.catch.call(p, onRejected);
      }) as typeof p.catch;
      ctx.maintenance.running.set(repoId, p);
    };
    const written: string[] = [];
    ctx.store.crash.setHook((point) => {
      if (point === 'fetch:files-written') written.push(waitedFor.join());
    });
    try {
      commit(dir, 'i.txt');
      merge('plain');
      await fetchRepo(ctx, repoId, {}, {});
      expect(written).toEqual(['plain']);
      // The API's fetch holds the lock, as a fill's store does (lockToStore): the merge cannot be running.
      commit(dir, 'j.txt');
      merge('locked');
      await engine.repo(repoId).fetch();
      expect(written).toEqual(['plain', 'plain']);
    } finally {
      ctx.store.crash.setHook(undefined);
      ctx.maintenance.running.delete(repoId);
    }
  });
});
