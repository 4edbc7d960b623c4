// Constants of the commit-graph file (gitformat-commit-graph, commit-graph.c in git 2.39).

export const SIGNATURE = 0x43475048; // "CGPH"
export const GRAPH_VERSION = 1;
/** Hash version 1: SHA-1 object ids. */
export const HASH_VERSION_SHA1 = 1;
export const HASH_SIZE = 20;
export const HEADER_SIZE = 8;
export const FANOUT_SIZE = 256 * 4;
/** Tree id, two parent positions, generation and time. */
export const COMMIT_DATA_SIZE = HASH_SIZE + 16;

/** A parent slot with no parent (GRAPH_PARENT_NONE). */
export const PARENT_NONE = 0x70000000;
/** In the second parent slot: the rest of the parents are in EDGE from this index (GRAPH_EXTRA_EDGES_NEEDED). */
export const EXTRA_EDGES_NEEDED = 0x80000000;
/** In EDGE: the last parent of its commit (GRAPH_LAST_EDGE). */
export const LAST_EDGE = 0x80000000;
/** Topological levels above this are stored as this (GENERATION_NUMBER_V1_MAX). */
export const GENERATION_V1_MAX = 0x3fffffff;
/** Corrected-date offsets above this go to GDO2 (GENERATION_NUMBER_V2_OFFSET_MAX). */
export const GENERATION_V2_OFFSET_MAX = 0x7fffffff;
/** In GDA2: the offset is in GDO2 at this index (CORRECTED_COMMIT_DATE_OFFSET_OVERFLOW). */
export const OFFSET_OVERFLOW = 0x80000000;
/** The BDAT header: three 32-bit numbers. */
export const BLOOM_HEADER_SIZE = 12;

export const CHUNK = {
  fanout: 'OIDF',
  lookup: 'OIDL',
  data: 'CDAT',
  generations: 'GDA2',
  generationOverflow: 'GDO2',
  extraEdges: 'EDGE',
  bloomIndexes: 'BIDX',
  bloomData: 'BDAT',
  base: 'BASE',
} as const;
