// Blame, file history and the diff view against git on blame.git (merges, criss-cross merges, an octopus,
// an evil merge, renames with edits, copies, ambiguous insertions), for every file of main: blame equals
// `git blame --porcelain` (commit, original line and original path of every line), file history equals
// `git log --follow --format=%H`, and each commit's diffFile hunks equal `git diff -U3`'s.
import { join } from 'node:path';
import { beforeAll, describe, expect, inject, it } from 'vitest';
import { COMMIT_GRAPH_CHAIN } from '../workers/ops/common/commitGraphAccess.ts';
import { maintenanceIdle } from '../workers/ops/maintenance/packMaintenance.ts';
import type { DiffHunk } from '../workers/ops/read/diff.ts';
import { testEngine } from './support/engine.ts';
import { allCommits, gitBlame, gitBytes, patches, rawChanges } from './support/gitHistory.ts';

const { engine, ctx } = testEngine();
const serverUrl = inject('gitServerUrl');
const bare = join(inject('fixturesDir'), 'blame.git');
const NULL_OID = '0'.repeat(40);

let repoId: string;
let files: string[];
beforeAll(async () => {
  repoId = (await engine.clone({ url: `${serverUrl}/blame.git` })).repoId;
  const tree = (await gitBytes(bare, ['ls-tree', '-r', '-z', 'main'])).toString().split('\0').filter(Boolean);
  files = tree.filter((e) => !e.startsWith('160000') && !e.startsWith('120000')).map((e) => e.split('\t')[1]);
});

