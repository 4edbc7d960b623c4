import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import git from 'isomorphic-git';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { api } from '../workers/api.ts';
import { GITDIR, openRepoFs } from '../workers/store/repoFs.ts';
import { exportDir } from './support/exportGitDir.ts';
import { git as gitCli } from './support/git.ts';
import { repoStats, resetStats } from './support/serverStats.ts';

const serverUrl = inject('gitServerUrl');
const fixturesDir = inject('fixturesDir');
let tmp: string;

beforeAll(async () => {
  tmp = await mkdtemp(join(tmpdir(), 'blobless-clone-'));
});
afterAll(async () => {
  await rm(tmp, { recursive: true, force: true });
});

/** `git ls-remote` lines as `oid name`, the oracle for what a clone must report. */
async function lsRemote(url: string): Promise<string[]> {
  const out = await gitCli(['ls-remote', url]);
  return out
    .trim()
    .split('\n')
    .map((l) => l.replace('\t', ' '))
    .sort();
}

function ourRefLines(refs: { name: string; oid: string; peeled?: string }[]): string[] {
  const lines: string[] = [];
  for (const r of refs) {
    lines.push(`${r.oid} ${r.name}`);
    if (r.peeled) lines.push(`${r.peeled} ${r.name}^{}`);
  }
  return lines.sort();
}

async function exportRepo(repoId: string, name: string): Promise<string> {
  const dest = join(tmp, `${name}-${repoId}`);
  await exportDir(openRepoFs(repoId), GITDIR, dest);
  return dest;
}

describe.each(['basic.git', 'features.git', 'small-sized.git'])('blob:none clone of %s', (repo) => {
  const url = `${serverUrl}/${repo}`;
  let result: Awaited<ReturnType<typeof api.clone>>;
  let exported: string;

  beforeAll(async () => {
    result = await api.clone({ url });
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
    const fs = openRepoFs(result.repoId);
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
    const oracleIdx = join(tmp, `${repo}-${result.repoId}-oracle.idx`);
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
        join(tmp, `oracle-${repo}`),
      ]);
      const theirs = await repoStats(repo);
      await resetStats();
      const result = await api.clone({ url });
      const ours = await repoStats(repo);
      expect(ours.requests).toBe(result.requests);
      expect(Math.abs(ours.bytesSent - theirs.bytesSent) / theirs.bytesSent).toBeLessThanOrEqual(0.02);
    },
  );
});
