export interface PackedRef {
  name: string;
  oid: string;
  /** For an annotated tag, the object it finally points at (the `^` line). */
  peeled?: string;
}

/** `packed-refs` with the header git writes when every tag carries its peeled value. */
export function serializePackedRefs(refs: PackedRef[]): string {
  const sorted = [...refs].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  let out = '# pack-refs with: peeled fully-peeled sorted \n';
  for (const ref of sorted) {
    out += `${ref.oid} ${ref.name}\n`;
    if (ref.peeled && ref.peeled !== ref.oid) out += `^${ref.peeled}\n`;
  }
  return out;
}

/** Reads `packed-refs`: `<oid> <name>` lines, each optionally followed by its `^<peeled>` line. */
export function parsePackedRefs(text: string): PackedRef[] {
  const refs: PackedRef[] = [];
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    if (line.startsWith('^')) {
      const last = refs[refs.length - 1];
      if (last) last.peeled = line.slice(1);
      continue;
    }
    const space = line.indexOf(' ');
    if (space === 40) refs.push({ oid: line.slice(0, 40), name: line.slice(41) });
  }
  return refs;
}
