// The line diff against git on every commit of the fixture histories: each commit's patch against its
// first parent, built by workers/diff from the blobs, equals `git diff --full-index --no-renames` byte for
// byte (headers, hunk headers with their function lines, "\ No newline at end of file", binary files).
// Every fixture with a history runs here but medium, large and wide (minutes each) and the hostile ones:
// `DIFF_ORACLE_EXTRA=medium.git,large.git,wide.git npx vitest run test/lineDiffOracle.test.ts` adds them.
import { join } from 'node:path';
import { describe, expect, inject, it } from 'vitest';
import { type FileSide, formatFilePatch } from '../workers/diff/filePatch.ts';
import { ByteWriter } from '../workers/diff/unifiedDiff.ts';
import { allCommits, patches, rawChanges, readObjects } from './support/gitHistory.ts';

const fixturesDir = inject('fixturesDir');
const NULL_OID = '0'.repeat(40);
const UTF8 = new TextEncoder();

describe('line diff, against git diff on every commit', () => {
  for (const repo of [
    'blame.git',
    'features.git',
    'small-sized.git',
    'reading.git',
    'refs.git',
    'typechange.git',
    'basic.git',
    ...(process.env.DIFF_ORACLE_EXTRA ?? '').split(',').filter(Boolean),
  ]) {
    it(`${repo}: each commit's patch equals git's`, { timeout: 900_000 }, async () => {
      const gitDir = join(fixturesDir, repo);
      const commits = await allCommits(gitDir);
      const [raw, expected] = await Promise.all([
        rawChanges(gitDir, commits),
        patches(gitDir, commits, ['--full-index']),
      ]);
      const oids = new Set<string>();
      for (const changes of raw.values()) {
        for (const c of changes) {
          if (c.oldMode !== '160000' && c.oldOid !== NULL_OID) oids.add(c.oldOid);
          if (c.newMode !== '160000' && c.newOid !== NULL_OID) oids.add(c.newOid);
        }
      }
      const blobs = await readObjects(gitDir, oids);
      const side = (mode: string, oid: string, path: string): FileSide | null =>
        oid === NULL_OID && mode === '000000'
          ? null
          : {
              path,
              mode,
              oid,
              // git shows a submodule as the line naming its commit.
              content: mode === '160000' ? UTF8.encode(`Subproject commit ${oid}\n`) : blobs.get(oid)!,
            };
      let files = 0;
      const wrong: string[] = [];
      for (const c of commits) {
        const out = new ByteWriter();
        for (const change of raw.get(c.oid)!) {
          const patch = formatFilePatch(
            {
              old: side(change.oldMode, change.oldOid, change.path),
              new: side(change.newMode, change.newOid, change.path),
            },
            { abbrev: 40, quotePath: false },
          );
          out.bytes(patch);
          files++;
        }
        const ours = Buffer.from(out.finish());
        if (!ours.equals(expected.get(c.oid)!)) wrong.push(c.oid);
      }
      expect(files).toBeGreaterThan(commits.length);
      if (wrong.length) {
        const first = wrong[0];
        expect({ commit: first, count: wrong.length }).toEqual({ commit: first, count: 0 });
      }
    });
  }
});
