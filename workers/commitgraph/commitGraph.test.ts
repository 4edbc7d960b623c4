// The commit-graph reader on damaged files: whatever the bytes, it answers from the file or throws a
// CommitGraphError, never another exception. (Its agreement with git is in test/commitGraphOracle.test.ts.)
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { sha1 } from '../pack/objectHash.ts';
import { bloomFilterFor, pathKeys, pathMaybeChanged } from './bloomFilter.ts';
import { CommitGraph } from './commitGraph.ts';
import { layersToMerge, writeSplitLayer } from './commitGraphChain.ts';
import { type GraphCommit, writeCommitGraph } from './commitGraphWriter.ts';
import { CommitGraphError } from './errors.ts';

const hex = (n: number) => n.toString(16).padStart(40, '0');

/** A small history: a line of commits with a merge and an octopus merge, each with a changed file. */
function history(): GraphCommit[] {
  const commits: GraphCommit[] = [];
  for (let i = 1; i <= 12; i++) {
    const parents =
      i === 1 ? [] : i === 8 ? [hex(7), hex(3)] : i === 11 ? [hex(10), hex(5), hex(2), hex(6)] : [hex(i - 1)];
    commits.push({
      oid: hex(i),
      tree: hex(1000 + i),
      parents,
      time: 1_700_000_000 + i,
      bloom: bloomFilterFor([`dir/f${i}`]),
    });
  }
  return commits;
}

/** Reads everything a file says about every commit. */
function readAll(graph: CommitGraph): void {
  for (let p = 0; p < graph.size; p++) {
    graph.oid(p);
    graph.tree(p);
    graph.parents(p);
    graph.commitTime(p);
    graph.topoLevel(p);
    graph.correctedDate(p);
    graph.generation(p);
    graph.bloomFilter(p);
    graph.position(graph.oid(p));
  }
}

/** The file with `edit` applied and its checksum made right again, so the damage reaches the parser. */
function damaged(file: Uint8Array, edit: (f: Uint8Array) => void): Uint8Array {
  const copy = file.slice();
  edit(copy);
  copy.set(sha1(copy.subarray(0, copy.length - 20)), copy.length - 20);
  return copy;
}

describe('commit-graph reader', () => {
  const file = writeCommitGraph(history(), { changedPaths: true });

  it('reads back what was written', () => {
    const graph = CommitGraph.fromFile(file);
    expect(graph.size).toBe(12);
    const octopus = graph.position(hex(11));
    expect(graph.parents(octopus).map((p) => graph.oid(p))).toEqual([hex(10), hex(5), hex(2), hex(6)]);
    expect(graph.topoLevel(graph.position(hex(12)))).toBe(12);
    expect(pathMaybeChanged(graph.bloomFilter(graph.position(hex(4)))!, pathKeys('dir/f4'))).toBe(true);
    expect(pathMaybeChanged(graph.bloomFilter(graph.position(hex(4)))!, pathKeys('dir'))).toBe(true);
    // A path never changed is "definitely not" in most filters (false positives are possible, not common).
    const misses = history().filter(
      (c) => !pathMaybeChanged(graph.bloomFilter(graph.position(c.oid))!, pathKeys('elsewhere/x')),
    );
    expect(misses.length).toBeGreaterThan(8);
  });

  it('turns damage into COMMIT_GRAPH_CORRUPT', () => {
    const corrupt = (f: Uint8Array) => {
      try {
        readAll(CommitGraph.fromFile(f));
        return null;
      } catch (err) {
        return (err as CommitGraphError).code;
      }
    };
    expect(corrupt(file.subarray(0, 30))).toBe('COMMIT_GRAPH_CORRUPT');
    const flipped = file.slice();
    flipped[100] ^= 1;
    expect(corrupt(flipped)).toBe('COMMIT_GRAPH_CORRUPT'); // the checksum
    expect(corrupt(damaged(file, (f) => f.set([0x44], 0)))).toBe('COMMIT_GRAPH_CORRUPT'); // signature
    expect(corrupt(damaged(file, (f) => f.set([2], 5)))).toBe('COMMIT_GRAPH_CORRUPT'); // SHA-256
    expect(corrupt(damaged(file, (f) => f.set([0xff, 0xff], 8 + 4 + 6)))).toBe('COMMIT_GRAPH_CORRUPT'); // offset
  });

  it('never throws anything but CommitGraphError, whatever bytes it is given', () => {
    fc.assert(
      fc.property(
        fc.array(fc.tuple(fc.nat(file.length - 21), fc.integer({ min: 0, max: 255 })), {
          minLength: 1,
          maxLength: 4,
        }),
        (edits) => {
          const f = damaged(file, (c) => {
            for (const [at, byte] of edits) c[at] = byte;
          });
          try {
            readAll(CommitGraph.fromFile(f));
          } catch (err) {
            if (!(err instanceof CommitGraphError)) throw err;
          }
        },
      ),
      { numRuns: 3000, seed: 22 },
    );
  });

  it('refuses input it cannot write: a missing parent, a duplicate', () => {
    const [first, second] = history();
    expect(() => writeCommitGraph([second])).toThrow(CommitGraphError);
    expect(() => writeCommitGraph([first, first])).toThrow(CommitGraphError);
    expect(() => writeCommitGraph([first], { changedPaths: true, base: null })).not.toThrow();
    expect(() => writeCommitGraph([{ ...first, bloom: undefined }], { changedPaths: true })).toThrow(
      CommitGraphError,
    );
  });

  it("merges layers as git's split strategy does", () => {
    expect(layersToMerge([], 10)).toBe(0);
    expect(layersToMerge([100, 20], 10)).toBe(1);
    expect(layersToMerge([100, 21], 10)).toBe(0);
    expect(layersToMerge([60, 20], 10)).toBe(2);
    expect(layersToMerge([60, 20], 10, { noMerge: true })).toBe(0);
    const commits = history();
    for (const noMerge of [false, true]) {
      let chain: Uint8Array[] = [];
      for (const part of [commits.slice(0, 6), commits.slice(6, 8), commits.slice(8)]) {
        chain = writeSplitLayer(chain, part, { changedPaths: true, noMerge }).layers.map((l) => l.bytes);
      }
      // 6, then 2 on top, then 4: git merges the 2 into the 4, then the 6 into those 6.
      expect(chain).toHaveLength(noMerge ? 3 : 1);
      const graph = CommitGraph.fromChain(chain);
      expect(graph.size).toBe(12);
      readAll(graph);
      // A layer without the layers it names is not a graph.
      if (noMerge) expect(() => CommitGraph.fromChain([chain[2]])).toThrow(CommitGraphError);
    }
  });
});
