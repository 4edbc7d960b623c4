import { join } from 'node:path';
import git from 'isomorphic-git';
import { beforeAll, describe, expect, inject, it } from 'vitest';
import { maintenanceIdle, REPACK_THRESHOLD } from '../workers/ops/maintenance/packMaintenance.ts';
import { BLOB_BATCH_POLICY, planBlobBatches } from '../workers/ops/sync/lazyBlobs.ts';
import { type CheckoutProgress, type CheckoutResult, checkout } from '../workers/ops/worktree/checkout.ts';
import { GITDIR } from '../workers/store/repoFs.ts';
import { SHORT_RETRY, testEngine } from './support/engine.ts';
import { exportDir } from './support/exportGitDir.ts';
import { git as gitCli } from './support/git.ts';
import { repoStats, resetStats } from './support/serverStats.ts';
import { useTmpDir } from './support/tmpDir.ts';
import {
  exportWorktree,
  gitCheckoutOf,
  lsTree,
  readLightningWorktree,
  treeBlobs,
} from './support/worktree.ts';

const { engine, ctx } = testEngine({ retry: SHORT_RETRY });

const serverUrl = inject('gitServerUrl');
const fixturesDir = inject('fixturesDir');
const tmp = useTmpDir('checkout');

async function cloneBlobless(repo: string): Promise<string> {
  const { repoId } = await engine.clone({ url: `${serverUrl}/${repo}` });
  return repoId;
}

async function revParse(repo: string, rev: string): Promise<string> {
  return (await gitCli(['rev-parse', `${rev}^{commit}`], { cwd: join(fixturesDir, repo) })).trim();
}

let exports = 0;
/** A copy of the repo's git directory on disk, for the git CLI to read. */
async function exportGitDir(repoId: string): Promise<string> {
  await maintenanceIdle(ctx, repoId);
  const dest = join(tmp(), `export-${exports++}`);
  await exportDir(ctx.store.repoFs.open(repoId), GITDIR, dest);
  return dest;
}

/** The blob ids the repo stores, as the git CLI reads them. */
async function storedBlobs(repoId: string): Promise<string[]> {
  const out = await gitCli(['cat-file', '--batch-all-objects', '--batch-check=%(objectname) %(objecttype)'], {
    cwd: await exportGitDir(repoId),
  });
  return out
    .split('\n')
    .filter((l) => l.endsWith(' blob'))
    .map((l) => l.slice(0, 40))
    .sort();
}

/** `git ls-files --stage` of the repo's index. */
async function indexEntries(repoId: string): Promise<string[]> {
  const out = await gitCli(['--git-dir', await exportGitDir(repoId), 'ls-files', '--stage', '-z']);
  return out.split('\0').filter(Boolean).sort();
}

async function statusRows(repoId: string, filepaths?: string[]) {
  return git.statusMatrix({
    fs: ctx.store.repoFs.open(repoId),
    dir: '/',
    gitdir: GITDIR,
    filepaths,
    cache: {},
  });
}

async function headOf(repoId: string): Promise<{ branch: string | null; oid: string }> {
  const fs = ctx.store.repoFs.open(repoId);
  const branch = (await git.currentBranch({ fs, gitdir: GITDIR, fullname: false })) ?? null;
  return { branch, oid: await git.resolveRef({ fs, gitdir: GITDIR, ref: 'HEAD' }) };
}

type CheckoutArgs = Parameters<typeof checkout> extends [unknown, ...infer Rest] ? Rest : never;

async function checkoutError(...args: CheckoutArgs): Promise<Error & { code: string; paths?: string[] }> {
  try {
    await checkout(ctx, ...args);
  } catch (err) {
    return err as Error & { code: string };
  }
  throw new Error('checkout unexpectedly succeeded');
}

