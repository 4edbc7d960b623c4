// Rename detection against git on the fixture histories: every commit's `git diff-tree -M` and `-C`
// (name, status, score), and each rename or copy `git log --follow` found in blame.git, recomputed as
// --follow asks for it (one destination, every file of the parent a candidate).
import { join } from 'node:path';
import { describe, expect, inject, it } from 'vitest';
import {
  detectRenames,
  type FilePair,
  type RenameOptions,
  renameBlobsNeeded,
} from '../workers/diff/renames.ts';
import { allCommits, gitBytes, nameStatuses, rawChanges, readObjects } from './support/gitHistory.ts';

const fixturesDir = inject('fixturesDir');
const NULL_OID = '0'.repeat(40);

function statusLines(pairs: ReturnType<typeof detectRenames>['pairs']): string[] {
  return pairs.map((p) =>
    p.status === 'R' || p.status === 'C'
      ? `${p.status}${String(p.similarity).padStart(3, '0')} ${p.old!.path} ${p.new!.path}`
      : `${p.status} ${(p.new ?? p.old)!.path}`,
  );
}

/** Our detection on pairs whose blobs come from the repository, fetched in one batch as a client would. */
async function detect(gitDir: string, pairs: FilePair[], opts: RenameOptions) {
  const blobs = await readObjects(gitDir, renameBlobsNeeded(pairs, opts));
  return detectRenames(pairs, (oid) => blobs.get(oid), opts);
}

/** Every file of a commit's tree, by path: `git ls-tree -r`. */
async function treeFiles(
  gitDir: string,
  commit: string,
): Promise<Map<string, { mode: string; oid: string }>> {
  const out = (await gitBytes(gitDir, ['ls-tree', '-r', '-z', commit])).toString();
  const files = new Map<string, { mode: string; oid: string }>();
  for (const entry of out.split('\0').filter(Boolean)) {
    const [meta, path] = entry.split('\t');
    const [mode, , oid] = meta.split(' ');
    files.set(path, { mode, oid });
  }
  return files;
}

describe('rename detection, against git on the fixture histories', () => {
  for (const repo of ['blame.git', 'features.git', 'small-sized.git']) {
    it(`${repo}: diff-tree -M and -C on every commit`, { timeout: 120_000 }, async () => {
      const gitDir = join(fixturesDir, repo);
      const commits = (await allCommits(gitDir)).filter((c) => c.parents.length);
      const raw = await rawChanges(gitDir, commits);
      const pairsOf = (oid: string): FilePair[] =>
        raw.get(oid)!.map((c) => ({
          old:
            c.oldOid === NULL_OID && c.status === 'A'
              ? null
              : { path: c.path, mode: c.oldMode, oid: c.oldOid },
          new:
            c.newOid === NULL_OID && c.status === 'D'
              ? null
              : { path: c.path, mode: c.newMode, oid: c.newOid },
        }));
      const ids = commits.map((c): [string, string] => [c.oid, c.parents[0]]);
      const options: [string[], RenameOptions][] = [
        [['-M'], {}],
        [['-C'], { detect: 'copies' }],
      ];
      // Every blob any commit's detection reads, in one batch.
      const needed = commits.flatMap((c) => options.flatMap(([, o]) => renameBlobsNeeded(pairsOf(c.oid), o)));
      const blobs = await readObjects(gitDir, needed);
      let renames = 0;
      for (const [args, opts] of options) {
        const expected = await nameStatuses(gitDir, ids, args);
        for (let k = 0; k < commits.length; k++) {
          const ours = statusLines(
            detectRenames(pairsOf(commits[k].oid), (oid) => blobs.get(oid), opts).pairs,
          );
          expect({ commit: commits[k].oid, args, status: ours }).toEqual({
            commit: commits[k].oid,
            args,
            status: expected[k],
          });
          renames += ours.filter((l) => /^[RC]/.test(l)).length;
        }
      }
      // features.git's only rename rewrites its one line: git does not pair it either.
      if (repo !== 'features.git') expect(renames).toBeGreaterThan(0);
    });
  }

  it('blame.git: each rename and copy git log --follow finds, as --follow asks for it', {
    timeout: 120_000,
  }, async () => {
    const gitDir = join(fixturesDir, 'blame.git');
    const paths = (await gitBytes(gitDir, ['ls-tree', '-r', '--name-only', '-z', 'main']))
      .toString()
      .split('\0')
      .filter(Boolean);
    const kinds = new Set<string>();
    for (const path of paths) {
      const log = (
        await gitBytes(gitDir, [
          'log',
          '--follow',
          '--name-status',
          '--format=%H %P',
          '-z',
          'main',
          '--',
          path,
        ])
      )
        .toString()
        .split('\0');
      // Records: "<commit> <parents>", then "\n<status>", then one path (two for a rename or copy).
      for (let i = 0; i + 1 < log.length; i++) {
        const head = /^([0-9a-f]{40}) ?([0-9a-f ]*)$/.exec(log[i]);
        const kind = /^\n([RCA]\d*)$/.exec(log[i + 1]);
        if (!head || !kind) continue;
        const [, commit, parents] = head;
        const status = kind[1];
        i++;
        const followed = status.startsWith('A') ? log[i + 1] : log[i + 2];
        if (parents.split(' ').filter(Boolean).length !== 1) continue;
        const [before, after] = await Promise.all([treeFiles(gitDir, parents), treeFiles(gitDir, commit)]);
        const all = [...new Set([...before.keys(), ...after.keys()])].sort((a, b) =>
          Buffer.compare(Buffer.from(a), Buffer.from(b)),
        );
        const pairs: FilePair[] = all.map((p) => {
          const a = before.get(p);
          const b = after.get(p);
          return { old: a ? { path: p, ...a } : null, new: b ? { path: p, ...b } : null };
        });
        const result = await detect(gitDir, pairs, {
          detect: 'copies',
          findCopiesHarder: true,
          singleFollow: followed,
        });
        const mine = result.pairs.find((p) => p.new?.path === followed)!;
        const ours =
          mine.status === 'A'
            ? 'A'
            : `${mine.status}${String(mine.similarity).padStart(3, '0')} ${mine.old!.path}`;
        const theirs = status === 'A' ? 'A' : `${status} ${log[i + 1]}`;
        expect({ commit, followed, ours }).toEqual({ commit, followed, ours: theirs });
        kinds.add(theirs[0]);
      }
    }
    // Renames, copies, and added paths git found no source for.
    expect([...kinds].sort()).toEqual(['A', 'C', 'R']);
  });
});
