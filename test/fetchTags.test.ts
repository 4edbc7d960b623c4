import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TAG_LIST_MAX_AGE_MS } from '../workers/ops/sync/fetch.ts';
import { exportAsDotGit } from './support/cloneOracle.ts';
import { testEngine } from './support/engine.ts';
import { git } from './support/git.ts';
import { looseRefNames, lsRemoteAsFetched, packedRefsAsGitWrites, showRefs } from './support/refsOracle.ts';
import { startRelay } from './support/relay.ts';
import { failure, packFiles, settledGitDir, snapshotGitDir, trackingRefs } from './support/repoChecks.ts';
import { commitOnServer, gitOnServer, type ServedCopies, serveCopies } from './support/servedCopies.ts';
import { useTmpDir } from './support/tmpDir.ts';
import { twinClones } from './support/twinClones.ts';

const { engine, ctx } = testEngine();

let served: ServedCopies;
const tmp = useTmpDir('fetch-tags');

beforeAll(async () => {
  served = await serveCopies();
});
afterAll(async () => {
  await served?.close();
});

const exportRepo = (repoId: string) => exportAsDotGit(ctx, repoId, tmp());

const kinds = (result: { updated: { kind: string; name: string }[] }) =>
  result.updated.map((u) => `${u.kind} ${u.name}`).sort();

