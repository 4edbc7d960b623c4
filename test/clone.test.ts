import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import git from 'isomorphic-git';
import { beforeAll, describe, expect, inject, it } from 'vitest';
import type { Engine } from '../workers/engine/types.ts';
import { GITDIR } from '../workers/store/repoFs.ts';
import {
  exportRepo as exportTo,
  lsRemoteLines as lsRemote,
  refLines as ourRefLines,
} from './support/cloneOracle.ts';
import { testEngine } from './support/engine.ts';
import { git as gitCli } from './support/git.ts';
import { repoStats, resetStats } from './support/serverStats.ts';
import { useTmpDir } from './support/tmpDir.ts';

const { engine, ctx } = testEngine();

const serverUrl = inject('gitServerUrl');
const fixturesDir = inject('fixturesDir');
const tmp = useTmpDir('clone');

const exportRepo = (repoId: string, name: string) => exportTo(ctx, repoId, tmp(), name);

describe.each(['basic.git', 'features.git', 'small-sized.git'])('blob:none clone of %s', (repo) => {
  const url = `${serverUrl}/${repo}`;
  let result: Awaited<ReturnType<Engine['clone']>>;
  let exported: string;

  beforeAll(async () => {
    result = await engine.clone({ url });
    exported = await exportRepo(result.repoId, repo);
  });

  it('reports the refs `git ls-remote` lists', async () => {
    expect(ourRefLines(result.refs)).toEqual(await lsRemote(url));
    expect(result.protocol).toBe(2);
    expect(result.filter).toBe('blob:none');
    expect(result.warnings).toEqual([]);
  });

  it('holds every commit, tree and tag of the cloned refs and no blob', async () => {
    const bare = join(fixturesDir, repo);
    const expected = (await gitCli(['rev-list', '--objects', '--filter=blob:none', '--all'], { cwd: bare }))
      .trim()
      .split('\n')
      .map((l) => l.slice(0, 40))
      .sort();
    const stored = (
      await gitCli(['cat-file', '--batch-all-objects', '--batch-check=%(objectname) %(objecttype)'], {
        cwd: exported,
      })
    )
      .trim()
      .split('\n');
    expect(stored.filter((l) => l.endsWith(' blob'))).toEqual([]);
    expect(stored.map((l) => l.slice(0, 40)).sort()).toEqual(expected);
    expect(result.objects.blob).toBe(0);
    expect(result.objects.commit + result.objects.tree + result.objects.tag).toBe(expected.length);
  });

  it('is readable by isomorphic-git: every commit and tree', async () => {
    const fs = ctx.store.repoFs.open(result.repoId);
    const cache = {};
    const lines = (
      await gitCli(['cat-file', '--batch-all-objects', '--batch-check=%(objectname) %(objecttype)'], {
        cwd: exported,
      })
    )
      .trim()
      .split('\n');
    for (const line of lines) {
      const [oid, type] = line.split(' ');
      if (type === 'commit') await git.readCommit({ fs, gitdir: GITDIR, oid, cache });
      if (type === 'tree') await git.readTree({ fs, gitdir: GITDIR, oid, cache });
    }
    const logged = await git.log({ fs, gitdir: GITDIR, ref: 'HEAD', cache });
    const expected = (await gitCli(['rev-list', 'HEAD'], { cwd: join(fixturesDir, repo) }))
      .trim()
      .split('\n');
    expect(logged.map((c) => c.oid)).toEqual(expected);
  });

  it('writes an .idx byte-identical to git index-pack and a .promisor marker', async () => {
    const packDir = join(exported, 'objects/pack');
    const files = await readdir(packDir);
    const pack = files.find((f) => f.endsWith('.pack'))!;
    expect(files).toContain(pack.replace('.pack', '.promisor'));
    const ours = await readFile(join(packDir, pack.replace('.pack', '.idx')));
    const oracleIdx = join(tmp(), `${repo}-${result.repoId}-oracle.idx`);
    await gitCli(['index-pack', '-o', oracleIdx, join(packDir, pack)]);
    expect(Buffer.compare(ours, await readFile(oracleIdx))).toBe(0);
  });

  it('is a git directory the real git accepts: fsck --connectivity-only and log --all', async () => {
    await gitCli(['fsck', '--connectivity-only', '--no-progress'], { cwd: exported });
    const ours = await gitCli(['log', '--all', '--format=%H %P %s'], { cwd: exported });
    const theirs = await gitCli(['log', '--all', '--format=%H %P %s'], { cwd: join(fixturesDir, repo) });
    expect(ours).toBe(theirs);
    expect((await gitCli(['config', 'extensions.partialclone'], { cwd: exported })).trim()).toBe('origin');
    expect((await gitCli(['symbolic-ref', 'HEAD'], { cwd: exported })).trim()).toBe(
      (await gitCli(['symbolic-ref', 'HEAD'], { cwd: join(fixturesDir, repo) })).trim(),
    );
  });
});

