// The code-host views' worker calls against reading.git, with the git CLI as the oracle: go-to-file's
// paths, file history with --follow, blame's attribution and compare.
import { join } from 'node:path';
import { beforeAll, describe, expect, inject, it } from 'vitest';
import type { BlameProgress } from '../workers/engine/index.ts';
import { testEngine } from './support/engine.ts';
import { git as gitCli } from './support/git.ts';
import { repoStats, resetStats } from './support/serverStats.ts';

const { engine } = testEngine();

const serverUrl = inject('gitServerUrl');
const bare = join(inject('fixturesDir'), 'reading.git');
const lines = (text: string) => text.split('\n').filter(Boolean);

let repoId: string;
beforeAll(async () => {
  repoId = (await engine.clone({ url: `${serverUrl}/reading.git` })).repoId;
});

describe('go-to-file paths', () => {
  it('lists every path of the commit as git ls-tree -r does, with no request', async () => {
    await resetStats();
    const { paths } = await engine.repo(repoId).listPaths({ ref: 'main' });
    expect(paths.split('\n')).toEqual(
      lines(await gitCli(['ls-tree', '-r', '--name-only', 'main'], { cwd: bare })),
    );
    expect((await repoStats('reading.git')).requests).toBe(0);
  });
});

describe('file history', () => {
  async function all(ref: string, path: string, limit = 2): Promise<string[]> {
    const seen: string[] = [];
    for (let skip = 0; ; skip += limit) {
      const page = await engine.repo(repoId).fileHistory({ ref, path, skip, limit });
      seen.push(...page.entries.map((e) => e.commit.oid));
      if (!page.more) break;
    }
    return seen;
  }

  it.each([
    ['a renamed file', 'main', 'docs/new-name.txt'],
    ['a file with 21 versions', 'main', 'src/blame.txt'],
    ['a file deleted on a branch', 'feature', 'docs/guide.md'],
    ['the README', 'feature', 'README.md'],
  ])('equals git log --follow for %s, page by page, with no request', async (_, ref, path) => {
    await resetStats();
    const expected = lines(await gitCli(['log', '--follow', '--format=%H', ref, '--', path], { cwd: bare }));
    expect(expected.length).toBeGreaterThan(1);
    expect(await all(ref, path)).toEqual(expected);
    expect((await repoStats('reading.git')).requests).toBe(0);
  });

  it('says where a rename came from', async () => {
    const page = await engine.repo(repoId).fileHistory({ ref: 'main', path: 'docs/new-name.txt', limit: 10 });
    const rename = page.entries.find((e) => e.status === 'renamed');
    expect(rename).toMatchObject({ path: 'docs/new-name.txt', renamedFrom: 'notes/old-name.txt' });
    expect(page.entries.at(-1)).toMatchObject({ path: 'notes/old-name.txt', status: 'added' });
  });
});

