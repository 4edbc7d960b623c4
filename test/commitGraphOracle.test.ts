// The commit-graph writer and reader against git: for copies of the fixture repositories, our file equals
// `git commit-graph write --reachable --changed-paths` byte for byte, split chains equal `--split` (git's
// merge strategy and no-merge) layer by layer, `git commit-graph verify` accepts what we wrote, and the
// reader gives back what git stored.
import { cp, mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, inject, it } from 'vitest';
import { bloomFilterFor, pathKeys, pathMaybeChanged } from '../workers/commitgraph/bloomFilter.ts';
import { CommitGraph } from '../workers/commitgraph/commitGraph.ts';
import { writeSplitLayer } from '../workers/commitgraph/commitGraphChain.ts';
import { type GraphCommit, writeCommitGraph } from '../workers/commitgraph/commitGraphWriter.ts';
import { fieldsByCommit, gitBytes } from './support/gitHistory.ts';
import { useTmpDir } from './support/tmpDir.ts';

const fixturesDir = inject('fixturesDir');
const tmp = useTmpDir('commit-graph');

/** A copy of a fixture without its commit-graph, to write graphs into. */
async function scratchCopy(repo: string, name: string): Promise<string> {
  const dir = join(tmp(), name);
  await cp(join(fixturesDir, repo), dir, { recursive: true });
  await rm(join(dir, 'objects/info/commit-graph'), { force: true });
  await rm(join(dir, 'objects/info/commit-graphs'), { recursive: true, force: true });
  return dir;
}

/** Every commit of the repository with what the graph stores and its changed paths, from git. */
async function graphInput(gitDir: string): Promise<Map<string, GraphCommit & { changed: string[] }>> {
  const log = (await gitBytes(gitDir, ['log', '--all', '--format=%H %T %ct %P']))
    .toString()
    .trim()
    .split('\n');
  const commits = new Map<string, GraphCommit & { changed: string[] }>();
  for (const line of log) {
    const [oid, tree, time, ...parents] = line.split(' ');
    commits.set(oid, { oid, tree, time: Number(time), parents: parents.filter(Boolean), changed: [] });
  }
  // What git's Bloom filter computation diffs: the first parent, or the empty tree for a root.
  const input = [...commits.values()].map((c) =>
    c.parents.length ? `${c.oid} ${c.parents[0]}\n` : `${c.oid}\n`,
  );
  const out = (
    await gitBytes(
      gitDir,
      ['diff-tree', '--stdin', '-r', '--root', '--no-renames', '--name-only', '-z'],
      input.join(''),
    )
  ).toString();
  for (const [oid, paths] of fieldsByCommit(out)) commits.get(oid)!.changed = paths;
  for (const c of commits.values()) c.bloom = bloomFilterFor(c.changed);
  return commits;
}

async function gitWrite(gitDir: string, args: string[], stdin = ''): Promise<void> {
  await gitBytes(
    gitDir,
    ['-c', 'commitGraph.generationVersion=2', 'commit-graph', 'write', '--no-progress', ...args],
    stdin,
  );
}

