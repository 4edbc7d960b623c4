// The widget's minimal read against the crafted v2 responder (test/support/craftedServer.ts): what it asks
// for (filters, depth, wants, ref prefixes), what it stores, and each refusal, on repositories built here
// object by object, so every case costs milliseconds and no git server. What a good read returns is checked
// against git http-backend and the git CLI in readFileMinimal.test.ts.
import { createHash } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type MinimalProgress,
  type MinimalStrategy,
  minimalRepoId,
  readFileMinimal,
} from '../workers/ops/read/readFileMinimal.ts';
import { buildPack, objectId } from '../workers/pack/testing/packBuilder.ts';
import { GITDIR } from '../workers/store/repoFs.ts';
import { concatBytes } from '../workers/wire/pktLine.ts';
import { type CraftedRepo, requestLines, startCraftedServer, tinyRepoPack } from './support/craftedServer.ts';
import { testEngine } from './support/engine.ts';
import { exportDir } from './support/exportGitDir.ts';
import { offlineGit, offlineGitBuffer } from './support/git.ts';
import { failure, packFiles, snapshotGitDir } from './support/repoChecks.ts';

const { engine, ctx } = testEngine();
const enc = new TextEncoder();

type Obj = { type: 'commit' | 'tree' | 'blob'; data: Uint8Array; id: string };

function obj(type: Obj['type'], data: Uint8Array): Obj {
  return { type, data, id: objectId(type, data) };
}

function tree(entries: [mode: string, name: string, id: string][]): Obj {
  return obj(
    'tree',
    concatBytes(
      entries.flatMap(([mode, name, id]) => [enc.encode(`${mode} ${name}\0`), Buffer.from(id, 'hex')]),
    ),
  );
}

/**
 * A commit of `a.txt`, `dir/sub/deep.txt`, a submodule `mod` and a binary `dir/bin`: each tree on the way to
 * deep.txt is its own object, so a read can be given them one request at a time.
 */
function deepRepo(message = 'first') {
  const a = obj('blob', enc.encode('hello\n'));
  const deep = obj('blob', enc.encode('deep down\n'));
  const bin = obj('blob', Uint8Array.of(0, 1, 2, 0, 255));
  const sub = tree([['100644', 'deep.txt', deep.id]]);
  const dir = tree([
    ['100644', 'bin', bin.id],
    ['40000', 'sub', sub.id],
  ]);
  const root = tree([
    ['100644', 'a.txt', a.id],
    ['40000', 'dir', dir.id],
    ['160000', 'mod', '5'.repeat(40)],
  ]);
  const who = 'A U Thor <author@example.com> 1700000000 +0000';
  const commit = obj(
    'commit',
    enc.encode(`tree ${root.id}\nauthor ${who}\ncommitter ${who}\n\n${message}\n`),
  );
  const pack = (...objs: Obj[]) => buildPack(objs.map(({ type, data }) => ({ type, data })));
  return { a, deep, bin, sub, dir, root, commit, pack };
}

const repo = deepRepo();
const other = deepRepo('second');
const TAG = '6'.repeat(40);
const main = (oid = repo.commit.id) => [
  { name: 'HEAD', oid, symrefTarget: 'refs/heads/main' },
  { name: 'refs/heads/main', oid },
];
/** The objects of the commit, one request each: commit, root, dir, sub, then deep.txt. */
const oneByOne: CraftedRepo = {
  refs: main(),
  pack: repo.pack(repo.commit, repo.root, repo.dir, repo.sub, repo.a, repo.deep, repo.bin),
  packs: [
    repo.pack(repo.commit),
    repo.pack(repo.root),
    repo.pack(repo.dir),
    repo.pack(repo.sub),
    repo.pack(repo.deep),
  ],
  shallow: [repo.commit.id],
};
const everything = repo.pack(repo.commit, repo.root, repo.dir, repo.sub, repo.a, repo.deep, repo.bin);
const allTrees = repo.pack(repo.commit, repo.root, repo.dir, repo.sub);

let crafted: Awaited<ReturnType<typeof startCraftedServer>>;
const names: string[] = [];
/** Serves `r` under a new name (each read keeps its own repo, keyed by URL); returns its URL. */
function serve(r: CraftedRepo): string {
  const name = `r${names.length}.git`;
  names.push(name);
  served[name] = r;
  return `${crafted.url}/${name}`;
}
const served: Record<string, CraftedRepo> = {};