describe.each(['basic.git', 'features.git', 'small-sized.git'])(
  'checkout after a blob:none clone of %s',
  (repo) => {
    const bare = () => join(fixturesDir, repo);
    let repoId: string;
    let head: string;
    let result: CheckoutResult;
    let requests: number;
    let bytesPerBlob: number;
    const progress: CheckoutProgress[] = [];

    beforeAll(async () => {
      repoId = await cloneBlobless(repo);
      head = await revParse(repo, 'HEAD');
      bytesPerBlob = ctx.blobs.estimate(repoId);
      await resetStats();
      result = await checkout(ctx, repoId, 'HEAD', {}, { onProgress: (p) => progress.push(p) });
      requests = (await repoStats(repo)).requests;
    });

    it('leaves the working tree git leaves: same paths, bytes, modes, symlink targets and gitlink folders', async () => {
      expect(result.commit).toBe(head);
      expect(await readLightningWorktree(ctx.store.repoFs.open(repoId))).toEqual(
        await gitCheckoutOf(bare(), head, tmp()),
      );
    });

    it('leaves an index isomorphic-git finds clean and git reads as the tree, gitlinks included', async () => {
      const rows = await statusRows(repoId);
      const tree = await lsTree(bare(), head);
      // statusMatrix leaves submodules out.
      const files = [...tree].filter(([, e]) => e.type === 'blob').map(([path]) => path);
      expect(rows.map(([path]) => path).sort()).toEqual(files.sort());
      expect(rows.filter(([, h, w, s]) => !(h === 1 && w === 1 && s === 1))).toEqual([]);
      expect(await indexEntries(repoId)).toEqual(
        [...tree].map(([path, e]) => `${e.mode} ${e.oid} 0\t${path}`).sort(),
      );
    });

    it('copied to disk with its git directory, is a working tree git status finds clean', async () => {
      const dest = join(tmp(), `worktree-${exports++}`);
      await exportWorktree(ctx.store.repoFs.open(repoId), dest);
      await exportDir(ctx.store.repoFs.open(repoId), GITDIR, join(dest, '.git'));
      expect(await gitCli(['status', '--porcelain', '--ignore-submodules=none'], { cwd: dest })).toBe('');
    });

    it('fetched exactly the blobs of the tree, one request per planned batch', async () => {
      const wanted = await treeBlobs(bare(), head);
      expect(await storedBlobs(repoId)).toEqual(wanted);
      expect(result.blobsFetched).toBe(wanted.length);
      expect(result.requests).toBe(planBlobBatches(wanted.length, bytesPerBlob).length);
      expect(requests).toBe(result.requests);
      expect(result.bytes).toBeGreaterThan(0);
    });

    it('reports fetching, then writing, progress', async () => {
      const phases = progress.map((p) => p.phase);
      expect(phases[0]).toBe('fetching-blobs');
      expect(phases.lastIndexOf('fetching-blobs')).toBeLessThan(phases.indexOf('writing-files'));
      const last = progress.at(-1)!;
      expect(last.phase === 'writing-files' && last.files === last.totalFiles && last.totalFiles > 0).toBe(
        true,
      );
    });

    it('checks out the branch HEAD names, and records it', async () => {
      const branch = (await gitCli(['symbolic-ref', '--short', 'HEAD'], { cwd: bare() })).trim();
      expect(result.branch).toBe(branch);
      expect(await headOf(repoId)).toEqual({ branch, oid: head });
      expect(await ctx.store.registry.get(repoId)).toMatchObject({ branch, headOid: head });
    });

    it('a second checkout of the same commit makes no request, writes no file or object, and leaves HEAD and the index as they were', async () => {
      await resetStats();
      const fs = ctx.store.repoFs.open(repoId).promises;
      const gitFiles = () =>
        Promise.all(
          ['HEAD', 'index'].map(async (f) =>
            Buffer.from((await fs.readFile(`${GITDIR}/${f}`)) as Uint8Array).toString('hex'),
          ),
        );
      const before = await gitFiles();
      // Counted where it lands: the calls that change the file system, not the checkout's own counters.
      const storage = countStorageWrites(repoId);
      let again: CheckoutResult;
      try {
        again = await checkout(ctx, repoId, 'HEAD');
        await fs.flush();
      } finally {
        storage.stop();
      }
      // isomorphic-git rewrites HEAD and the index with the bytes they hold, and makes sure submodule folders
      // exist; no file of the working tree, no object, nothing is deleted.
      expect(storage.fsCalls.filter((c) => !/^(writeFile \/\.git\/(HEAD|index)|mkdir .*)$/.test(c))).toEqual(
        [],
      );
      for (const call of storage.fsCalls.filter((c) => c.startsWith('mkdir '))) {
        expect((await fs.stat(call.slice(6).replace(/^\/+/, '/'))).isDirectory(), call).toBe(true);
      }
      expect(await gitFiles()).toEqual(before);
      expect((await repoStats(repo)).requests).toBe(0);
      expect(again).toMatchObject({
        commit: head,
        blobsFetched: 0,
        requests: 0,
        filesWritten: 0,
        filesDeleted: 0,
      });
    });
  },
);

