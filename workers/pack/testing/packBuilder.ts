/**
 * Test support, Node only: writes packs and deltas by hand, for the cases git will not produce (broken
 * deltas, missing bases, wrong counts), and lists a pack's entry types with Node's zlib (an independent
 * reader, to check what a fixture pack holds). Never imported by runtime code.
 */

import { createHash } from 'node:crypto';
import { deflateSync, inflateSync } from 'node:zlib';

export type PackEntry =
  | { type: 'commit' | 'tree' | 'blob' | 'tag'; data: Uint8Array }
  | { ofsDelta: number; delta: Uint8Array; distance?: number } // base: index of an earlier entry
  | { refDelta: string; delta: Uint8Array }; // base: object id in hex

const TYPE_CODES = { commit: 1, tree: 2, blob: 3, tag: 4 } as const;

function entryHeader(type: number, size: number): number[] {
  const bytes: number[] = [];
  let c = (type << 4) | (size & 15);
  let rest = Math.floor(size / 16);
  while (rest > 0) {
    bytes.push(c | 0x80);
    c = rest & 0x7f;
    rest = Math.floor(rest / 128);
  }
  bytes.push(c);
  return bytes;
}

function ofsEncoding(distance: number): number[] {
  const bytes = [distance & 0x7f];
  let d = Math.floor(distance / 128);
  while (d > 0) {
    d -= 1;
    bytes.unshift(0x80 | (d & 0x7f));
    d = Math.floor(d / 128);
  }
  return bytes;
}

export function sha1Hex(data: Uint8Array): string {
  return createHash('sha1').update(data).digest('hex');
}

/** Object id of a whole object, as git computes it. */
export function objectId(type: string, data: Uint8Array): string {
  return createHash('sha1').update(`${type} ${data.length}\0`).update(data).digest('hex');
}

/** Recomputes the trailing checksum of `pack` in place (after a test altered the bytes before it). */
export function resign(pack: Uint8Array): Uint8Array {
  pack.set(
    createHash('sha1')
      .update(pack.subarray(0, pack.length - 20))
      .digest(),
    pack.length - 20,
  );
  return pack;
}

/** A pack of the given entries; `count` and `version` override the header's. */
export function buildPack(
  entries: PackEntry[],
  options: { count?: number; version?: number } = {},
): Uint8Array {
  return buildPackAt(entries, options).pack;
}

/** buildPack, with the offset where each entry starts. */
export function buildPackAt(
  entries: PackEntry[],
  options: { count?: number; version?: number } = {},
): { pack: Uint8Array; offsets: number[] } {
  const parts: Uint8Array[] = [];
  const header = new Uint8Array(12);
  header.set([0x50, 0x41, 0x43, 0x4b]);
  const view = new DataView(header.buffer);
  view.setUint32(4, options.version ?? 2);
  view.setUint32(8, options.count ?? entries.length);
  parts.push(header);
  let offset = 12;
  const offsets: number[] = [];
  for (const e of entries) {
    offsets.push(offset);
    let head: number[];
    let data: Uint8Array;
    if ('type' in e) {
      head = entryHeader(TYPE_CODES[e.type], e.data.length);
      data = e.data;
    } else if ('ofsDelta' in e) {
      head = [...entryHeader(6, e.delta.length), ...ofsEncoding(e.distance ?? offset - offsets[e.ofsDelta])];
      data = e.delta;
    } else {
      head = [...entryHeader(7, e.delta.length), ...Buffer.from(e.refDelta, 'hex')];
      data = e.delta;
    }
    const z = deflateSync(data);
    parts.push(new Uint8Array(head), z);
    offset += head.length + z.length;
  }
  const body = Buffer.concat(parts);
  return { pack: new Uint8Array(Buffer.concat([body, createHash('sha1').update(body).digest()])), offsets };
}

function sizeVarint(n: number): number[] {
  const bytes: number[] = [];
  do {
    let c = n & 0x7f;
    n = Math.floor(n / 128);
    if (n > 0) c |= 0x80;
    bytes.push(c);
  } while (n > 0);
  return bytes;
}

export type DeltaOp = { copy: [offset: number, length: number] } | { insert: Uint8Array | string };

/** A delta in git's format; `baseSize`/`resultSize` default to the true values (override to lie). */
export function makeDelta(
  baseSize: number,
  ops: DeltaOp[],
  options: { resultSize?: number; rawTail?: number[] } = {},
): Uint8Array {
  const body: number[] = [];
  let size = 0;
  for (const op of ops) {
    if ('copy' in op) {
      const [off, len] = op.copy;
      let cmd = 0x80;
      const args: number[] = [];
      for (let k = 0; k < 4; k++) {
        const b = Math.floor(off / 2 ** (8 * k)) & 0xff;
        if (b) {
          cmd |= 1 << k;
          args.push(b);
        }
      }
      const l = len === 0x10000 ? 0 : len;
      for (let k = 0; k < 3; k++) {
        const b = (l >>> (8 * k)) & 0xff;
        if (b) {
          cmd |= 0x10 << k;
          args.push(b);
        }
      }
      body.push(cmd, ...args);
      size += len;
    } else {
      const data = typeof op.insert === 'string' ? new TextEncoder().encode(op.insert) : op.insert;
      for (let i = 0; i < data.length; i += 127) {
        const piece = data.subarray(i, i + 127);
        body.push(piece.length, ...piece);
      }
      size += data.length;
    }
  }
  body.push(...(options.rawTail ?? []));
  return new Uint8Array([...sizeVarint(baseSize), ...sizeVarint(options.resultSize ?? size), ...body]);
}

/** Entry type codes of a pack in order (6 ofs-delta, 7 ref-delta), read with Node's zlib. */
export function entryTypes(pack: Uint8Array): number[] {
  const count = new DataView(pack.buffer, pack.byteOffset).getUint32(8);
  const types: number[] = [];
  let p = 12;
  for (let i = 0; i < count; i++) {
    let c = pack[p++];
    const type = (c >> 4) & 7;
    while (c & 0x80) c = pack[p++];
    if (type === 6) {
      do c = pack[p++];
      while (c & 0x80);
    } else if (type === 7) p += 20;
    const { engine } = inflateSync(pack.subarray(p), { info: true }) as unknown as {
      engine: { bytesWritten: number };
    };
    p += engine.bytesWritten;
    types.push(type);
  }
  return types;
}

/**
 * A delta that copies the first bytes of a `baseSize`-byte base over and over until it has produced
 * `resultSize` bytes: a handful of bytes per 16 MiB (a copy instruction moves at most 0xffffff bytes).
 */
export function amplifyingDelta(baseSize: number, resultSize: number): Uint8Array {
  const ops: DeltaOp[] = [];
  const piece = Math.min(baseSize, 0xffffff);
  for (let left = resultSize; left > 0; left -= piece) ops.push({ copy: [0, Math.min(piece, left)] });
  return makeDelta(baseSize, ops);
}