/** The POSTs a repo was sent, as pkt-line texts, ls-refs and fetch apart. */
function asked(url: string) {
  const name = url.slice(url.lastIndexOf('/') + 1);
  const posts = crafted.requests.filter((r) => r.repo === name).map((r) => requestLines(r.body));
  return {
    lsRefs: posts.filter((l) => l.includes('command=ls-refs')),
    fetches: posts.filter((l) => l.includes('command=fetch')),
  };
}

async function gitFile(url: string, path: string): Promise<string> {
  return (await ctx.store.repoFs
    .open(minimalRepoId(url))
    .promises.readFile(`${GITDIR}/${path}`, 'utf8')) as string;
}

beforeAll(async () => {
  crafted = await startCraftedServer(served);
});
afterAll(async () => {
  await crafted.close();
});

describe('readFileMinimal: what it asks for', () => {
  it('walks a deep path one request per missing object, as two-levels asks, and stores a shallow partial repo', async () => {
    const url = serve(oneByOne);
    const progress: MinimalProgress[] = [];
    const read = await readFileMinimal(
      ctx,
      url,
      'main',
      '/dir/sub/deep.txt/',
      {},
      { onProgress: (p) => progress.push(p) },
    );
    expect(read).toMatchObject({
      repoId: minimalRepoId(url),
      url,
      ref: 'main',
      refName: 'refs/heads/main',
      commit: repo.commit.id,
      path: 'dir/sub/deep.txt',
      kind: 'file',
      file: { oid: repo.deep.id, mode: '100644', size: 10, binary: false },
      network: { requests: 7 },
    });
    expect(Buffer.from(read.file!.bytes).toString()).toBe('deep down\n');
    expect(read.entries).toBeUndefined();
    const { lsRefs, fetches } = asked(url);
    expect(lsRefs).toHaveLength(1);
    expect(lsRefs[0].filter((l) => l.startsWith('ref-prefix'))).toEqual([
      'ref-prefix refs/heads/main',
      'ref-prefix refs/tags/main',
    ]);
    const wants = fetches.map((f) => f.filter((l) => /^(want|filter|deepen) /.test(l)).sort());
    expect(wants).toEqual([
      ['deepen 1', 'filter combine:blob:none+tree:2', `want ${repo.commit.id}`],
      ['filter combine:blob:none+tree:2', `want ${repo.root.id}`],
      ['filter combine:blob:none+tree:2', `want ${repo.dir.id}`],
      ['filter combine:blob:none+tree:2', `want ${repo.sub.id}`],
      [`want ${repo.deep.id}`],
    ]);
    for (const f of fetches) expect(f).toEqual(expect.arrayContaining(['done', 'ofs-delta', 'no-progress']));
    // Progress: connecting, then before and after each request, with what it is for and the cost so far.
    expect(progress[0]).toEqual({ phase: 'connecting' });
    const fetching = progress.slice(1) as Extract<MinimalProgress, { phase: 'fetching' }>[];
    // Each request is told before it goes out (requests so far: 2, 3, …) and after its pack is stored.
    const told = fetching.map((p) => `${p.what} ${p.requests}`);
    expect([...new Set(told)]).toEqual([
      'commit 2',
      'commit 3',
      'tree 3',
      'tree 4',
      'tree 5',
      'tree 6',
      'blob 6',
      'blob 7',
    ]);
    expect(told.at(-1)).toBe('blob 7');
    expect(fetching.every((p) => p.phase === 'fetching')).toBe(true);
    expect(fetching.at(-1)?.bytes).toBe(read.network.bytes);
    expect(fetching[0].bytes).toBeGreaterThan(0);
    expect(fetching[0].bytes).toBeLessThan(fetching[1].bytes);

    // The git directory: HEAD detached at the commit, the branch tracked, the commit shallow, the packs promisor.
    expect(await gitFile(url, 'HEAD')).toBe(`${repo.commit.id}\n`);
    expect(await gitFile(url, 'refs/remotes/origin/main')).toBe(`${repo.commit.id}\n`);
    expect(await gitFile(url, 'shallow')).toBe(`${repo.commit.id}\n`);
    expect(await gitFile(url, 'description')).toBe(`Files read by ${ctx.settings.productName}\n`);
    const packs = await packFiles(ctx, read.repoId);
    expect(packs.filter((p) => p.endsWith('.pack'))).toHaveLength(5);
    const promisors = packs.filter((p) => p.endsWith('.promisor'));
    expect(promisors).toHaveLength(5);
    const promised = await Promise.all(promisors.map((p) => gitFile(url, `objects/pack/${p}`)));
    expect(promised.sort()).toEqual(['', '', '', '', `${repo.commit.id} refs/heads/main\n`]);
    // Promisor in the engine's memory too: a pack merge in this engine merges only promisor packs.
    const inMemory = (await ctx.store.packs.for(read.repoId)).packs;
    expect(inMemory.map((p) => p.promisor)).toEqual([true, true, true, true, true]);
    expect(await ctx.store.registry.get(read.repoId)).toMatchObject({
      id: read.repoId,
      url,
      name: 'r0',
      branch: null,
      headOid: repo.commit.id,
      filter: 'tree:0',
      shallow: true,
      minimal: true,
      bytesFetched: read.network.bytes,
    });
    const scratch = await mkdtemp(join(tmpdir(), 'blobless-crafted-minimal-'));
    try {
      const exported = join(scratch, '.git');
      await exportDir(ctx.store.repoFs.open(read.repoId), GITDIR, exported);
      // git, unable to fetch, reads the path from what the read stored.
      expect(
        (await offlineGitBuffer(exported, ['cat-file', 'blob', 'HEAD:dir/sub/deep.txt'])).toString(),
      ).toBe('deep down\n');
      expect((await offlineGit(exported, ['rev-list', '--count', 'origin/main'])).trim()).toBe('1');
      expect((await offlineGit(exported, ['config', 'remote.origin.partialclonefilter'])).trim()).toBe(
        'tree:0',
      );
    } finally {
      await rm(scratch, { recursive: true, force: true });
    }
  });

  it('a second read asks only where the branch is; a new commit adds its shallow line and counts its bytes', async () => {
    const url = serve(oneByOne);
    const first = await readFileMinimal(ctx, url, 'main', 'dir/sub/deep.txt');
    // A number, not the record: the registry may hand back one object it keeps updating.
    const createdAt = (await ctx.store.registry.get(first.repoId))?.createdAt;
    expect(createdAt).toBeGreaterThan(0);
    const again = await readFileMinimal(ctx, url, 'main', 'dir/sub/deep.txt');
    expect(again.network.requests).toBe(2);
    expect(asked(url).fetches).toHaveLength(5);
    expect(Buffer.from(again.file!.bytes).toString()).toBe('deep down\n');
    // The branch moved to a commit of another tree: its read is stored beside the first.
    served[url.slice(url.lastIndexOf('/') + 1)] = {
      refs: main(other.commit.id),
      pack: other.pack(other.commit, other.root, other.dir, other.sub, other.a, other.deep, other.bin),
      shallow: [other.commit.id],
    };
    const moved = await readFileMinimal(ctx, url, 'main', 'a.txt');
    expect(moved.commit).toBe(other.commit.id);
    expect(await gitFile(url, 'shallow')).toBe(
      [repo.commit.id, other.commit.id].sort().join('\n').concat('\n'),
    );
    expect(await gitFile(url, 'refs/remotes/origin/main')).toBe(`${other.commit.id}\n`);
    const after = await ctx.store.registry.get(first.repoId);
    expect(after?.createdAt).toBe(createdAt);
    expect(after?.headOid).toBe(other.commit.id);
    expect(after?.bytesFetched).toBe(first.network.bytes + again.network.bytes + moved.network.bytes);
  });

  const filters: [MinimalStrategy, string, string, string | null][] = [
    // strategy, the commit's filter for a path 3 deep, for a path 1 deep, the filter of each later tree
    ['commit-only', 'tree:0', 'tree:0', 'tree:0'],
    ['root-tree', 'tree:1', 'tree:1', 'tree:0'],
    ['top-trees', 'combine:blob:none+tree:2', 'tree:1', 'tree:0'],
    ['two-levels', 'combine:blob:none+tree:2', 'tree:1', 'combine:blob:none+tree:2'],
    ['path-trees', 'combine:blob:none+tree:3', 'tree:1', 'tree:0'],
    ['all-trees', 'blob:none', 'blob:none', 'tree:0'],
  ];
  it.each(filters)(
    '%s: the commit asked with %s (%s for a file at the root)',
    async (strategy, deep, top, trees) => {
      const url = serve({ ...oneByOne, packs: [repo.pack(repo.commit), repo.pack(repo.root)] });
      await readFileMinimal(ctx, url, 'main', 'dir/sub', { strategy });
      const filter = (f: string[]) => f.find((l) => l.startsWith('filter '));
      const { fetches } = asked(url);
      expect(filter(fetches[0])).toBe(`filter ${deep.replace('tree:3', 'tree:2')}`);
      // The root, then dir (whose answer, the server's whole pack, brings sub too).
      expect(fetches.slice(1).map(filter)).toEqual([`filter ${trees}`, `filter ${trees}`]);
      const deeper = serve({ ...oneByOne, packs: [repo.pack(repo.commit)] });
      await readFileMinimal(ctx, deeper, 'main', 'dir/sub/deep.txt', { strategy });
      expect(filter(asked(deeper).fetches[0])).toBe(`filter ${deep}`);
      const atRoot = serve({ ...oneByOne, packs: [repo.pack(repo.commit)] });
      await readFileMinimal(ctx, atRoot, 'main', 'a.txt', { strategy });
      expect(filter(asked(atRoot).fetches[0])).toBe(`filter ${top}`);
      const rootFolder = serve({ ...oneByOne, packs: [repo.pack(repo.commit)] });
      await readFileMinimal(ctx, rootFolder, 'main', '', { strategy });
      expect(filter(asked(rootFolder).fetches[0])).toBe(`filter ${top}`);
    },
  );

  it('without filter nor shallow advertised: no filter, no deepen, no tree fetched, no shallow file', async () => {
    const url = serve({
      refs: main(),
      pack: allTrees,
      packs: [allTrees, repo.pack(repo.deep)],
      fetchCapabilities: '',
    });
    const read = await readFileMinimal(ctx, url, 'main', 'dir/sub/deep.txt');
    expect(Buffer.from(read.file!.bytes).toString()).toBe('deep down\n');
    const { fetches } = asked(url);
    expect(fetches.map((f) => f.filter((l) => /^(want|filter|deepen) /.test(l)))).toEqual([
      [`want ${repo.commit.id}`],
      [`want ${repo.deep.id}`],
    ]);
    await expect(gitFile(url, 'shallow')).rejects.toThrow();
  });

  it('lists a folder with the type of each entry; a binary file says so', async () => {
    const url = serve({ refs: main(), pack: everything });
    expect((await readFileMinimal(ctx, url, '', '//a.txt//')).path).toBe('a.txt');
    const root = await readFileMinimal(ctx, url, '', '/');
    expect(root).toMatchObject({ kind: 'folder', path: '', refName: 'refs/heads/main' });
    expect(root.file).toBeUndefined();
    expect(root.entries).toEqual([
      { name: 'a.txt', mode: '100644', oid: repo.a.id, type: 'blob' },
      { name: 'dir', mode: '040000', oid: repo.dir.id, type: 'tree' },
      { name: 'mod', mode: '160000', oid: '5'.repeat(40), type: 'commit' },
    ]);
    const dir = await readFileMinimal(ctx, url, 'HEAD', 'dir');
    expect(dir.entries?.map((e) => e.type)).toEqual(['blob', 'tree']);
    const bin = await readFileMinimal(ctx, url, 'HEAD', 'dir/bin');
    expect(bin.file).toMatchObject({ binary: true, size: 5 });
  });
});