describe('features.git: switching branches', () => {
  const repo = 'features.git';
  const bare = join(fixturesDir, repo);
  let repoId: string;

  beforeAll(async () => {
    repoId = await cloneBlobless(repo);
    await checkout(ctx, repoId, 'main');
  });

  /**
   * Switches from `from` (checked out) to `to` and checks it against the git CLI: the blobs fetched are
   * those of `to` not yet stored, one request per batch; the files written are those that differ, the
   * files deleted those `to` lacks; the working tree is git's checkout of `to`, and clean.
   */
  async function expectSwitch(from: string, to: string, branch: string | null) {
    const fromTree = await lsTree(bare, await revParse(repo, from));
    const commit = await revParse(repo, to);
    const toTree = await lsTree(bare, commit);
    const stored = new Set(await storedBlobs(repoId));
    const newBlobs = (await treeBlobs(bare, commit)).filter((oid) => !stored.has(oid));
    const changed = [...toTree].filter(([path, e]) => {
      const before = fromTree.get(path);
      return e.type === 'blob' && (!before || before.oid !== e.oid || before.mode !== e.mode);
    });
    const removed = [...fromTree].filter(([path, e]) => e.type === 'blob' && !toTree.has(path));

    const writes = countWrites(repoId);
    const bytesPerBlob = ctx.blobs.estimate(repoId);
    await resetStats();
    const result = await checkout(ctx, repoId, to);
    const stats = await repoStats(repo);
    writes.stop();

    expect(result).toMatchObject({ commit, branch, blobsFetched: newBlobs.length });
    expect(result.requests).toBe(planBlobBatches(newBlobs.length, bytesPerBlob).length);
    expect(stats.requests).toBe(result.requests);
    expect(await storedBlobs(repoId)).toEqual([...new Set([...stored, ...newBlobs])].sort());
    expect(writes.paths.sort()).toEqual(changed.map(([path]) => `/${path}`).sort());
    expect(result.filesWritten).toBe(changed.length);
    expect(result.filesDeleted).toBe(removed.length);
    expect(await readLightningWorktree(ctx.store.repoFs.open(repoId))).toEqual(
      await gitCheckoutOf(bare, commit, tmp()),
    );
    expect((await statusRows(repoId)).filter(([, h, w, s]) => !(h === 1 && w === 1 && s === 1))).toEqual([]);
    expect(await indexEntries(repoId)).toEqual(
      [...toTree].map(([path, e]) => `${e.mode} ${e.oid} 0\t${path}`).sort(),
    );
    expect(await headOf(repoId)).toEqual({ branch, oid: commit });
    return { result, newBlobs, changed, removed };
  }

  it('main to dev: fetches the blobs of dev not stored (none: main merged dev), deletes what dev lacks', async () => {
    const { removed } = await expectSwitch('main', 'dev', 'dev');
    expect(removed.length).toBeGreaterThan(0);
  });

  it('dev is then a local branch tracking origin/dev, as git makes it', async () => {
    const fs = ctx.store.repoFs.open(repoId);
    expect(await git.getConfig({ fs, gitdir: GITDIR, path: 'branch.dev.merge' })).toBe('refs/heads/dev');
    expect(await git.getConfig({ fs, gitdir: GITDIR, path: 'branch.dev.remote' })).toBe('origin');
    const dest = await exportGitDir(repoId);
    expect((await gitCli(['--git-dir', dest, 'rev-parse', '--abbrev-ref', 'dev@{upstream}'])).trim()).toBe(
      'origin/dev',
    );
  });

  it('dev to feature/x: fetches only the blobs that differ, writes only the files that differ', async () => {
    const { newBlobs, changed } = await expectSwitch('dev', 'feature/x', 'feature/x');
    expect(newBlobs.length).toBeGreaterThan(0);
    expect(changed.length).toBeLessThan((await lsTree(bare, await revParse(repo, 'feature/x'))).size / 2);
  });

  it('feature/x back to main: the submodule folder comes back, nothing already stored is fetched', async () => {
    await expectSwitch('feature/x', 'main', 'main');
  });

  it('a tag detaches HEAD at its commit; emptied folders go, as in git', async () => {
    await expectSwitch('main', 'v0.1', null);
  });

  it('an unknown ref is REF_NOT_FOUND', async () => {
    expect((await checkoutError(repoId, 'no-such-branch')).code).toBe('REF_NOT_FOUND');
  });
});

