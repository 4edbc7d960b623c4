import { sha1 } from '../pack/objectHash.ts';

// The git index (`/.git/index`): its paths and modes read straight from its bytes, and a whole index
// written for a working tree checked out from nothing (ops/worktree/newWorktree.ts). isomorphic-git
// keeps its index parser to itself, and walking its STAGE took 1.0 to 1.9 s for 20,000 entries in Node
// where this parse takes 8 to 21 ms (an index `git update-index --index-info` wrote, 7 runs, 2 shared
// cores); a checkout asks it before every switch (ops/worktree/typeChanges.ts).

/** Path to mode as git prints it ("100644", "100755", "120000", "160000"), or null for a format not read here. */
export function parseIndexModes(bytes: Uint8Array): Map<string, string> | null {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  if (bytes.length < 12 || view.getUint32(0) !== 0x44495243 /* DIRC */) return null;
  const version = view.getUint32(4);
  // Version 4 compresses paths against the one before; isomorphic-git writes version 2.
  if (version !== 2 && version !== 3) return null;
  const count = view.getUint32(8);
  const decoder = new TextDecoder('utf-8');
  const modes = new Map<string, string>();
  let at = 12;
  for (let i = 0; i < count; i++) {
    // gitformat-index: ctime, mtime, dev, ino (24 bytes), mode, uid, gid, size, object id, flags.
    if (at + 62 > bytes.length) return null;
    const mode = view.getUint32(at + 24);
    const flags = view.getUint16(at + 60);
    const extended = version === 3 && (flags & 0x4000) !== 0;
    const start = at + 62 + (extended ? 2 : 0);
    let end = start + (flags & 0xfff);
    if ((flags & 0xfff) === 0xfff) end = bytes.indexOf(0, start);
    if (end < start || end > bytes.length) return null;
    // Only stage 0: a conflicted path's other stages name the same path.
    if (((flags >> 12) & 3) === 0) modes.set(decoder.decode(bytes.subarray(start, end)), mode.toString(8));
    // The entry is padded with 1 to 8 NULs to a multiple of 8 bytes.
    at += Math.floor((end - at + 8) / 8) * 8;
  }
  return modes;
}

/** One index entry: a file as the working tree holds it (lightning-fs's lstat), and its blob. */
export interface IndexEntry {
  path: string;
  oid: string;
  /** As git writes it: 0o100644, 0o100755, 0o120000 or 0o160000. */
  mode: number;
  stat: {
    ctimeMs: number;
    mtimeMs: number;
    dev: number;
    ino: number;
    uid: number;
    gid: number;
    size: number;
  };
}

const utf8 = new TextEncoder();
const UINT32 = 2 ** 32;

/**
 * gitformat-index, version 2, stage 0 only, no extensions: entries sorted by the bytes of their paths,
 * times split into seconds and nanoseconds as isomorphic-git splits lightning-fs's milliseconds (so its
 * status finds the files unchanged), then the SHA-1 of all before it.
 */
export function serializeIndex(entries: IndexEntry[]): Uint8Array {
  const named = entries.map((entry) => ({ entry, name: utf8.encode(entry.path) }));
  named.sort((a, b) => compareBytes(a.name, b.name));
  let length = 12 + 20;
  // 62 bytes of fields, the name, then 1 to 8 NULs up to a multiple of 8.
  for (const { name } of named) length += Math.floor((62 + name.length + 8) / 8) * 8;
  const out = new Uint8Array(length);
  const view = new DataView(out.buffer);
  view.setUint32(0, 0x44495243); // DIRC
  view.setUint32(4, 2);
  view.setUint32(8, named.length);
  let at = 12;
  for (const { entry, name } of named) {
    const { stat } = entry;
    const fields = [
      ...seconds(stat.ctimeMs),
      ...seconds(stat.mtimeMs),
      stat.dev,
      stat.ino,
      entry.mode,
      stat.uid,
      stat.gid,
      stat.size,
    ];
    for (let i = 0; i < fields.length; i++) view.setUint32(at + i * 4, fields[i] % UINT32);
    for (let i = 0; i < 20; i++) out[at + 40 + i] = Number.parseInt(entry.oid.slice(i * 2, i * 2 + 2), 16);
    view.setUint16(at + 60, Math.min(name.length, 0xfff));
    out.set(name, at + 62);
    at += Math.floor((62 + name.length + 8) / 8) * 8;
  }
  out.set(sha1(out.subarray(0, at)), at);
  return out;
}

function seconds(ms: number): [number, number] {
  const s = Math.floor(ms / 1000);
  return [s, Math.floor((ms - s * 1000) * 1_000_000)];
}

function compareBytes(a: Uint8Array, b: Uint8Array): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) if (a[i] !== b[i]) return a[i] - b[i];
  return a.length - b.length;
}
