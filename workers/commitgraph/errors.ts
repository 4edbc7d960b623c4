/** Every code a CommitGraphError carries; the type below is made from it, so the two cannot drift apart. */
export const COMMIT_GRAPH_ERROR_CODES = Object.freeze([
  // A commit-graph file or chain that does not parse, fails its checksum, or points outside itself.
  'COMMIT_GRAPH_CORRUPT',
  // Input a writer cannot turn into a valid file (a parent missing from the graph, a bad id).
  'COMMIT_GRAPH_INVALID_INPUT',
] as const);

export type CommitGraphErrorCode = (typeof COMMIT_GRAPH_ERROR_CODES)[number];

/**
 * A commit-graph file (`objects/info/commit-graphs`) that cannot be read or written. The engine rebuilds a
 * corrupt graph from the commits, so a caller sees this only when that fails as well.
 */
export class CommitGraphError extends Error {
  /** Always `CommitGraphError`. */
  override readonly name = 'CommitGraphError';

  constructor(
    /** What went wrong, for programs to branch on (COMMIT_GRAPH_ERROR_CODES). */
    readonly code: CommitGraphErrorCode,
    message: string,
  ) {
    super(message);
  }
}
