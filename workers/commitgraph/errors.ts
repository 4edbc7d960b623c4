export type CommitGraphErrorCode =
  /** A commit-graph file or chain that does not parse, fails its checksum, or points outside itself. */
  | 'COMMIT_GRAPH_CORRUPT'
  /** Input a writer cannot turn into a valid file (a parent missing from the graph, a bad id). */
  | 'COMMIT_GRAPH_INVALID_INPUT';

export class CommitGraphError extends Error {
  override readonly name = 'CommitGraphError';

  constructor(
    readonly code: CommitGraphErrorCode,
    message: string,
  ) {
    super(message);
  }
}
