// The 32-bit murmur3 hash git 2.39 seeds its changed-path Bloom filters with (bloom.c murmur3_seeded).
// git 2.39 reads the path through a `char *`, which is signed on the platforms it ships for: bytes above
// 0x7f are sign-extended before they are shifted into a block. Bloom filters version 1 are defined by
// that behaviour (git 2.43 added version 2 without it), so non-ASCII paths must hash the same way here.

export function murmur3Seeded(seed: number, data: Uint8Array): number {
  const c1 = 0xcc9e2d51;
  const c2 = 0x1b873593;
  let h = seed | 0;
  const blocks = data.length >>> 2;
  const signed = (i: number) => (data[i] << 24) >> 24;
  for (let b = 0; b < blocks; b++) {
    const i = 4 * b;
    let k = signed(i) | (signed(i + 1) << 8) | (signed(i + 2) << 16) | (signed(i + 3) << 24);
    k = Math.imul(k, c1);
    k = (k << 15) | (k >>> 17);
    k = Math.imul(k, c2);
    h ^= k;
    h = (h << 13) | (h >>> 19);
    h = (Math.imul(h, 5) + 0xe6546b64) | 0;
  }
  const tail = 4 * blocks;
  const rest = data.length & 3;
  if (rest) {
    // The last one to three bytes, highest first, as murmur3's tail switch takes them.
    let k1 = 0;
    if (rest === 3) k1 ^= signed(tail + 2) << 16;
    if (rest >= 2) k1 ^= signed(tail + 1) << 8;
    k1 ^= signed(tail);
    k1 = Math.imul(k1, c1);
    k1 = (k1 << 15) | (k1 >>> 17);
    k1 = Math.imul(k1, c2);
    h ^= k1;
  }
  h ^= data.length;
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h >>> 0;
}