describe('blame.git against git', () => {
  it('blame equals git blame --porcelain for every line of every file', { timeout: 300_000 }, async () => {
    expect(files.length).toBeGreaterThanOrEqual(30);
    let versions = 0;
    let requests = 0;
    for (const path of files) {
      const result = await engine.repo(repoId).blame({ ref: 'main', path: path });
      const ours = result.lines.map((l) => `${l.commit} ${l.origLine} ${l.origPath}`);
      expect({ path, lines: ours }).toEqual({ path, lines: await gitBlame(bare, 'main', path) });
      versions += result.versionsFetched;
      requests += result.requests;
    }
    console.log(`blame of ${files.length} files: ${versions} blobs fetched in ${requests} requests`);
  });

  it('file history equals git log --follow for every file', { timeout: 300_000 }, async () => {
    for (const path of files) {
      const seen: string[] = [];
      for (let skip = 0; ; ) {
        const page = await engine.repo(repoId).fileHistory({ ref: 'main', path: path, skip, limit: 7 });
        seen.push(...page.entries.map((e) => e.commit.oid));
        skip += page.entries.length;
        if (!page.more) break;
      }
      const expected = (await gitBytes(bare, ['log', '--follow', '--format=%H', 'main', '--', path]))
        .toString()
        .split('\n')
        .filter(Boolean);
      expect({ path, history: seen }).toEqual({ path, history: expected });
    }
  });

  it("each folder's last commits equal git log -1 -- <entry> for every entry", {
    timeout: 300_000,
  }, async () => {
    const folders = ['', ...new Set(files.map((f) => f.split('/').slice(0, -1).join('/')).filter(Boolean))];
    for (const folder of folders) {
      const result = await engine.repo(repoId).lastCommits({ ref: 'main', path: folder });
      expect(result.unresolved).toEqual([]);
      const names = (await gitBytes(bare, ['ls-tree', '--name-only', '-z', `main:${folder}`]))
        .toString()
        .split('\0')
        .filter(Boolean);
      for (const name of names) {
        const path = folder ? `${folder}/${name}` : name;
        const expected = (await gitBytes(bare, ['log', '-1', '--format=%H', 'main', '--', path]))
          .toString()
          .trim();
        expect({ path, commit: result.entries[name]?.oid }).toEqual({ path, commit: expected });
      }
    }
  });

  it('compare equals git log a..b, git merge-base and git diff a...b across every merge', {
    timeout: 300_000,
  }, async () => {
    const merges = (await gitBytes(bare, ['log', '--merges', '--format=%P', 'main']))
      .toString()
      .trim()
      .split('\n');
    const pairs = merges.flatMap((m) => {
      const [first, ...others] = m.split(' ');
      return others.flatMap((o) => [
        [first, o],
        [o, first],
      ]);
    });
    const older = (await gitBytes(bare, ['rev-parse', 'main~40'])).toString().trim();
    pairs.push([older, 'main'], ['wip', 'main'], ['main', 'wip']);
    const lines = async (args: string[]) =>
      (await gitBytes(bare, args)).toString().split('\n').filter(Boolean);
    // Both ways of answering: from the commit-graph, once written (in the background after a clone), and
    // from commit objects, as before it is (its chain file removed: the graph is read again per call).
    await maintenanceIdle(ctx, repoId);
    expect(await ctx.store.repoFs.open(repoId).promises.stat(COMMIT_GRAPH_CHAIN)).toBeTruthy();
    await checkPairs(pairs, lines);
    await ctx.store.repoFs.open(repoId).promises.unlink(COMMIT_GRAPH_CHAIN);
    await checkPairs(pairs, lines);
  });

  async function checkPairs(pairs: string[][], lines: (args: string[]) => Promise<string[]>) {
    for (const [a, b] of pairs) {
      const result = await engine.repo(repoId).compare({ base: a, head: b });
      const status = { added: 'A', deleted: 'D', modified: 'M', 'type-changed': 'T' } as const;
      expect({ a, b, base: result.mergeBase }).toEqual({
        a,
        b,
        base: (await gitBytes(bare, ['merge-base', a, b])).toString().trim(),
      });
      expect(result.commits.map((c) => c.oid)).toEqual(await lines(['log', '--format=%H', `${a}..${b}`]));
      expect(result.diff.files.map((f) => `${status[f.status]}\t${f.path}`)).toEqual(
        await lines(['-c', 'core.quotePath=false', 'diff', '--no-renames', '--name-status', `${a}...${b}`]),
      );
    }
  }

  it("each commit's diffFile hunks equal git diff -U3's", { timeout: 300_000 }, async () => {
    const commits = await allCommits(bare);
    const [raw, expected] = await Promise.all([rawChanges(bare, commits), patches(bare, commits)]);
    const text = (hunks: DiffHunk[]) =>
      hunks
        .map((h) => {
          const range = (start: number, count: number) => (count === 1 ? `${start}` : `${start},${count}`);
          const head = `@@ -${range(h.oldStart, h.oldLines)} +${range(h.newStart, h.newLines)} @@`;
          const body = h.lines.map(
            (l) => `${l.kind}${l.text}\n${l.noNewlineAtEnd ? '\\ No newline at end of file\n' : ''}`,
          );
          return `${h.funcName ? `${head} ${h.funcName}` : head}\n${body.join('')}`;
        })
        .join('');
    let checked = 0;
    for (const c of commits) {
      // git's patch of the commit, cut into its files' hunks (headers left out; they are tested in
      // lineDiffOracle.test.ts).
      const sections = expected
        .get(c.oid)!
        .toString()
        .split(/^(?=diff --git )/m)
        .filter(Boolean);
      const changes = raw.get(c.oid)!.filter((ch) => ch.oldMode !== '160000' && ch.newMode !== '160000');
      expect(sections).toHaveLength(changes.length);
      for (let k = 0; k < changes.length; k++) {
        const ch = changes[k];
        const diff = await engine.repo(repoId).diffFile({
          oldOid: ch.oldOid === NULL_OID ? null : ch.oldOid,
          newOid: ch.newOid === NULL_OID ? null : ch.newOid,
        });
        const theirs = sections[k];
        const hunks = theirs.indexOf('\n@@ ');
        if (diff.binary) expect(theirs).toContain('Binary files');
        else
          expect({ commit: c.oid, path: ch.path, hunks: text(diff.hunks) }).toEqual({
            commit: c.oid,
            path: ch.path,
            hunks: hunks < 0 ? '' : theirs.slice(hunks + 1),
          });
        checked++;
      }
    }
    expect(checked).toBeGreaterThan(commits.length);
  });
});
