import { join } from 'node:path';
import { beforeAll, describe, expect, inject, it } from 'vitest';
import { testEngine } from './support/engine.ts';
import { git as gitCli } from './support/git.ts';

const { engine } = testEngine();

const serverUrl = inject('gitServerUrl');
const fixturesDir = inject('fixturesDir');

describe.each(['features.git', 'small-sized.git'])('log of %s', (repo) => {
  let repoId: string;
  let expected: string[];
  beforeAll(async () => {
    repoId = (await engine.clone({ url: `${serverUrl}/${repo}` })).repoId;
    expected = (await gitCli(['rev-list', 'HEAD'], { cwd: join(fixturesDir, repo) })).trim().split('\n');
  });

  it('pages through the whole history in git rev-list order', async () => {
    const seen: string[] = [];
    for (let skip = 0; ; skip += 37) {
      const page = await engine.repo(repoId).log({ ref: 'HEAD', skip, limit: 37 });
      seen.push(...page.commits.map((c) => c.oid));
      if (!page.more) break;
    }
    expect(seen).toEqual(expected);
  });

  it('jumps back to an earlier page', async () => {
    await engine.repo(repoId).log({ ref: 'HEAD', skip: 0, limit: 20 });
    await engine.repo(repoId).log({ ref: 'HEAD', skip: 20, limit: 20 });
    const again = await engine.repo(repoId).log({ ref: 'HEAD', skip: 5, limit: 3 });
    expect(again.commits.map((c) => c.oid)).toEqual(expected.slice(5, 8));
  });

  it('lists branches and tags as the remote has them', async () => {
    const refs = await engine.repo(repoId).listRefs();
    const bare = join(fixturesDir, repo);
    const heads = (await gitCli(['for-each-ref', '--format=%(refname:short)', 'refs/heads'], { cwd: bare }))
      .trim()
      .split('\n');
    const tags = (
      await gitCli(['for-each-ref', '--format=%(refname:short)', 'refs/tags'], { cwd: bare })
    ).trim();
    expect(refs.branches).toEqual(heads.sort());
    expect(refs.tags).toEqual(tags ? tags.split('\n').sort() : []);
    expect(refs.current).toBe('main');
  });
});
