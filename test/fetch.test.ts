import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GITDIR } from '../workers/store/repoFs.ts';
import { exportAsDotGit } from './support/cloneOracle.ts';
import { testEngine } from './support/engine.ts';
import { git } from './support/git.ts';
import { looseRefNames, lsRemoteAsFetched, packedRefsAsGitWrites, showRefs } from './support/refsOracle.ts';
import { failure, packFiles, trackingRefs } from './support/repoChecks.ts';
import {
  commitChain,
  commitOnServer,
  gitOnServer,
  type ServedCopies,
  serveCopies,
} from './support/servedCopies.ts';
import { useTmpDir } from './support/tmpDir.ts';
import { twinClones } from './support/twinClones.ts';

const { engine, ctx } = testEngine();

let served: ServedCopies;
const tmp = useTmpDir('fetch');

beforeAll(async () => {
  served = await serveCopies();
});
afterAll(async () => {
  await served?.close();
});

const exportRepo = (repoId: string) => exportAsDotGit(ctx, repoId, tmp());

describe('fetch', () => {
  it('brings new commits, branches and the tags on them, then every tag when asked; the refs equal git ls-remote; git fsck passes', async () => {
    const url = await served.copy('basic.git', 'grow.git');
    const bare = served.path('grow.git');
    const { repoId } = await engine.clone({ url });

    const c1 = await commitOnServer(bare, {
      branch: 'main',
      files: { 'src/greet.js': 'export const greet = (n) => "Hey " + n;\n', 'docs/new.txt': 'new\n' },
      message: 'Shorter greeting',
    });
    await commitOnServer(bare, { branch: 'main', files: { 'src/x/y.txt': 'deep\n' }, message: 'Deeper' });
    await commitOnServer(bare, {
      branch: 'feature',
      from: c1,
      files: { 'f.txt': 'f\n' },
      message: 'Feature',
    });
    await gitOnServer(bare, ['tag', '-a', '-m', 'Release 2', 'v2', 'main']);
    await gitOnServer(bare, ['tag', 'light', c1]);

    const result = await engine.repo(repoId).fetch();
    expect(result.newCommits).toBe(3);
    // The annotated tag came with its commit (include-tag); a lightweight one has no object to come in a pack.
    expect(result.updated.map((u) => `${u.kind} ${u.name}`).sort()).toEqual([
      'fast-forward refs/remotes/origin/main',
      'new refs/remotes/origin/feature',
      'new refs/tags/v2',
    ]);
    expect(result.forced).toEqual([]);
    // The clone's filter again: no blob came with the new commits.
    expect(result.objects.blob).toBe(0);
    const allTags = await engine.repo(repoId).fetch({ tags: 'all' });
    expect(allTags.updated.map((u) => `${u.kind} ${u.name}`)).toEqual(['new refs/tags/light']);
    expect(allTags.newCommits).toBe(0);

    const dir = await exportRepo(repoId);
    expect(await trackingRefs(dir)).toEqual(await lsRemoteAsFetched(url));
    await git(['fsck', '--connectivity-only', '--no-progress'], { cwd: dir });
    // Every commit of the server is here, and nothing else.
    const all = (d: string) => git(['rev-list', '--all'], { cwd: d }).then((o) => o.split('\n').sort());
    expect(await all(dir)).toEqual(await all(bare));

    // Up to date now: a no-op fetch asks two small questions and changes nothing.
    const packs = await packFiles(ctx, repoId);
    served.server.resetStats();
    const again = await engine.repo(repoId).fetch();
    expect(again.updated).toEqual([]);
    expect(again.requests).toBe(2);
    expect(await packFiles(ctx, repoId)).toEqual(packs);
    expect(served.bytes('grow.git')).toBeLessThanOrEqual(2100);
  });

  it('writes the packed-refs git writes after each fetch: peeled lines, nested and moved annotated tags', async () => {
    const { bare, repoId, cli } = await twinClones(engine, served, 'features.git', 'peeled.git', tmp());
    const cliGit = join(cli, '.git');
    // git fetch updates a tag that moved only when forced; Blobless's `tags: 'all'` always follows them.
    const gitFetch = () => git(['fetch', '-q', '--force', '--tags', 'origin'], { cwd: cli });
    const fetchTags = () => engine.repo(repoId).fetch({ tags: 'all' });

    /** Our packed-refs byte for byte as git's, the loose refs as git's, and git's own reading of both. */
    const expectGitsRefs = async (round: string) => {
      const dir = await exportRepo(repoId);
      const ours = join(dir, '.git');
      const loose = await looseRefNames(ours);
      const packed = await readFile(join(ours, 'packed-refs'), 'utf8');
      expect(packed, round).toBe(await packedRefsAsGitWrites(cliGit, loose));
      expect(await showRefs(ours), round).toEqual(await showRefs(cliGit));
      return packed;
    };
    const afterClone = await expectGitsRefs('clone');
    // features.git's v0.1-approved is a tag of a tag: its `^` line is the commit at the end.
    expect(afterClone).toMatch(/ refs\/tags\/v0\.1-approved\n\^[0-9a-f]{40}\n/);

    // New commits, a new annotated tag, a tag of that tag, a lightweight one.
    const c1 = await commitOnServer(bare, { branch: 'main', files: { 'n1.txt': '1\n' }, message: 'One' });
    await gitOnServer(bare, ['tag', '-a', '-m', 'Release 2', 'v2', c1]);
    await gitOnServer(bare, ['tag', '-a', '-m', 'Approved', 'v2-approved', 'v2']);
    await gitOnServer(bare, ['tag', 'v2-light', c1]);
    await fetchTags();
    await gitFetch();
    await expectGitsRefs('new tags');

    // v2 moves to a later commit (as `git tag -f` on the server does), and a branch is rewritten.
    const c2 = await commitOnServer(bare, { branch: 'main', files: { 'n2.txt': '2\n' }, message: 'Two' });
    await gitOnServer(bare, ['tag', '-f', '-a', '-m', 'Release 2, again', 'v2', c2]);
    await commitOnServer(bare, {
      branch: 'dev',
      from: 'origin/main~3',
      files: { 'd.txt': 'd\n' },
      message: 'Dev',
    });
    const moved = await fetchTags();
    expect(moved.updated.filter((u) => u.kind === 'tag-moved').map((u) => u.name)).toEqual(['refs/tags/v2']);
    await gitFetch();
    const afterMove = await expectGitsRefs('moved tag');
    expect(afterMove).toContain(`\n^${c2}\n`);
  });

  it('moves the same bytes as git fetch from an equal clone (within 2 %), completing the thin pack', async () => {
    const { bare, repoId, cli } = await twinClones(engine, served, 'basic.git', 'parity.git', tmp());

    // Changes deep in existing folders, so the server sends trees as deltas against ones both clones hold.
    const files: Record<string, string> = {};
    for (let i = 0; i < 40; i++) files[`src/gen/part-${i}/file-${i}.txt`] = `part ${i}\n`;
    const first = await commitOnServer(bare, { branch: 'main', files, message: 'Many folders' });
    // Both clones fetch these first, so the next fetch's trees are deltas against ones they hold.
    await engine.repo(repoId).fetch();
    await git(['fetch', '-q', 'origin'], { cwd: cli });
    for (let i = 0; i < 40; i += 2) files[`src/gen/part-${i}/file-${i}.txt`] = `part ${i}, edited\n`;
    await commitOnServer(bare, { branch: 'main', files, message: 'Edit half of them' });
    await commitOnServer(bare, {
      branch: 'main',
      files: { 'src/gen/part-1/more.txt': 'more\n' },
      message: 'One more',
    });
    expect(first).toMatch(/^[0-9a-f]{40}$/);

    served.server.resetStats();
    await git(['fetch', '-q', 'origin'], { cwd: cli });
    const theirs = served.server.stats('parity.git').bytesSent;
    served.server.resetStats();
    const result = await engine.repo(repoId).fetch();
    const mine = served.server.stats('parity.git').bytesSent;
    expect(result.newCommits).toBe(2);
    expect(result.completedFromLocal).toBeGreaterThan(0);
    expect(Math.abs(mine - theirs) / theirs).toBeLessThanOrEqual(0.02);

    const dir = await exportRepo(repoId);
    await git(['fsck', '--connectivity-only', '--no-progress'], { cwd: dir });
    // The stored pack stands alone: git indexes it without the repository around it.
    const packsDir = join(dir, '.git/objects/pack');
    for (const name of await packFiles(ctx, repoId)) {
      if (name.endsWith('.pack'))
        await git(['index-pack', '-o', join(tmp(), `check-${name}.idx`), join(packsDir, name)]);
    }
  });

  it('negotiates a diverged history in rounds, with far fewer haves than commits', async () => {
    const url = await served.copy('basic.git', 'diverged.git');
    const bare = served.path('diverged.git');
    const base = (await git(['rev-parse', 'main'], { cwd: bare })).trim();
    // Four branches of 150 commits each that the clone gets, then the server rewrites them all.
    const branches = ['a', 'b', 'c', 'd'];
    const old: Record<string, string> = {};
    for (const b of branches) {
      old[b] = await commitChain(bare, base, 150, `old-${b}`);
      await gitOnServer(bare, ['update-ref', `refs/heads/${b}`, old[b]]);
    }
    const { repoId } = await engine.clone({ url });
    const fresh: Record<string, string> = {};
    for (const b of branches) {
      fresh[b] = await commitChain(bare, base, 2, `new-${b}`);
      await gitOnServer(bare, ['update-ref', `refs/heads/${b}`, fresh[b]]);
    }
    await gitOnServer(bare, ['reflog', 'expire', '--expire=now', '--all']);
    await gitOnServer(bare, ['gc', '-q', '--prune=now']);
    expect(await git(['cat-file', '-t', old.a], { cwd: bare }).catch(() => 'gone')).toBe('gone');

    const result = await engine.repo(repoId).fetch();
    const localCommits = 4 * 150 + 5;
    expect(result.negotiation.rounds).toBeGreaterThan(2);
    expect(result.negotiation.haves).toBeLessThan(localCommits / 4);
    expect(result.newCommits).toBe(8);
    expect(result.forced.map((u) => `${u.kind} ${u.name} ${u.old} ${u.new}`).sort()).toEqual(
      branches.map((b) => `forced refs/remotes/origin/${b} ${old[b]} ${fresh[b]}`),
    );
    const dir = await exportRepo(repoId);
    expect(await trackingRefs(dir)).toEqual(await lsRemoteAsFetched(url));
    await git(['fsck', '--connectivity-only', '--no-progress'], { cwd: dir });
  });

  it('deepens and unshallows a shallow clone as git fetch --deepen and --unshallow do', async () => {
    const url = await served.copy('basic.git', 'shallow.git');
    const bare = served.path('shallow.git');
    const { repoId } = await engine.clone({ url, depth: 1 });
    const cli = join(tmp(), 'shallow-cli');
    await git(['clone', '-q', '--filter=blob:none', '--no-checkout', '--depth=1', url, cli]);
    const count = (d: string) =>
      git(['rev-list', '--count', '--all'], { cwd: d }).then((o) => Number(o.trim()));
    const shallowFile = (d: string) =>
      git(['rev-parse', '--git-path', 'shallow'], { cwd: d }).then((p) =>
        import('node:fs/promises').then((fs) => fs.readFile(join(d, p.trim()), 'utf8').catch(() => '')),
      );

    const deeper = await engine.repo(repoId).fetch({ deepen: 2 });
    await git(['fetch', '-q', '--deepen=2', 'origin'], { cwd: cli });
    expect(deeper.shallow).toBe(true);
    let dir = await exportRepo(repoId);
    expect(await count(dir)).toBe(3);
    expect(await count(dir)).toBe(await count(cli));
    expect(await shallowFile(dir)).toBe(await shallowFile(cli));
    await git(['fsck', '--connectivity-only', '--no-progress'], { cwd: dir });

    // An absolute depth from the remote's tips, as git fetch --depth.
    await engine.repo(repoId).fetch({ depth: 4 });
    await git(['fetch', '-q', '--depth=4', 'origin'], { cwd: cli });
    dir = await exportRepo(repoId);
    expect(await count(dir)).toBe(4);
    expect(await shallowFile(dir)).toBe(await shallowFile(cli));

    const whole = await engine.repo(repoId).fetch({ unshallow: true });
    expect(whole.shallow).toBe(false);
    dir = await exportRepo(repoId);
    expect(await count(dir)).toBe(await count(bare));
    expect(await shallowFile(dir)).toBe('');
    expect((await engine.listRepos()).find((r) => r.id === repoId)?.shallow).toBe(false);
    await git(['fsck', '--connectivity-only', '--no-progress'], { cwd: dir });
  });

  it('keeps nothing of a cancelled fetch', async () => {
    const url = await served.copy('basic.git', 'cancel.git');
    const bare = served.path('cancel.git');
    const { repoId } = await engine.clone({ url });
    await commitOnServer(bare, { branch: 'main', files: { 'a.txt': 'a\n' }, message: 'A' });
    const packs = await packFiles(ctx, repoId);
    const refs = await ctx.store.repoFs.open(repoId).promises.readFile(`${GITDIR}/packed-refs`, 'utf8');
    const controller = new AbortController();
    const err = await failure(
      engine.repo(repoId).fetch(
        {},
        {
          onProgress: (p) => {
            if (p.phase === 'writing') controller.abort();
          },
          signal: controller.signal,
        },
      ),
    );
    expect(err.code).toBe('ABORTED');
    expect(await packFiles(ctx, repoId)).toEqual(packs);
    expect(await ctx.store.repoFs.open(repoId).promises.readFile(`${GITDIR}/packed-refs`, 'utf8')).toBe(refs);
    // And the next fetch does the whole job.
    expect((await engine.repo(repoId).fetch()).newCommits).toBe(1);
  });
});
