/**
 * Ref names in the order a person looks for them: versions by their numbers (4.10.0 after 4.9.0, not
 * before 4.2.0), a pre-release (5.0.0-beta.1) before its release, newest first.
 */

/** Compares two tag names as versions: numbers by value, a leading `v` ignored. Ascending. */
export function compareVersions(a: string, b: string): number {
  const pa = versionParts(a);
  const pb = versionParts(b);
  for (let i = 0; i < Math.min(pa.length, pb.length); i++) {
    const x = pa[i];
    const y = pb[i];
    if (x === y) continue;
    if (typeof x === 'number' && typeof y === 'number') return x - y;
    if (typeof x === 'number') return 1;
    if (typeof y === 'number') return -1;
    // `-beta` after the same numbers marks a pre-release: before the release, and before a `.1` patch.
    if (x.startsWith('-') !== y.startsWith('-')) return x.startsWith('-') ? -1 : 1;
    return x < y ? -1 : 1;
  }
  if (pa.length === pb.length) return 0;
  // One is the other plus a suffix: `5.0.0-beta.1` is before `5.0.0`, `4.1.0.1` after `4.1.0`.
  const rest = (pa.length > pb.length ? pa : pb)[Math.min(pa.length, pb.length)];
  const longerFirst = typeof rest === 'string' && rest.startsWith('-');
  return pa.length > pb.length === longerFirst ? -1 : 1;
}

function versionParts(name: string): (number | string)[] {
  return name
    .replace(/^v(?=\d)/i, '')
    .split(/(\d+)/)
    .filter((p) => p !== '' && p !== '.')
    .map((p) => (/^\d+$/.test(p) ? Number(p) : p));
}

/** Tags newest version first. */
export function sortTags(tags: string[]): string[] {
  return [...tags].sort((a, b) => compareVersions(b, a));
}

/** Branches with the default branch first, the rest by name. */
export function sortBranches(branches: string[], defaultBranch: string | null): string[] {
  const rest = branches.filter((b) => b !== defaultBranch).sort();
  return defaultBranch && branches.includes(defaultBranch) ? [defaultBranch, ...rest] : rest;
}

/** The names that contain the query (case-insensitive); those that start with it first, order kept. */
export function filterRefs(names: string[], query: string): string[] {
  const q = query.trim().toLowerCase();
  if (!q) return names;
  const hits = names.filter((n) => n.toLowerCase().includes(q));
  return [
    ...hits.filter((n) => n.toLowerCase().startsWith(q)),
    ...hits.filter((n) => !n.toLowerCase().startsWith(q)),
  ];
}
