// What one engine's background commit-graph build keeps between its steps (commitGraphUpdate.ts): the walk
// for the commits the graph lacks when a step stopped short, and the commits still to be written.

import type { GraphCommit } from '../../commitgraph/commitGraphWriter.ts';

/** A walk for the commits the graph lacks, which a step stopped short may take up again. */
export interface MissingWalk {
  fresh: GraphCommit[];
  seen: Set<string>;
  stack: string[] | null;
}

/** A long history's commits still to be written in steps: parents before children, trees by commit. */
export interface Backlog {
  commits: GraphCommit[];
  trees: Map<string, string>;
}

/** Per repository, the background build's walk and backlog (dropped when a store adds more). */
export class CommitGraphBuilds {
  readonly backlogs = new Map<string, Backlog>();
  readonly walks = new Map<string, MissingWalk>();

  forget(repoId: string): void {
    this.backlogs.delete(repoId);
    this.walks.delete(repoId);
  }
}
