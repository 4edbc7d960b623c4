// CRC-32 (IEEE 802.3, reflected polynomial 0xedb88320), the checksum .idx v2 keeps for each entry's raw
// bytes so that repacking can copy compressed data without inflating it (gitformat-pack: idx version 2).
// Slicing-by-8: eight 256-entry tables let the loop consume 8 bytes per step; in V8 it measured 1.5-1.7x
// the byte-at-a-time loop (bench/pack/ingest.bench.ts, "primitives"). hash-wasm's CRC-32 is a little
// faster still, but it would save ~10 ms on a 54 MB pack and needs async setup.

const TABLES = buildTables();

function buildTables(): Int32Array {
  const t = new Int32Array(8 * 256);
  for (let n = 0; n < 256; n++) {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    t[n] = c;
  }
  for (let n = 0; n < 256; n++) {
    let c = t[n];
    for (let k = 1; k < 8; k++) {
      c = t[c & 0xff] ^ (c >>> 8);
      t[k * 256 + n] = c;
    }
  }
  return t;
}

/**
 * CRC-32 of `data[start, end)`, continuing from `crc` (the value returned for the bytes before), as an
 * unsigned 32-bit number.
 */
export function crc32(data: Uint8Array, start = 0, end = data.length, crc = 0): number {
  const t = TABLES;
  let c = ~crc;
  let i = start;
  for (const stop = end - 8; i <= stop; i += 8) {
    const lo = c ^ (data[i] | (data[i + 1] << 8) | (data[i + 2] << 16) | (data[i + 3] << 24));
    c =
      t[1792 + (lo & 0xff)] ^
      t[1536 + ((lo >>> 8) & 0xff)] ^
      t[1280 + ((lo >>> 16) & 0xff)] ^
      t[1024 + (lo >>> 24)] ^
      t[768 + data[i + 4]] ^
      t[512 + data[i + 5]] ^
      t[256 + data[i + 6]] ^
      t[data[i + 7]];
  }
  for (; i < end; i++) c = t[(c ^ data[i]) & 0xff] ^ (c >>> 8);
  return ~c >>> 0;
}

/** The byte-at-a-time loop, kept as the reference the tests and the benchmark compare against. */
export function crc32Bytewise(data: Uint8Array, start = 0, end = data.length, crc = 0): number {
  const t = TABLES;
  let c = ~crc;
  for (let i = start; i < end; i++) c = t[(c ^ data[i]) & 0xff] ^ (c >>> 8);
  return ~c >>> 0;
}