describe('readFileMinimal: which ref', () => {
  const refs = [
    { name: 'HEAD', oid: repo.commit.id, symrefTarget: 'refs/heads/main' },
    { name: 'refs/heads/main', oid: repo.commit.id },
    { name: 'refs/heads/main-old', oid: other.commit.id },
    { name: 'refs/heads/both', oid: repo.commit.id },
    { name: 'refs/tags/both', oid: other.commit.id },
    { name: 'refs/tags/v1', oid: TAG, peeled: other.commit.id },
  ];
  const both = { refs, pack: concatPacks() };
  function concatPacks() {
    return buildPack(
      [repo, other].flatMap((r) =>
        [r.commit, r.root, r.dir, r.sub, r.a, r.deep, r.bin].map(({ type, data }) => ({ type, data })),
      ),
    );
  }

  it('HEAD, "" and " HEAD " ask for HEAD and take its symref target', async () => {
    for (const ref of ['HEAD', '', ' HEAD ']) {
      const url = serve(both);
      const read = await readFileMinimal(ctx, url, ref, 'a.txt');
      expect(read).toMatchObject({ commit: repo.commit.id, refName: 'refs/heads/main', ref });
      // The ls-refs sent with the GET (lsRefsAhead: no agent, no unborn) answered it: not asked again.
      expect(asked(url).lsRefs).toEqual([['command=ls-refs', 'peel', 'symrefs', 'ref-prefix HEAD']]);
    }
  });

  it('a full ref name is asked as given; a short name as branch, then tag, the branch winning', async () => {
    const full = serve(both);
    expect(await readFileMinimal(ctx, full, 'refs/tags/both', 'a.txt')).toMatchObject({
      commit: other.commit.id,
      refName: 'refs/tags/both',
    });
    expect(asked(full).lsRefs[0].filter((l) => l.startsWith('ref-prefix'))).toEqual([
      'ref-prefix refs/tags/both',
    ]);
    const short = serve(both);
    expect(await readFileMinimal(ctx, short, ' both ', 'a.txt')).toMatchObject({
      commit: repo.commit.id,
      refName: 'refs/heads/both',
    });
    // refs/heads/ given: the short name after it is what the prefixes are made of.
    const heads = serve(both);
    expect(await readFileMinimal(ctx, heads, 'refs/heads/main', 'a.txt')).toMatchObject({
      refName: 'refs/heads/main',
    });
    expect(asked(heads).lsRefs[0].filter((l) => l.startsWith('ref-prefix'))).toEqual([
      'ref-prefix refs/heads/main',
    ]);
  });

  it('an annotated tag reads the commit it peels to, and writes no tracking ref', async () => {
    const url = serve(both);
    const read = await readFileMinimal(ctx, url, 'v1', 'a.txt');
    expect(read).toMatchObject({ commit: other.commit.id, refName: 'refs/tags/v1' });
    expect(asked(url).fetches[0]).toContain(`want ${other.commit.id}`);
    const promisor = (await packFiles(ctx, read.repoId)).find((p) => p.endsWith('.promisor'))!;
    expect(await gitFile(url, `objects/pack/${promisor}`)).toBe(`${other.commit.id} refs/tags/v1\n`);
    const files = Object.keys(await snapshotGitDir(ctx, read.repoId));
    expect(files.filter((f) => f.includes('/refs/'))).toEqual([]);
  });

  it('a full commit id, in any case, is read without ls-refs, and keeps an empty promisor line', async () => {
    const url = serve(both);
    const read = await readFileMinimal(ctx, url, other.commit.id.toUpperCase(), 'a.txt');
    expect(read).toMatchObject({ commit: other.commit.id, refName: null });
    expect(asked(url).lsRefs).toEqual([]);
    expect(read.network.requests).toBe(2);
    const promisor = (await packFiles(ctx, read.repoId)).find((p) => p.endsWith('.promisor'))!;
    expect(await gitFile(url, `objects/pack/${promisor}`)).toBe('');
  });

  it('only an exact name counts: main-old is not main, and a prefix is not a branch', async () => {
    const url = serve({ refs: refs.filter((r) => r.name !== 'refs/heads/main'), pack: both.pack });
    const err = await failure(readFileMinimal(ctx, url, 'main', 'a.txt'));
    expect(err.code).toBe('REF_NOT_FOUND');
    expect(err.message).toBe(`${url} has no branch or tag named "main".`);
  });

  it('an abbreviated commit id: REF_NOT_FOUND, saying a commit needs its full id', async () => {
    const url = serve(both);
    for (const ref of ['abcd', 'ABCD', repo.commit.id.slice(0, 39)]) {
      const err = await failure(readFileMinimal(ctx, url, ref, 'a.txt'));
      expect(err.code).toBe('REF_NOT_FOUND');
      expect(err.message).toContain('full 40-digit id');
    }
    for (const ref of ['abc', 'abcg', 'abcdg', 'gabcd']) {
      const err = await failure(readFileMinimal(ctx, url, ref, 'a.txt'));
      expect(err.message).toBe(`${url} has no branch or tag named "${ref}".`);
    }
  });

  it('an unborn HEAD, asked as "": the repository has no commits yet', async () => {
    const url = serve({ refs: [{ name: 'HEAD', symrefTarget: 'refs/heads/main' }], pack: both.pack });
    const err = await failure(readFileMinimal(ctx, url, '', 'a.txt'));
    expect(err.code).toBe('REF_NOT_FOUND');
    expect(err.message).toBe(`${url} has no commits yet.`);
  });

  it('a HEAD without a symref target reads detached, with no tracking ref', async () => {
    const url = serve({ refs: [{ name: 'HEAD', oid: repo.commit.id }], pack: both.pack });
    const read = await readFileMinimal(ctx, url, 'HEAD', 'a.txt');
    expect(read.refName).toBeNull();
    expect(Object.keys(await snapshotGitDir(ctx, read.repoId)).filter((f) => f.includes('/refs/'))).toEqual(
      [],
    );
  });
});

