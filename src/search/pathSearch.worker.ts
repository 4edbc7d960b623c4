// Go to file's fuzzy search, in a worker of its own: preparing 100,000 paths for fuzzysort takes about
// 0.5 to 2 s (bench/reading/goToFile.bench.ts), which on the main thread would freeze the page.
import * as Comlink from 'comlink';
import fuzzysort from 'fuzzysort';

export interface PathMatch {
  path: string;
  /** Positions of the matched characters, for the page to mark. */
  indexes: number[];
}

let current: { key: string; prepared: Fuzzysort.Prepared[] } | null = null;

const pathSearch = {
  /** Takes the paths of one commit; a later call with another key replaces them. */
  load(key: string, paths: string): void {
    if (current?.key === key) return;
    current = { key, prepared: paths ? paths.split('\n').map((p) => fuzzysort.prepare(p)) : [] };
  },

  search(key: string, query: string, limit: number): PathMatch[] {
    if (current?.key !== key) return [];
    return fuzzysort
      .go(query, current.prepared, { limit, threshold: 0.2 })
      .map((r) => ({ path: r.target, indexes: [...r.indexes] }));
  },
};

export type PathSearch = typeof pathSearch;

Comlink.expose(pathSearch);
