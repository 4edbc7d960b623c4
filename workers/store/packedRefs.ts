import { isSha1Hex, SHA1_HEX } from '../model/objectId.ts';

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

/**
 * Reads `packed-refs` (gitrepository-layout): `<oid> <name>` lines, each optionally followed by a `^<oid>`
 * line with the tag's peeled value; `#` lines are the header. Lines that fit neither are skipped, as git
 * would refuse them rather than guess.
 */
const REF_LINE = new RegExp(`^(${SHA1_HEX}) (refs/\\S+)$`);

export function parsePackedRefs(text: string): PackedRef[] {
  const refs: PackedRef[] = [];
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    if (line.startsWith('^')) {
      const last = refs.at(-1);
      if (last && isSha1Hex(line.slice(1))) last.peeled = line.slice(1);
      continue;
    }
    const m = REF_LINE.exec(line);
    if (m) refs.push({ oid: m[1], name: m[2] });
  }
  return refs;
}
