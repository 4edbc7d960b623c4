// Blame against `git blame --porcelain` on a few files of blame.git chosen for the cases blame.ts handles
// apart (a rename on a branch merged back, a file moved twice, a copy, an evil merge, a criss-cross, an
// octopus, a mode change, a file that was empty, a rename git does not pair, a file deleted and added again), from the commit-graph's
// Bloom filters and from commit objects alone. historyOracle.test.ts blames every file, in some 16 s: this
// is the cheap subset mutation testing runs per mutant of blame.ts (README, "Mutation testing").
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { beforeAll, describe, expect, inject, it } from 'vitest';
import type { BlameProgress } from '../workers/engine/index.ts';
import { COMMIT_GRAPH_CHAIN } from '../workers/ops/common/commitGraphAccess.ts';
import { maintenanceIdle } from '../workers/ops/maintenance/packMaintenance.ts';
import { testEngine } from './support/engine.ts';
import { gitBlame, gitBytes } from './support/gitHistory.ts';
import { useTmpDir } from './support/tmpDir.ts';

const { engine, ctx } = testEngine();
const serverUrl = inject('gitServerUrl');
const bare = join(inject('fixturesDir'), 'blame.git');
const scratch = useTmpDir('blame-cases');

const CASES = [
  'src/core/router.js',
  'lib/text/format.js',
  'src/api/adminClient.js',
  'src/api/retry.js',
  'src/store/cache.js',
  'native/hash.c',
  'scripts/deploy.sh',
  'src/empty.js',
  'src/util/time.js',
  'src/legacy.js',
];

/** The files the run without a commit-graph blames: the merges and renames, where it walks otherwise. */
const WITHOUT_GRAPH = ['src/core/router.js', 'lib/text/format.js', 'src/store/cache.js', 'native/hash.c'];

let repoId: string;
/** git's blame and content of each case, asked for at once while the clone runs. */
const oracle = new Map<string, { lines: string[]; text: string }>();
beforeAll(async () => {
  const answers = Promise.all(
    CASES.map(async (path) => {
      const [lines, text] = await Promise.all([
        gitBlame(bare, 'main', path),
        gitBytes(bare, ['show', `main:${path}`]),
      ]);
      oracle.set(path, { lines, text: text.toString() });
    }),
  );
  repoId = (await engine.clone({ url: `${serverUrl}/blame.git` })).repoId;
  await maintenanceIdle(ctx, repoId);
  await answers;
}, 60_000);

async function blameEqualsGit(path: string) {
  const result = await engine.repo(repoId).blame({ ref: 'main', path });
  const ours = result.lines.map((l) => `${l.commit} ${l.origLine} ${l.origPath}`);
  const expected = oracle.get(path)!;
  expect({ path, lines: ours }).toEqual({ path, lines: expected.lines });
  expect(result.lines.map((l) => `${l.text}\n`).join('')).toBe(expected.text);
}