describe('bytes on the wire', () => {
  it.each(['features.git', 'small-sized.git'])(
    '%s: within 2 %% of git clone --filter=blob:none',
    async (repo) => {
      const url = `${serverUrl}/${repo}`;
      await resetStats();
      await gitCli([
        '-c',
        'protocol.version=2',
        'clone',
        '--bare',
        '-q',
        '--filter=blob:none',
        url,
        join(tmp(), `oracle-${repo}`),
      ]);
      const theirs = await repoStats(repo);
      await resetStats();
      const result = await engine.clone({ url });
      const ours = await repoStats(repo);
      expect(ours.requests).toBe(result.requests);
      expect(Math.abs(ours.bytesSent - theirs.bytesSent) / theirs.bytesSent).toBeLessThanOrEqual(0.02);
    },
  );
});

describe('the git directory, laid out as git clone --filter=blob:none lays it out', () => {
  const url = `${serverUrl}/features.git`;
  let ours: string;
  let theirs: string;

  beforeAll(async () => {
    const result = await engine.clone({ url });
    ours = await exportRepo(result.repoId, 'layout');
    theirs = join(tmp(), 'layout-oracle');
    await gitCli([
      '-c',
      'protocol.version=2',
      'clone',
      '-q',
      '--no-checkout',
      '--filter=blob:none',
      url,
      theirs,
    ]);
    theirs = join(theirs, '.git');
  });

  const file = (dir: string, path: string) => readFile(join(dir, path), 'utf8');

  it('packed-refs: the same bytes, peeled lines of annotated tags included', async () => {
    const packed = await file(ours, 'packed-refs');
    expect(packed).toMatch(/^# pack-refs with: peeled fully-peeled sorted \n/);
    expect(packed).toMatch(/ refs\/tags\/v0\.1\n\^[0-9a-f]{40}\n/);
    expect(packed).toBe(await file(theirs, 'packed-refs'));
  });

  it('the .promisor file names the refs the pack was fetched for, as git writes it', async () => {
    const promisor = async (dir: string) => {
      const packDir = join(dir, 'objects/pack');
      const names = (await readdir(packDir)).filter((f) => f.endsWith('.promisor'));
      expect(names).toHaveLength(1);
      return (await readFile(join(packDir, names[0]), 'utf8')).split('\n').filter(Boolean).sort();
    };
    const lines = await promisor(ours);
    expect(lines.length).toBeGreaterThan(0);
    expect(lines).toEqual(await promisor(theirs));
  });

  it('the config: remote.origin (url, fetch, promisor, partialclonefilter), the branch, the format version', async () => {
    const keys = [
      'core.repositoryformatversion',
      'remote.origin.url',
      'remote.origin.fetch',
      'remote.origin.promisor',
      'remote.origin.partialclonefilter',
      'branch.main.remote',
      'branch.main.merge',
    ];
    const config = async (dir: string) => {
      const values: Record<string, string> = {};
      for (const key of keys)
        values[key] = (await gitCli(['config', '--file', join(dir, 'config'), '--get', key])).trim();
      return values;
    };
    expect(await config(ours)).toEqual(await config(theirs));
  });

  it('HEAD and the loose refs', async () => {
    for (const path of ['HEAD', 'refs/heads/main', 'refs/remotes/origin/HEAD']) {
      expect(await file(ours, path), path).toBe(await file(theirs, path));
    }
  });
});