describe('blame', () => {
  /** git blame --porcelain, as [commit, origLine, finalLine] per line. */
  async function gitBlame(ref: string, path: string): Promise<[string, number, number][]> {
    const out = await gitCli(['blame', '--porcelain', ref, '--', path], { cwd: bare });
    const rows: [string, number, number][] = [];
    for (const line of out.split('\n')) {
      const m = /^([0-9a-f]{40}) (\d+) (\d+)/.exec(line);
      if (m) rows.push([m[1], Number(m[2]), Number(m[3])]);
    }
    return rows;
  }

  it('attributes every line as git blame --porcelain does, in a few blob requests', async () => {
    const path = 'src/blame.txt';
    const versions = lines(await gitCli(['log', '--format=%H', 'main', '--', path], { cwd: bare })).length;
    expect(versions).toBeGreaterThanOrEqual(20);
    await resetStats();
    const progress: number[] = [];
    const result = await engine
      .repo(repoId)
      .blame({ ref: 'main', path }, { onProgress: (p) => progress.push(p.linesDone) });
    const ours = result.lines.map((l, i): [string, number, number] => [l.commit, l.origLine, i + 1]);
    expect(ours).toEqual(await gitBlame('main', path));
    const requests = (await repoStats('reading.git')).requests;
    console.log(`blame of ${path}: ${versions} versions, ${requests} blob requests`);
    expect(requests).toBe(result.requests);
    expect(requests).toBeLessThanOrEqual(Math.ceil(versions / 10));
    expect(progress.at(-1)).toBe(result.lines.length);
  });

  it('reports lines as it attributes them, before the versions it has yet to fetch arrive', async () => {
    const fresh = (await engine.clone({ url: `${serverUrl}/reading.git` })).repoId;
    const reports: BlameProgress[] = [];
    const result = await engine
      .repo(fresh)
      .blame({ ref: 'main', path: 'src/blame.txt' }, { onProgress: (p) => reports.push(structuredClone(p)) });
    expect(reports.filter((r) => r.fileLines)).toHaveLength(1);
    expect(reports.find((r) => r.fileLines)!.fileLines).toEqual(result.lines.map((l) => l.text));
    // Every line once, as the result attributes it, its commit named in that report or an earlier one.
    const shown: string[] = [];
    const named = new Set<string>();
    for (const r of reports) {
      for (const oid of Object.keys(r.commits ?? {})) named.add(oid);
      for (const f of r.found ?? []) {
        expect(shown[f.line]).toBeUndefined();
        expect(named.has(f.commit)).toBe(true);
        shown[f.line] = `${f.commit} ${f.origLine} ${f.origPath}`;
      }
    }
    expect(shown).toEqual(result.lines.map((l) => `${l.commit} ${l.origLine} ${l.origPath}`));
    // Streaming, not a report at the end: lines reached the listener while blobs were still to come.
    expect(result.requests).toBeGreaterThan(1);
    const early = reports.filter((r) => r.found?.length && r.requests < result.requests);
    expect(early.length).toBeGreaterThan(0);
  });

  it('follows a rename, as git blame does', async () => {
    const result = await engine.repo(repoId).blame({ ref: 'main', path: 'docs/new-name.txt' });
    const ours = result.lines.map((l, i): [string, number, number] => [l.commit, l.origLine, i + 1]);
    expect(ours).toEqual(await gitBlame('main', 'docs/new-name.txt'));
    expect(result.lines[0].origPath).toBe('notes/old-name.txt');
  });

  it('stops with ABORTED when cancelled', async () => {
    const fresh = (await engine.clone({ url: `${serverUrl}/reading.git` })).repoId;
    const controller = new AbortController();
    const err = await engine
      .repo(fresh)
      .blame(
        { ref: 'main', path: 'src/blame.txt' },
        { onProgress: () => controller.abort(), signal: controller.signal },
      )
      .catch((e: Error) => e);
    expect(err).toMatchObject({ code: 'ABORTED' });
  });
});

describe('compare', () => {
  it.each([
    ['main', 'feature'],
    ['feature', 'main'],
    ['v1.0', 'main'],
  ])('%s...%s lists what git log a..b and git diff --name-status a...b list', async (a, b) => {
    const result = await engine.repo(repoId).compare({ base: a, head: b });
    expect(result.commits.map((c) => c.oid)).toEqual(
      lines(await gitCli(['log', '--format=%H', `${a}..${b}`], { cwd: bare })),
    );
    const letter = { added: 'A', deleted: 'D', modified: 'M', 'type-changed': 'T' } as const;
    expect(result.diff.files.map((f) => `${letter[f.status]}\t${f.path}`)).toEqual(
      lines(await gitCli(['diff', '--no-renames', '--name-status', `${a}...${b}`], { cwd: bare })),
    );
    expect(result.mergeBase).toBe((await gitCli(['merge-base', a, b], { cwd: bare })).trim());
  });
});

describe('last commit of each entry', () => {
  it.each([
    ['main', ''],
    ['main', 'docs'],
    ['feature', 'src'],
  ])('at %s:%s equals git log -1 -- <entry> for every entry, with no request', async (ref, folder) => {
    await resetStats();
    const result = await engine.repo(repoId).lastCommits({ ref, path: folder });
    const names = lines(await gitCli(['ls-tree', '--name-only', `${ref}:${folder}`], { cwd: bare }));
    expect(result.unresolved).toEqual([]);
    for (const name of names) {
      const path = folder ? `${folder}/${name}` : name;
      const expected = (await gitCli(['log', '-1', '--format=%H', ref, '--', path], { cwd: bare })).trim();
      expect(result.entries[name]?.oid, path).toBe(expected);
    }
    expect((await repoStats('reading.git')).requests).toBe(0);
  });

  it('in a first-view clone (depth 1) names no commit: the history that would date the entries is not here', async () => {
    const shallowId = (await engine.clone({ url: `${serverUrl}/reading.git`, firstView: true })).repoId;
    const result = await engine.repo(shallowId).lastCommits({ ref: 'main', path: '' });
    expect(result.shallowStop).toBe(true);
    expect(result.entries).toEqual({});
    const names = lines(await gitCli(['ls-tree', '--name-only', 'main'], { cwd: bare }));
    expect(result.unresolved.sort()).toEqual(names.sort());
    await engine.repo(shallowId).delete();
  });
});