describe('features.git: local changes', () => {
  const repo = 'features.git';
  const bare = join(fixturesDir, repo);
  let repoId: string;
  let main: string;
  let other: string;
  let untouched: string;

  beforeAll(async () => {
    repoId = await cloneBlobless(repo);
    main = await revParse(repo, 'main');
    other = await revParse(repo, 'feature/x');
    await checkout(ctx, repoId, 'main');
    const mainTree = await lsTree(bare, main);
    const otherTree = await lsTree(bare, other);
    expect(mainTree.get('README.md')?.oid).not.toBe(otherTree.get('README.md')?.oid);
    untouched = [...mainTree].find(
      ([p, e]) => e.type === 'blob' && otherTree.get(p)?.oid === e.oid && e.mode === '100644',
    )![0];
  });

  it('a change the switch would overwrite stops it with WORKTREE_DIRTY naming the file; nothing changes', async () => {
    const fs = ctx.store.repoFs.open(repoId).promises;
    await fs.writeFile('/README.md', 'my local edit\n', 'utf8');
    await fs.writeFile(`/${untouched}`, 'another local edit\n', 'utf8');
    const before = await readLightningWorktree(ctx.store.repoFs.open(repoId));
    const err = await checkoutError(repoId, 'feature/x');
    expect(err.code).toBe('WORKTREE_DIRTY');
    expect(err.paths).toEqual(['README.md']);
    expect(err.message).toMatch(/README\.md/);
    expect(await readLightningWorktree(ctx.store.repoFs.open(repoId))).toEqual(before);
    expect(await headOf(repoId)).toEqual({ branch: 'main', oid: main });
    // The switch did not create the branch either.
    await expect(
      git.resolveRef({ fs: ctx.store.repoFs.open(repoId), gitdir: GITDIR, ref: 'refs/heads/feature/x' }),
    ).rejects.toThrow();
  });

  it('force throws local changes away, as git checkout -f does', async () => {
    const result = await checkout(ctx, repoId, 'feature/x', { force: true });
    expect(result.branch).toBe('feature/x');
    expect(await readLightningWorktree(ctx.store.repoFs.open(repoId))).toEqual(
      await gitCheckoutOf(bare, other, tmp()),
    );
    expect((await statusRows(repoId)).filter(([, h, w, s]) => !(h === 1 && w === 1 && s === 1))).toEqual([]);
  });

  it('without force, a change the switch does not touch is carried over, as git does', async () => {
    const fs = ctx.store.repoFs.open(repoId).promises;
    await fs.writeFile(`/${untouched}`, 'carried over\n', 'utf8');
    await checkout(ctx, repoId, 'main');
    expect(await fs.readFile(`/${untouched}`, 'utf8')).toBe('carried over\n');
    const rows = await statusRows(repoId);
    expect(rows.filter(([, h, w, s]) => !(h === 1 && w === 1 && s === 1))).toEqual([[untouched, 1, 2, 1]]);
  });
});