describe('commit-graph, against git commit-graph write', () => {
  for (const repo of ['blame.git', 'features.git', 'small-sized.git']) {
    it(`${repo}: one file with changed paths, byte for byte, and verified by git`, {
      timeout: 120_000,
    }, async () => {
      const gitDir = await scratchCopy(repo, `${repo}-single`);
      const commits = await graphInput(gitDir);
      // features.git's non-ASCII paths are hashed with git 2.39's sign-extended bytes.
      if (repo === 'features.git')
        expect([...commits.values()].some((c) => c.changed.some((p) => /[^\x00-\x7f]/.test(p)))).toBe(true);
      await gitWrite(gitDir, ['--reachable', '--changed-paths']);
      const theirs = new Uint8Array(await readFile(join(gitDir, 'objects/info/commit-graph')));
      const ours = writeCommitGraph([...commits.values()], { changedPaths: true });
      expect(Buffer.from(ours).equals(Buffer.from(theirs))).toBe(true);

      // git accepts ours (the same bytes; written again so the check stands alone).
      await writeFile(join(gitDir, 'objects/info/commit-graph'), ours);
      await gitBytes(gitDir, ['commit-graph', 'verify']);

      // The reader gives back what went in, from git's file.
      const graph = CommitGraph.fromFile(theirs);
      expect(graph.size).toBe(commits.size);
      for (const c of commits.values()) {
        const p = graph.position(c.oid);
        expect(graph.oid(p)).toBe(c.oid);
        expect(graph.tree(p)).toBe(c.tree);
        expect(graph.commitTime(p)).toBe(c.time);
        expect(graph.parents(p).map((q) => graph.oid(q))).toEqual(c.parents);
        for (const q of graph.parents(p)) {
          expect(graph.topoLevel(p)).toBeGreaterThan(graph.topoLevel(q));
          expect(graph.correctedDate(p)!).toBeGreaterThan(graph.correctedDate(q)!);
        }
        const filter = graph.bloomFilter(p)!;
        expect(Buffer.from(filter).equals(Buffer.from(c.bloom!))).toBe(true);
        // No false "definitely not": every changed path (and folder) may have changed.
        for (const path of c.changed) expect(pathMaybeChanged(filter, pathKeys(path))).toBe(true);
      }
      expect(graph.position('0'.repeat(40))).toBe(-1);
    });
  }

  it('blame.git: split chains grown as history arrives equal git --split, with and without merging', {
    timeout: 180_000,
  }, async () => {
    const source = join(fixturesDir, 'blame.git');
    const commits = await graphInput(source);
    const firstParents = (await gitBytes(source, ['rev-list', '--first-parent', '--reverse', 'main']))
      .toString()
      .trim()
      .split('\n');
    // Tips the history "arrives" at: small steps and large ones, so that git merges some layers (after 39,
    // a layer of 10 commits stays under 4 new ones: more than twice as large, not three times).
    const tips = [5, 30, 34, 35, 39, 80, 82, 140, firstParents.length - 1].map((i) => firstParents[i]);
    tips.push((await gitBytes(source, ['rev-parse', 'wip'])).toString().trim());

    for (const mode of ['--split', '--split=no-merge']) {
      const gitDir = await scratchCopy('blame.git', `split${mode.length}`);
      let chain: Uint8Array[] = [];
      let previous: string | null = null;
      for (const tip of tips) {
        const range = previous ? [tip, `^${previous}`] : [tip];
        const fresh = (await gitBytes(source, ['rev-list', ...range]))
          .toString()
          .trim()
          .split('\n')
          .filter(Boolean);
        await gitWrite(gitDir, [mode, '--stdin-commits', '--changed-paths'], `${tip}\n`);
        const ours = writeSplitLayer(
          chain,
          fresh.map((oid) => commits.get(oid)!),
          { changedPaths: true, noMerge: mode === '--split=no-merge' },
        );
        const dir = join(gitDir, 'objects/info/commit-graphs');
        expect(ours.chainFile).toBe(await readFile(join(dir, 'commit-graph-chain'), 'utf8'));
        for (const layer of ours.layers) {
          const theirs = await readFile(join(dir, `graph-${layer.hash}.graph`));
          expect(Buffer.from(layer.bytes).equals(theirs)).toBe(true);
        }
        chain = ours.layers.map((l) => l.bytes);
        previous = tip;
      }
      expect(chain.length).toBeGreaterThan(1);
      if (mode === '--split') expect(chain.length).toBeLessThan(tips.length);
      await gitBytes(gitDir, ['commit-graph', 'verify']);
      const graph = CommitGraph.fromChain(chain);
      expect(graph.size).toBe(commits.size);
      for (const c of commits.values()) {
        const p = graph.position(c.oid);
        expect(graph.parents(p).map((q) => graph.oid(q))).toEqual(c.parents);
        expect(Buffer.from(graph.bloomFilter(p)!).equals(Buffer.from(c.bloom!))).toBe(true);
      }
    }
  });

  it('stores 34-bit times, octopus edges and corrected dates too far ahead for 31 bits (GDO2)', async () => {
    // A history whose clock runs backwards by far more than 2^31 seconds, and one with an octopus merge.
    const gitDir = join(tmp(), 'clock.git');
    await mkdir(gitDir);
    await gitBytes(gitDir, ['init', '-q', '--bare', gitDir]);
    const times = [2 ** 33 + 5, 7, 0, 2 ** 31 + 3, 100];
    let stream = '';
    times.forEach((t, i) => {
      stream += `commit refs/heads/b${i}\ncommitter A <a@b> ${t} +0000\ndata 0\n`;
      if (i > 0) stream += `from refs/heads/b${i - 1}\n`;
      stream += `M 644 inline f${i}\ndata 2\n${i}\n\n`;
    });
    stream +=
      'commit refs/heads/side\ncommitter A <a@b> 50 +0000\ndata 0\nfrom refs/heads/b0\nM 644 inline s\ndata 1\ns\n\n';
    // A commit changing 300 files in 300 folders (600 paths: a "too large" filter though only 300 files)
    // and one changing 520 files.
    stream += 'commit refs/heads/wide\ncommitter A <a@b> 70 +0000\ndata 0\nfrom refs/heads/b4\n';
    for (let i = 0; i < 300; i++) stream += `M 644 inline d${i}/f\ndata 1\nx\n`;
    stream += '\ncommit refs/heads/wider\ncommitter A <a@b> 80 +0000\ndata 0\nfrom refs/heads/wide\n';
    for (let i = 0; i < 520; i++) stream += `M 644 inline g${i}\ndata 1\nx\n`;
    stream += '\n';
    stream +=
      'commit refs/heads/octopus\ncommitter A <a@b> 60 +0000\ndata 0\nfrom refs/heads/b4\nmerge refs/heads/side\nmerge refs/heads/b2\n\n';
    await gitBytes(gitDir, ['fast-import', '--quiet'], stream);
    const commits = await graphInput(gitDir);
    await gitWrite(gitDir, ['--reachable', '--changed-paths']);
    const theirs = await readFile(join(gitDir, 'objects/info/commit-graph'));
    const ours = writeCommitGraph([...commits.values()], { changedPaths: true });
    expect(Buffer.from(ours).equals(theirs)).toBe(true);
    const graph = CommitGraph.fromFile(ours);
    const octopus = (await gitBytes(gitDir, ['rev-parse', 'octopus'])).toString().trim();
    expect(graph.parents(graph.position(octopus))).toHaveLength(3);
    const top = (await gitBytes(gitDir, ['rev-parse', 'b4'])).toString().trim();
    expect(graph.commitTime(graph.position(top))).toBe(100);
    expect(graph.correctedDate(graph.position(top))).toBe(2 ** 33 + 9);
    for (const ref of ['wide', 'wider']) {
      const id = (await gitBytes(gitDir, ['rev-parse', ref])).toString().trim();
      expect([...graph.bloomFilter(graph.position(id))!]).toEqual([0xff]);
    }
  });
});