describe('blame of chosen files of blame.git against git blame --porcelain', () => {
  it('from the Bloom filters of the commit-graph', async () => {
    expect(await ctx.store.repoFs.open(repoId).promises.stat(COMMIT_GRAPH_CHAIN)).toBeTruthy();
    for (const path of CASES) await blameEqualsGit(path);
  });

  it('from commit objects, without a commit-graph', async () => {
    await ctx.store.repoFs
      .open(repoId)
      .promises.unlink(COMMIT_GRAPH_CHAIN)
      .catch(() => {});
    for (const path of WITHOUT_GRAPH) await blameEqualsGit(path);
  });

  it('names each commit of its lines with its parents and message, as git log does', async () => {
    const path = 'src/core/router.js';
    const result = await engine.repo(repoId).blame({ ref: 'main', path: `/${path}/` });
    expect(result.path).toBe(path);
    expect(result.commit).toBe((await gitBytes(bare, ['rev-parse', 'main'])).toString().trim());
    const named = [...new Set(result.lines.map((l) => l.commit))].sort();
    expect(Object.keys(result.commits).sort()).toEqual(named);
    for (const oid of named) {
      const [parents, message] = (await gitBytes(bare, ['log', '-1', '--format=%P%x00%B', oid]))
        .toString()
        .split('\0');
      expect(result.commits[oid]).toMatchObject({ oid, parents: parents.split(' ').filter(Boolean) });
      expect(result.commits[oid].message.trim()).toBe(message.trim());
    }
  });

  it('reports every line once, as the result attributes it, its commit named by then', async () => {
    const reports: BlameProgress[] = [];
    const result = await engine
      .repo(repoId)
      .blame(
        { ref: 'main', path: 'src/api/retry.js' },
        { onProgress: (p) => reports.push(structuredClone(p)) },
      );
    expect(reports.filter((r) => r.fileLines)).toHaveLength(1);
    expect(reports.find((r) => r.fileLines)!.fileLines).toEqual(result.lines.map((l) => l.text));
    const shown: string[] = [];
    const named = new Map<string, unknown>();
    // Reports sent while the file's own content was being fetched know no lines yet.
    let read = false;
    for (const r of reports) {
      read ||= r.fileLines !== undefined;
      expect(r.totalLines).toBe(read ? result.lines.length : 0);
      for (const [oid, c] of Object.entries(r.commits ?? {})) {
        expect(named.has(oid)).toBe(false);
        named.set(oid, c);
      }
      for (const f of r.found ?? []) {
        expect(shown[f.line]).toBeUndefined();
        expect(named.has(f.commit)).toBe(true);
        shown[f.line] = `${f.commit} ${f.origLine} ${f.origPath}`;
      }
      expect(r.linesDone).toBe(shown.filter(Boolean).length);
    }
    expect(shown).toEqual(result.lines.map((l) => `${l.commit} ${l.origLine} ${l.origPath}`));
    // Named as lines are attributed, and only commits some line names.
    expect(Object.fromEntries(named)).toEqual(result.commits);
    expect(Object.keys(result.commits).sort()).toEqual(
      [...new Set(result.lines.map((l) => l.commit))].sort(),
    );
    expect(reports.at(-1)).toMatchObject({
      linesDone: result.lines.length,
      requests: result.requests,
      versionsFetched: result.versionsFetched,
    });
  });

  it('stops with ABORTED when cancelled', async () => {
    const controller = new AbortController();
    const err = await engine
      .repo(repoId)
      .blame(
        { ref: 'main', path: 'src/store/cache.js' },
        { onProgress: () => controller.abort(), signal: controller.signal },
      )
      .catch((e: Error) => e);
    expect(err).toMatchObject({ code: 'ABORTED' });
  });

  it('ends at the shallow boundary of a clone with depth, as git blame does with the same shallow file', async () => {
    const { repoId: shallowId } = await engine.clone({ url: `${serverUrl}/blame.git`, depth: 12 });
    await maintenanceIdle(ctx, shallowId);
    const fs = ctx.store.repoFs.open(shallowId).promises;
    const shallowFile = join(scratch(), 'shallow');
    await writeFile(shallowFile, (await fs.readFile('/.git/shallow', 'utf8')) as string);
    for (const path of ['src/core/router.js', 'src/store/cache.js']) {
      const result = await engine.repo(shallowId).blame({ ref: 'main', path });
      const ours = result.lines.map((l) => `${l.commit} ${l.origLine} ${l.origPath}`);
      const theirs = await gitBlame(bare, 'main', path, ['--shallow-file', shallowFile]);
      expect(new Set(ours).size).toBeGreaterThan(1);
      expect({ path, lines: ours }).toEqual({ path, lines: theirs });
    }
  });

  it.each([
    ['a folder', 'src/core'],
    ['a missing path', 'src/nope.js'],
  ])('refuses %s with PATH_NOT_FOUND', async (_, path) => {
    const err = await engine
      .repo(repoId)
      .blame({ ref: 'main', path })
      .catch((e: Error) => e);
    expect(err).toMatchObject({ code: 'PATH_NOT_FOUND' });
    expect((err as Error).message).toContain(`"${path}"`);
  });
});