describe('features.git: sparse checkout', () => {
  const repo = 'features.git';
  const bare = join(fixturesDir, repo);

  it('fetches and writes only what is under `paths`', async () => {
    const repoId = await cloneBlobless(repo);
    const head = await revParse(repo, 'HEAD');
    const paths = ['docs', 'scripts/build.sh'];
    const tree = await lsTree(bare, head);
    const under = (p: string) => paths.some((base) => p === base || p.startsWith(`${base}/`));
    const wanted = [
      ...new Set([...tree].filter(([p, e]) => under(p) && e.type === 'blob').map(([, e]) => e.oid)),
    ].sort();
    expect(wanted.length).toBeLessThan(new Set([...tree.values()].map((e) => e.oid)).size);

    await resetStats();
    const result = await checkout(ctx, repoId, 'HEAD', { paths: ['/docs/', 'scripts/build.sh'] });
    expect(result.blobsFetched).toBe(wanted.length);
    expect((await repoStats(repo)).requests).toBe(1);
    expect(await storedBlobs(repoId)).toEqual(wanted);

    const full = await gitCheckoutOf(bare, head, tmp());
    const expected = full.filter((e) => under(e.path) || paths.some((base) => base.startsWith(`${e.path}/`)));
    expect(await readLightningWorktree(ctx.store.repoFs.open(repoId))).toEqual(expected);
    const rows = await statusRows(repoId, paths);
    expect(rows.length).toBe([...tree.keys()].filter(under).length);
    expect(rows.filter(([, h, w, s]) => !(h === 1 && w === 1 && s === 1))).toEqual([]);
  });

  it('on an existing working tree: HEAD moves, and everything outside `paths` is left as it was', async () => {
    const repoId = await cloneBlobless(repo);
    await checkout(ctx, repoId, 'main');
    const main = await revParse(repo, 'main');
    const featureX = await revParse(repo, 'feature/x');
    const paths = ['src'];
    const under = (p: string) => paths.some((base) => p === base || p.startsWith(`${base}/`));
    // The trees differ both inside src (a rename, a new file) and outside it.
    const [mainTree, xTree] = await Promise.all([lsTree(bare, main), lsTree(bare, featureX)]);
    const differs = (keep: (p: string) => boolean) =>
      [...new Set([...mainTree.keys(), ...xTree.keys()])].filter(
        (p) => keep(p) && mainTree.get(p)?.oid !== xTree.get(p)?.oid,
      );
    expect(differs(under).length).toBeGreaterThan(0);
    expect(differs((p) => !under(p)).length).toBeGreaterThan(0);

    const result = await checkout(ctx, repoId, 'feature/x', { paths });
    expect(result.branch).toBe('feature/x');
    expect(await headOf(repoId)).toEqual({ branch: 'feature/x', oid: featureX });

    // The index: main's entries outside src, feature/x's inside it, as `git ls-files -s` lists them.
    const stage = (tree: typeof mainTree, keep: (p: string) => boolean) =>
      [...tree].filter(([p]) => keep(p)).map(([p, e]) => `${e.mode} ${e.oid} 0\t${p}`);
    expect(await indexEntries(repoId)).toEqual(
      [...stage(mainTree, (p) => !under(p)), ...stage(xTree, under)].sort(),
    );
    // The files: the same split of what git checks out for each commit.
    const [mainFiles, xFiles] = await Promise.all([
      gitCheckoutOf(bare, main, tmp()),
      gitCheckoutOf(bare, featureX, tmp()),
    ]);
    const expected = [
      ...mainFiles.filter((e) => !under(e.path)),
      ...xFiles.filter((e) => under(e.path)),
    ].sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
    expect(await readLightningWorktree(ctx.store.repoFs.open(repoId))).toEqual(expected);
  });

  it('a path the commit does not have is PATH_NOT_FOUND, before anything is fetched', async () => {
    const repoId = await cloneBlobless(repo);
    await resetStats();
    const err = await checkoutError(repoId, 'HEAD', { paths: ['docs', 'nope/missing.txt'] });
    expect(err.code).toBe('PATH_NOT_FOUND');
    expect(err.message).toMatch(/nope\/missing\.txt/);
    expect((await repoStats(repo)).requests).toBe(0);
  });
});