describe('readFileMinimal: what it refuses', () => {
  it('a path that is no path inside a repository, before any request', async () => {
    const url = serve({ refs: main(), pack: everything });
    for (const path of ['..', 'dir/../a.txt', 'dir/./sub', 'dir//sub']) {
      const err = await failure(readFileMinimal(ctx, url, 'main', path));
      expect(err.code).toBe('PATH_NOT_FOUND');
      expect(err.message).toBe(`"${path}" is not a path inside a repository.`);
    }
    expect(crafted.requests.filter((r) => url.endsWith(`/${r.repo}`))).toEqual([]);
  });

  it('a path not in the commit, or below a file', async () => {
    const url = serve({ refs: main(), pack: everything });
    for (const path of ['nope', 'a.txt/x', 'dir/sub/deep.txt/x', 'dir/nope/x']) {
      const err = await failure(readFileMinimal(ctx, url, 'main', path));
      expect(err.code).toBe('PATH_NOT_FOUND');
      expect(err.message).toBe(`There is no file or folder "${path}" in main.`);
    }
    const err = await failure(readFileMinimal(ctx, url, '', 'nope'));
    expect(err.message).toBe('There is no file or folder "nope" in HEAD.');
  });

  it('a submodule: IS_SUBMODULE, naming its commit', async () => {
    const url = serve({ refs: main(), pack: everything });
    const err = await failure(readFileMinimal(ctx, url, 'main', 'mod'));
    expect(err.code).toBe('IS_SUBMODULE');
    expect(err.message).toBe(
      `"mod" is a submodule in main: it points at commit ${'5'.repeat(10)}… of another repository, and has no content here.`,
    );
  });

  it('a tree or blob the server does not send, and an empty pack stores nothing', async () => {
    const empty = buildPack([]);
    const tree = serve({ refs: main(), pack: empty, packs: [repo.pack(repo.commit, repo.root)] });
    const err = await failure(readFileMinimal(ctx, tree, 'main', 'dir/sub/deep.txt'));
    expect(err.code).toBe('PATH_NOT_FOUND');
    expect(err.message).toBe(`${tree} did not send the tree ${repo.dir.id.slice(0, 10)}… it was asked for.`);
    expect((await packFiles(ctx, minimalRepoId(tree))).filter((p) => p.endsWith('.pack'))).toHaveLength(1);
    const blob = serve({ refs: main(), pack: empty, packs: [allTrees] });
    const blobErr = await failure(readFileMinimal(ctx, blob, 'main', 'a.txt'));
    expect(blobErr.message).toBe(
      `${blob} did not send the blob ${repo.a.id.slice(0, 10)}… it was asked for.`,
    );
  });

  it('a commit the server has not: REF_NOT_FOUND with its words; another error as the server said it', async () => {
    const url = serve({
      refs: main(),
      pack: everything,
      fetchError: `upload-pack: not our ref ${repo.commit.id}`,
    });
    const err = await failure(readFileMinimal(ctx, url, repo.commit.id, 'a.txt'));
    expect(err.code).toBe('REF_NOT_FOUND');
    expect(err.message).toBe(
      `${url} has no commit ${repo.commit.id} (upload-pack: not our ref ${repo.commit.id}).`,
    );
    for (const words of ['bad object x', 'Object Not Found', 'NOT OUR REF']) {
      const other = serve({ refs: main(), pack: everything, fetchError: words });
      expect((await failure(readFileMinimal(ctx, other, 'main', 'a.txt'))).code).toBe('REF_NOT_FOUND');
    }
    const denied = serve({ refs: main(), pack: everything, fetchError: 'access denied' });
    const deniedErr = await failure(readFileMinimal(ctx, denied, 'main', 'a.txt'));
    expect(deniedErr.code).toBe('REMOTE_ERROR');
  });

  it('a v0 server, and a SHA-256 one', async () => {
    const v0 = serve({ protocol: 0, refs: main(), pack: everything });
    const err = await failure(readFileMinimal(ctx, v0, 'main', 'a.txt'));
    expect(err.code).toBe('UNSUPPORTED_PROTOCOL');
    expect(err.message).toContain(`${v0} speaks only git protocol v0;`);
    const sha256 = serve({ refs: main(), pack: everything, objectFormat: 'sha256' });
    const shaErr = await failure(readFileMinimal(ctx, sha256, 'main', 'a.txt'));
    expect(shaErr.code).toBe('UNSUPPORTED_OBJECT_FORMAT');
    expect(shaErr.message).toBe(`${sha256} uses sha256 object ids; Blobless reads SHA-1 repositories only.`);
  });

  it('a path deeper than the tree depth cap, before fetching any tree for it', async () => {
    const url = serve(oneByOne);
    // dir/sub is 2 folders deep: the root and dir are fetched and read, sub is refused unfetched.
    const err = await failure(readFileMinimal(ctx, url, 'main', 'dir/sub', { limits: { maxTreeDepth: 1 } }));
    expect(err).toMatchObject({ code: 'HOSTILE_TREE', check: 'TREE_TOO_DEEP' });
    expect(err.message).toContain('at "dir/sub"');
    expect(asked(url).fetches).toHaveLength(3);
  });

  it('a cancelled read: ABORTED, before any request or during one', async () => {
    const url = serve(oneByOne);
    const before = new AbortController();
    before.abort();
    expect(
      (await failure(readFileMinimal(ctx, url, 'main', 'a.txt', {}, { signal: before.signal }))).code,
    ).toBe('ABORTED');
    expect(crafted.requests.filter((r) => url.endsWith(`/${r.repo}`))).toEqual([]);
    const during = new AbortController();
    const err = await failure(
      readFileMinimal(
        ctx,
        url,
        'main',
        'dir/sub/deep.txt',
        {},
        {
          signal: during.signal,
          onProgress: (p) => {
            if (p.phase === 'fetching' && p.what === 'tree') during.abort();
          },
        },
      ),
    );
    expect(err.code).toBe('ABORTED');
    // Cancelled once the file's own request is answered: nothing is returned, nothing recorded.
    const last = serve({ refs: main(), pack: allTrees, packs: [allTrees, repo.pack(repo.a)] });
    const atEnd = new AbortController();
    const lastErr = await failure(
      readFileMinimal(
        ctx,
        last,
        'main',
        'a.txt',
        {},
        {
          signal: atEnd.signal,
          onProgress: (p) => {
            if (p.phase === 'fetching' && p.what === 'blob' && p.requests === 4) atEnd.abort();
          },
        },
      ),
    );
    expect(lastErr.code).toBe('ABORTED');
    expect(await ctx.store.registry.get(minimalRepoId(last))).toBeUndefined();
  });
});

