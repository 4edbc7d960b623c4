// The order git keeps paths in: the index, `git ls-files`, `git status`, the conflicts a merge names, and tree
// entries all compare names as bytes (read-cache.c, tree.c), and git's bytes are UTF-8.

/**
 * Compares two paths in git's order: their UTF-8 bytes. That is code point order, which differs from JS's
 * own string order (UTF-16 units) only past U+FFFF: a surrogate pair stands for a code point above every
 * other one, where as a unit it sorts below U+E000-U+FFFF.
 */
export function comparePaths(a: string, b: string): number {
  const n = Math.min(a.length, b.length);
  for (let k = 0; k < n; k++) {
    const x = a.charCodeAt(k);
    const y = b.charCodeAt(k);
    if (x === y) continue;
    const xs = x >= 0xd800 && x <= 0xdfff;
    const ys = y >= 0xd800 && y <= 0xdfff;
    if (xs !== ys) return xs ? 1 : -1;
    return x - y;
  }
  return a.length - b.length;
}