describe('small-sized.git: batches', () => {
  it('sends one request per batch of missing blobs', async () => {
    const repo = 'small-sized.git';
    const bare = join(fixturesDir, repo);
    const repoId = await cloneBlobless(repo);
    const wanted = await treeBlobs(bare, await revParse(repo, 'HEAD'));
    await resetStats();
    const result = await checkout(ctx, repoId, 'HEAD', {}, { batching: { size: 64, concurrency: 2 } });
    expect(result.requests).toBe(Math.ceil(wanted.length / 64));
    expect((await repoStats(repo)).requests).toBe(result.requests);
    expect(result.blobsFetched).toBe(wanted.length);
  });

  it("splits as planned, small first, in at most the git CLI's requests plus four", async () => {
    const repo = 'small-sized.git';
    const bare = join(fixturesDir, repo);
    const head = await revParse(repo, 'HEAD');
    const wanted = await treeBlobs(bare, head);
    // The git CLI's checkout of its own blob:none clone, counted by the same server.
    const gitDir = join(tmp(), `git-clone-${exports++}`);
    await gitCli(['clone', '--quiet', '--filter=blob:none', '--no-checkout', `${serverUrl}/${repo}`, gitDir]);
    await resetStats();
    await gitCli(['-C', gitDir, 'checkout', '--quiet', head]);
    const gitRequests = (await repoStats(repo)).requests;
    expect(gitRequests).toBeGreaterThan(0);

    // small-sized.git's 0.6 MB of blobs is one request by default: the policy scaled down to its size
    // makes it split as a large repository does.
    const policy = { firstBytes: 16 * 1024, singleRequestBytes: 64 * 1024, maxBatchBytes: 1024 * 1024 };
    const repoId = await cloneBlobless(repo);
    const plan = planBlobBatches(wanted.length, ctx.blobs.estimate(repoId), {
      ...BLOB_BATCH_POLICY,
      ...policy,
    });
    expect(plan.length).toBeGreaterThan(2);
    expect(plan[0]).toBe(Math.min(...plan));
    await resetStats();
    const result = await checkout(ctx, repoId, 'HEAD', {}, { batching: { policy } });
    expect((await repoStats(repo)).requests).toBe(plan.length);
    expect(result.requests).toBe(plan.length);
    expect(result.requests).toBeLessThanOrEqual(gitRequests + 4);
    expect(await storedBlobs(repoId)).toEqual(wanted);
  });

  it('stages the files from the ingester as the pack arrives; from the stored pack past hookedBytes; as git does either way', async () => {
    const repo = 'small-sized.git';
    const bare = join(fixturesDir, repo);
    const head = await revParse(repo, 'HEAD');
    const expected = await gitCheckoutOf(bare, head, tmp());
    // Files read back from a stored pack are a step of the checkout's timeline: none when the hook had them all.
    const fromPacks = () =>
      performance.getEntriesByName(`${ctx.settings.timelinePrefix}checkout:pack-files-staged`).length;
    for (const hookedBytes of [undefined, 0, 8 * 1024]) {
      const repoId = await cloneBlobless(repo);
      const result = await checkout(ctx, repoId, 'HEAD', {}, { hookedBytes, batching: { size: 64 } });
      expect(result.requests).toBeGreaterThan(2);
      expect(await readLightningWorktree(ctx.store.repoFs.open(repoId))).toEqual(expected);
      if (hookedBytes === undefined) expect(fromPacks()).toBe(0);
      else expect(fromPacks()).toBe(result.requests);
    }
  });

  it('merges no pack inside the checkout: the merge comes after it', async () => {
    const repo = 'small-sized.git';
    const repoId = await cloneBlobless(repo);
    const wanted = await treeBlobs(join(fixturesDir, repo), await revParse(repo, 'HEAD'));
    const size = Math.ceil(wanted.length / (REPACK_THRESHOLD + 4));
    const batches = Math.ceil(wanted.length / size);
    const packSet = await ctx.store.packs.for(repoId);
    let packsWhileWriting = -1;
    await checkout(
      ctx,
      repoId,
      'HEAD',
      {},
      {
        batching: { size },
        onProgress: (p) => {
          if (p.phase === 'writing-files' && packsWhileWriting < 0) packsWhileWriting = packSet.packs.length;
        },
      },
    );
    // The clone's pack and one per batch, none merged yet: more promisor packs than the threshold.
    expect(packsWhileWriting).toBe(1 + batches);
    expect(batches).toBeGreaterThan(REPACK_THRESHOLD);
    // Scheduled once the checkout is done.
    await maintenanceIdle(ctx, repoId);
    expect((await ctx.store.packs.for(repoId)).packs.length).toBeLessThan(1 + batches);
  });
});