// A crafted server's HEAD: the symref target is a name the server chose, and the minimal read writes the
// tracking ref of the branch it names. A name git refuses must never become a path:
// `refs/remotes/origin/../../../config` is the repo's own config.
describe('readFileMinimal against bad HEADs', () => {
  const tiny = tinyRepoPack('first', { withBlob: true });
  const head = (symrefTarget: string, oid: string | null = tiny.commit): CraftedRepo => ({
    refs: [{ name: 'HEAD', oid: oid ?? undefined, symrefTarget }],
    pack: tiny.pack,
  });
  const escapes = {
    'config.git': 'refs/heads/../../../config',
    'alternates.git': 'refs/heads/../../../objects/info/alternates',
    'dotdot.git': 'refs/heads/a..b',
    'lock.git': 'refs/heads/main.lock',
    'hidden.git': 'refs/heads/.hidden/main',
  };
  beforeAll(() => {
    for (const [name, target] of Object.entries(escapes)) served[name] = head(target);
    served['unborn.git'] = head('refs/heads/main', null);
    served['missing-commit.git'] = { ...head('refs/heads/main'), pack: tinyRepoPack('another').pack };
  });

  it.each(Object.entries(escapes))(
    '%s: HEAD -> %s reads the file and writes no file outside refs/remotes/origin',
    async (name) => {
      const url = `${crafted.url}/${name}`;
      const repoId = minimalRepoId(url);
      const read = await readFileMinimal(ctx, url, 'HEAD', 'a.txt');
      expect(Buffer.from(read.file!.bytes)).toEqual(Buffer.from(tiny.blob));
      const files = await snapshotGitDir(ctx, repoId);
      // The git directory holds what a read writes, and nothing named by the server.
      const paths = Object.keys(files).map((p) => p.slice(`${GITDIR}/`.length));
      expect(paths.filter((p) => !p.startsWith('objects/pack/pack-')).sort()).toEqual([
        'HEAD',
        'config',
        'description',
        'info/exclude',
      ]);
      const fs = ctx.store.repoFs.open(repoId).promises;
      expect(await fs.readFile(`${GITDIR}/HEAD`, 'utf8')).toBe(`${tiny.commit}\n`);
      const scratch = await mkdtemp(join(tmpdir(), 'blobless-bad-head-'));
      try {
        const exported = join(scratch, '.git');
        await exportDir(ctx.store.repoFs.open(repoId), GITDIR, exported);
        // git reads the config the read wrote (not a commit id), and sees no alternates nor refs.
        expect((await offlineGit(exported, ['config', 'remote.origin.url'])).trim()).toBe(url);
        expect(await offlineGit(exported, ['for-each-ref'])).toBe('');
        expect(await offlineGitBuffer(exported, ['cat-file', 'blob', 'HEAD:a.txt'])).toEqual(
          Buffer.from(tiny.blob),
        );
        await offlineGit(exported, ['fsck', '--no-progress']);
      } finally {
        await rm(scratch, { recursive: true, force: true });
        await engine.repo(repoId).delete();
      }
    },
  );

  it('a fetch answered without a pack: NOT_GIT, and nothing of it stored', async () => {
    const url = serve({ refs: main(), pack: everything, noPack: true });
    const err = await failure(readFileMinimal(ctx, url, 'main', 'a.txt'));
    expect(err.code).toBe('NOT_GIT');
    expect(err.message).toBe(`${url} sent no pack in its fetch response.`);
    expect(await packFiles(ctx, minimalRepoId(url)).catch(() => [])).toEqual([]);
  });

  it('waits while another operation writes the repo, says what it is to others, and stops waiting when cancelled', async () => {
    const url = serve({ ...oneByOne, packs: undefined });
    const repoId = minimalRepoId(url);
    const { locks } = ctx.store;
    // Cancelled while another operation holds the repo: the wait ends at once, and the read stored nothing.
    let release = () => {};
    const held = locks.withRepoLock(repoId, 'another write', () => new Promise<void>((r) => (release = r)));
    const stop = new AbortController();
    const waiting = failure(readFileMinimal(ctx, url, 'main', 'a.txt', {}, { signal: stop.signal }));
    // Cancelled only once it waits for the repo (before that, its own checks would stop it).
    while (!(await locks.repoLockWanted(repoId))) await new Promise((r) => setTimeout(r, 5));
    let settled = false;
    void waiting.then(() => {
      settled = true;
    });
    stop.abort();
    // A deadline, not a timing: the wait ends as the signal fires; only a read still waiting takes this long.
    await Promise.race([waiting, new Promise((r) => setTimeout(r, 10_000))]);
    const stoppedWhileHeld = settled;
    release();
    await held;
    expect(stoppedWhileHeld).toBe(true);
    expect((await waiting).code).toBe('ABORTED');
    expect(await packFiles(ctx, repoId).catch(() => [])).toEqual([]);
    // While the read holds the repo, an operation that waits for it is told what holds it.
    const told: (string | undefined)[] = [];
    let queued: Promise<void> | undefined;
    const read = await readFileMinimal(
      ctx,
      url,
      'main',
      'a.txt',
      {},
      {
        onProgress: (p) => {
          if (p.phase === 'fetching' && !queued) {
            queued = locks.withRepoLock(repoId, 'after the read', async () => {}, {
              onWait: ({ what }) => told.push(what),
            });
          }
        },
      },
    );
    await queued;
    expect(Buffer.from(read.file!.bytes).toString()).toBe('hello\n');
    expect(told[0]).toBe('reading a file of the remote');
  });

  it('an unborn HEAD: REF_NOT_FOUND, saying the repository has no commits', async () => {
    const err = await failure(readFileMinimal(ctx, `${crafted.url}/unborn.git`, 'HEAD', 'a.txt'));
    expect(err.code).toBe('REF_NOT_FOUND');
    expect(err.message).toContain('has no commits yet');
  });

  it('a HEAD whose commit the server does not send: a typed error, and no HEAD stored', async () => {
    const url = `${crafted.url}/missing-commit.git`;
    const err = await failure(readFileMinimal(ctx, url, '', 'a.txt'));
    expect(err.code).toBe('REF_NOT_FOUND');
    expect(err.message).toBe(
      `${url} did not send the commit ${tiny.commit.slice(0, 10)}… it named for HEAD.`,
    );
    const files = await snapshotGitDir(ctx, minimalRepoId(url)).catch(() => ({}));
    expect(Object.keys(files).filter((p) => p.endsWith('/HEAD') || p.includes('/refs/'))).toEqual([]);
  });
});

describe('minimalRepoId', () => {
  const sha = (href: string) => createHash('sha1').update(href).digest('hex').slice(0, 12);
  it('is the repository name made safe, cut at 40 characters, and a hash of the normalized URL', () => {
    expect(minimalRepoId('https://git.example/team/My Repo+Name!!.git')).toBe(
      `minimal-my-20repo-name--${sha('https://git.example/team/My%20Repo+Name!!.git')}`,
    );
    const long = `https://git.example/team/${'A'.repeat(50)}.git`;
    expect(minimalRepoId(long)).toBe(`minimal-${'a'.repeat(40)}-${sha(long)}`);
    expect(minimalRepoId('https://Git.Example/x.git/')).toBe(`minimal-x-${sha('https://git.example/x.git')}`);
  });
});