describe('fetch and tags', () => {
  it('on 1,000 tags: a no-op lists none, a release comes with its commit in 4 KB, tags added alone with Fetch tags', async () => {
    const { url, bare, repoId, cli } = await twinClones(engine, served, 'tags.git', 'tags.git', tmp());

    served.server.resetStats();
    const noop = await engine.repo(repoId).fetch();
    expect(noop.updated).toEqual([]);
    expect(noop.requests).toBe(2);
    expect(served.bytes('tags.git')).toBeLessThanOrEqual(2100);

    // A release as a maintainer pushes it: a commit and its annotated tag together.
    const release = await commitOnServer(bare, {
      branch: 'main',
      files: { VERSION: '11.0.0\n' },
      message: 'Release 11.0.0',
    });
    await gitOnServer(bare, ['tag', '-a', '-m', 'Version 11.0.0', 'v11.0.0', release]);
    served.server.resetStats();
    const fetched = await engine.repo(repoId).fetch();
    expect(kinds(fetched)).toEqual(['fast-forward refs/remotes/origin/main', 'new refs/tags/v11.0.0']);
    expect(fetched.objects.tag).toBe(1);
    // info/refs, ls-refs of the branches, the fetch, ls-refs of refs/tags/v11.0.0.
    expect(fetched.requests).toBe(4);
    expect(served.bytes('tags.git')).toBeLessThanOrEqual(4096);

    // Tags added alone: an annotated one on an old commit, a lightweight one on the release. No pack brings
    // them; a routine fetch stays a no-op, and Fetch tags lists every tag.
    await gitOnServer(bare, ['tag', '-a', '-m', 'Long-term support', 'v10.9.8-lts', 'v10.9.8^{}']);
    await gitOnServer(bare, ['tag', 'v11.0.0-light', release]);
    expect((await engine.repo(repoId).fetch()).updated).toEqual([]);
    const all = await engine.repo(repoId).fetch({ tags: 'all' });
    expect(kinds(all)).toEqual(['new refs/tags/v10.9.8-lts', 'new refs/tags/v11.0.0-light']);

    // Every branch and tag as the server lists them, and packed-refs byte for byte as git's after the
    // same fetch (peeled lines included).
    const dir = await exportRepo(repoId);
    expect(await trackingRefs(dir)).toEqual(await lsRemoteAsFetched(url));
    await git(['fetch', '-q', '--tags', 'origin'], { cwd: cli });
    const ours = join(dir, '.git');
    const packed = await readFile(join(ours, 'packed-refs'), 'utf8');
    expect(packed).toBe(await packedRefsAsGitWrites(join(cli, '.git'), await looseRefNames(ours)));
    expect(await showRefs(ours)).toEqual(await showRefs(join(cli, '.git')));
    await git(['fsck', '--connectivity-only', '--no-progress'], { cwd: dir });
  });

  it('on 1,000 tags and 50 branches: moves no more than git fetch --no-tags, no-op or release', async () => {
    const { bare, repoId, cli } = await twinClones(engine, served, 'tags-50.git', 'tags-50.git', tmp());
    const bytesOf = async (fetch: () => Promise<unknown>) => {
      served.server.resetStats();
      await fetch();
      return served.bytes('tags-50.git');
    };
    const gitFetch = () => git(['fetch', '-q', '--no-tags', 'origin'], { cwd: cli });

    // Listing 50 branches is most of it: git's floor for "are the branches where they were?".
    const noop = await bytesOf(() => engine.repo(repoId).fetch());
    const gitNoop = await bytesOf(gitFetch);
    expect(noop).toBeLessThanOrEqual(gitNoop);

    const release = await commitOnServer(bare, {
      branch: 'main',
      files: { VERSION: '11.0.0\n' },
      message: 'Release 11.0.0',
    });
    await gitOnServer(bare, ['tag', '-a', '-m', 'Version 11.0.0', 'v11.0.0', release]);
    const ours = await bytesOf(() => engine.repo(repoId).fetch());
    const gits = await bytesOf(gitFetch);
    // Ours also brings the tag (include-tag, then one narrow ls-refs); git's --no-tags leaves it behind.
    expect(ours).toBeLessThanOrEqual(gits + 512);
    const dir = await exportRepo(repoId);
    expect(await trackingRefs(dir)).toEqual(await lsRemoteAsFetched(served.url('tags-50.git')));
  });

  it('lists every tag again once the last full listing is a day old', async () => {
    const url = await served.copy('basic.git', 'day-old.git');
    const bare = served.path('day-old.git');
    const { repoId } = await engine.clone({ url });
    await gitOnServer(bare, ['tag', 'light', 'main']);
    const fresh = await engine.repo(repoId).fetch();
    expect(fresh.tags).toBe('follow');
    expect(fresh.updated).toEqual([]);

    // No full listing since the clone, a day ago.
    const dayAgo = Date.now() - TAG_LIST_MAX_AGE_MS;
    await ctx.store.registry.update(repoId, (r) => ({ ...r, createdAt: dayAgo }));
    const dayOld = await engine.repo(repoId).fetch();
    expect(dayOld.tags).toBe('all');
    expect(kinds(dayOld)).toEqual(['new refs/tags/light']);
    // That listing counts from now.
    expect((await engine.repo(repoId).fetch()).tags).toBe('follow');
    await ctx.store.registry.update(repoId, (r) => ({ ...r, tagsListedAt: dayAgo }));
    expect((await engine.repo(repoId).fetch()).tags).toBe('all');
  });

  it('checks the name a packed tag claims as a ref name before it asks for that ref', async () => {
    const url = await served.copy('basic.git', 'bad-tag-name.git');
    const bare = served.path('bad-tag-name.git');
    const { repoId } = await engine.clone({ url });
    const commit = await commitOnServer(bare, { branch: 'main', files: { 'n.txt': 'n\n' }, message: 'N' });
    // git tag refuses this name; a server's own plumbing writes it all the same.
    const tag = await git(['hash-object', '-t', 'tag', '--literally', '-w', '--stdin'], {
      cwd: bare,
      input: `object ${commit}\ntype commit\ntag ../../config\ntagger Server Side <s@x> 1800000000 +0000\n\nx\n`,
    });
    await gitOnServer(bare, ['update-ref', 'refs/tags/release', tag.trim()]);

    const fetched = await engine.repo(repoId).fetch();
    expect(fetched.objects.tag).toBe(1);
    expect(kinds(fetched)).toEqual(['fast-forward refs/remotes/origin/main']);
    expect(fetched.warnings.join('\n')).toContain('"refs/tags/../../config"');
    // No listing asked for the bad name: info/refs, ls-refs, fetch.
    expect(fetched.requests).toBe(3);
    // The ref the server published it under is a good name: it comes with Fetch tags.
    expect(kinds(await engine.repo(repoId).fetch({ tags: 'all' }))).toEqual(['new refs/tags/release']);
    const dir = await exportRepo(repoId);
    expect(await trackingRefs(dir)).toEqual(await lsRemoteAsFetched(url));
  });

  it('refuses a narrow tag listing that names refs it was not asked for, and stores nothing', async () => {
    const url = await served.copy('basic.git', 'unfiltered.git');
    const bare = served.path('unfiltered.git');
    const relay = await startRelay(served.server.url, { kind: 'ignore-ref-prefix' });
    try {
      const { repoId } = await engine.clone({ url: `${relay.url}/unfiltered.git` });
      const commit = await commitOnServer(bare, { branch: 'main', files: { 'n.txt': 'n\n' }, message: 'N' });
      await gitOnServer(bare, ['tag', '-a', '-m', 'Two', 'v2', commit]);
      const before = await settledGitDir(ctx, repoId);
      const packs = await packFiles(ctx, repoId);

      const err = await failure(engine.repo(repoId).fetch());
      expect(err.code).toBe('PROTOCOL_UNEXPECTED');
      expect(err.message).toContain('it was not asked for');
      expect(await packFiles(ctx, repoId)).toEqual(packs);
      expect(await snapshotGitDir(ctx, repoId)).toEqual(before);

      // The full listing asks for every tag, so that server's answer is what was asked.
      const all = await engine.repo(repoId).fetch({ tags: 'all' });
      expect(kinds(all)).toContain('new refs/tags/v2');
      const dir = await exportRepo(repoId);
      expect(await trackingRefs(dir)).toEqual(await lsRemoteAsFetched(url));
    } finally {
      await relay.close();
    }
  });
});