describe('a checkout that fails or is cancelled leaves the previous working tree', () => {
  const repo = 'features.git';
  const bare = join(fixturesDir, repo);
  let repoId: string;
  let main: string;

  beforeAll(async () => {
    repoId = await cloneBlobless(repo);
    main = await revParse(repo, 'main');
    await checkout(ctx, repoId, 'main');
  });

  /** The previous checkout, as IndexedDB holds it: lightning-fs reloads its tree after going idle. */
  async function expectMainStored(): Promise<void> {
    expect(ctx.store.repoFs.backend(repoId).pendingWrites).toBe(0);
    await (
      ctx.store.repoFs.open(repoId).promises as unknown as { _deactivate(): Promise<void> }
    )._deactivate();
    expect(await readLightningWorktree(ctx.store.repoFs.open(repoId))).toEqual(
      await gitCheckoutOf(bare, main, tmp()),
    );
    expect(await headOf(repoId)).toEqual({ branch: 'main', oid: main });
    await expect(
      git.resolveRef({ fs: ctx.store.repoFs.open(repoId), gitdir: GITDIR, ref: 'refs/heads/feature/x' }),
    ).rejects.toThrow();
    expect((await statusRows(repoId)).filter(([, h, w, s]) => !(h === 1 && w === 1 && s === 1))).toEqual([]);
  }

  it('cancelled while fetching blobs', async () => {
    const controller = new AbortController();
    // As a user would: soon after the fetch starts, not inside its progress callback.
    const onProgress = (p: CheckoutProgress) => {
      if (p.phase === 'fetching-blobs') queueMicrotask(() => controller.abort());
    };
    const err = await checkoutError(repoId, 'feature/x', {}, { onProgress, signal: controller.signal });
    expect(err.code).toBe('ABORTED');
    await expectMainStored();
  });

  it('failing to fetch a blob: MissingObjectError naming a file', async () => {
    const record = (await ctx.store.registry.get(repoId))!;
    // A server that is gone: the blobs v0.1 has and main lacks cannot be fetched.
    await ctx.store.registry.put({ ...record, url: 'http://127.0.0.1:9/features.git' });
    try {
      const err = await checkoutError(repoId, 'v0.1');
      expect(err.code).toBe('MISSING_OBJECT');
      expect((err as unknown as { path?: string }).path).toMatch(/./);
    } finally {
      await ctx.store.registry.put(record);
    }
    await expectMainStored();
  });

  it('cancelled while writing files', async () => {
    const controller = new AbortController();
    let wrote = 0;
    const onProgress = (p: CheckoutProgress) => {
      if (p.phase === 'writing-files' && p.files > 0) {
        wrote = p.files;
        controller.abort();
      }
    };
    const err = await checkoutError(repoId, 'feature/x', {}, { onProgress, signal: controller.signal });
    expect(err.code).toBe('ABORTED');
    expect(wrote).toBeGreaterThan(0);
    await expectMainStored();
  });
});

/** Counts the working-tree files written through the repo's lightning-fs (symlinks included). */
function countWrites(repoId: string): { paths: string[]; stop(): void } {
  const p = ctx.store.repoFs.open(repoId).promises;
  const paths: string[] = [];
  const { writeFile, symlink } = p;
  const record = (path: string) => {
    const clean = path.replace(/\/+/g, '/');
    if (!clean.startsWith(`${GITDIR}/`)) paths.push(clean);
  };
  p.writeFile = (async (path: string, ...rest: unknown[]) => {
    record(path);
    return (writeFile as (...a: unknown[]) => Promise<void>)(path, ...rest);
  }) as typeof p.writeFile;
  p.symlink = (async (target: string, path: string) => {
    record(path);
    return symlink(target, path);
  }) as typeof p.symlink;
  return {
    paths,
    stop() {
      p.writeFile = writeFile;
      p.symlink = symlink;
    },
  };
}

/**
 * Every call that changes the repo's file system (git directory included) and every read-write IndexedDB
 * transaction on its database, from now until stop().
 */
function countStorageWrites(repoId: string): { fsCalls: string[]; transactions(): number; stop(): void } {
  const p = ctx.store.repoFs.open(repoId).promises as unknown as Record<
    string,
    (...a: unknown[]) => Promise<unknown>
  >;
  const fsCalls: string[] = [];
  const originals = new Map<string, (...a: unknown[]) => Promise<unknown>>();
  for (const name of ['writeFile', 'unlink', 'mkdir', 'rmdir', 'rename', 'symlink']) {
    const original = p[name];
    originals.set(name, original);
    p[name] = (...args: unknown[]) => {
      fsCalls.push(`${name} ${String(name === 'symlink' ? args[1] : args[0])}`);
      return original.apply(p, args);
    };
  }
  const dbName = ctx.store.repoFs.dbName(repoId);
  let transactions = 0;
  const original = IDBDatabase.prototype.transaction;
  IDBDatabase.prototype.transaction = function (
    this: IDBDatabase,
    ...args: Parameters<IDBDatabase['transaction']>
  ) {
    if (this.name === dbName && args[1] === 'readwrite') transactions++;
    return original.apply(this, args);
  };
  return {
    fsCalls,
    transactions: () => transactions,
    stop() {
      for (const [name, fn] of originals) p[name] = fn;
      IDBDatabase.prototype.transaction = original;
    },
  };
}
