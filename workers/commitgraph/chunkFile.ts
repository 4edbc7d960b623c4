// git's chunk-based file layout (gitformat-chunk): after a header, a table of (4-byte id, 8-byte offset)
// entries ending with a zero id whose offset is where the last chunk ends; chunks follow in table order.

import { CommitGraphError } from './errors.ts';

export interface Chunk {
  id: string;
  data: Uint8Array;
}

/** The table of contents and the chunks, to follow a header of `headerSize` bytes. */
export function writeChunks(headerSize: number, chunks: Chunk[]): Uint8Array {
  const tocSize = (chunks.length + 1) * 12;
  const total = headerSize + tocSize + chunks.reduce((n, c) => n + c.data.length, 0);
  const out = new Uint8Array(total);
  const view = new DataView(out.buffer);
  let at = headerSize;
  let offset = headerSize + tocSize;
  for (const c of chunks) {
    view.setUint32(at, chunkId(c.id));
    view.setBigUint64(at + 4, BigInt(offset));
    out.set(c.data, offset);
    offset += c.data.length;
    at += 12;
  }
  view.setUint32(at, 0);
  view.setBigUint64(at + 4, BigInt(offset));
  return out;
}

function chunkId(id: string): number {
  return (
    ((id.charCodeAt(0) << 24) | (id.charCodeAt(1) << 16) | (id.charCodeAt(2) << 8) | id.charCodeAt(3)) >>> 0
  );
}

/**
 * The chunks of a file, by id, as views into it. Offsets must ascend and stay between the table and
 * `end` (where the trailing checksum starts); anything else is a corrupt file.
 */
export function readChunks(
  file: Uint8Array,
  headerSize: number,
  count: number,
  end: number,
): Map<string, Uint8Array> {
  const view = new DataView(file.buffer, file.byteOffset, file.byteLength);
  const tocEnd = headerSize + (count + 1) * 12;
  if (tocEnd > end)
    throw new CommitGraphError('COMMIT_GRAPH_CORRUPT', 'The chunk table runs past the end of the file.');
  const chunks = new Map<string, Uint8Array>();
  for (let i = 0; i < count; i++) {
    const at = headerSize + 12 * i;
    const idNumber = view.getUint32(at);
    const start = Number(view.getBigUint64(at + 4));
    const next = Number(view.getBigUint64(at + 16));
    if (idNumber === 0 || start < tocEnd || next < start || next > end) {
      throw new CommitGraphError(
        'COMMIT_GRAPH_CORRUPT',
        `Chunk ${i} of the commit-graph lies outside the file.`,
      );
    }
    const id = String.fromCharCode(
      idNumber >>> 24,
      (idNumber >>> 16) & 0xff,
      (idNumber >>> 8) & 0xff,
      idNumber & 0xff,
    );
    if (chunks.has(id)) throw new CommitGraphError('COMMIT_GRAPH_CORRUPT', `Chunk ${id} appears twice.`);
    chunks.set(id, file.subarray(start, next));
  }
  if (view.getUint32(headerSize + 12 * count) !== 0) {
    throw new CommitGraphError(
      'COMMIT_GRAPH_CORRUPT',
      'The chunk table does not end with its terminating entry.',
    );
  }
  return chunks;
}
