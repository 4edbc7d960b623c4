// Trees edited with isomorphic-git's object writers, without a working tree: tests that make commits whose
// blobs the clone does not hold (push.test.ts, pushCases.test.ts).
import git from 'isomorphic-git';

type Fs = Parameters<typeof git.readTree>[0]['fs'];

export type TreeEntry = { mode: string; path: string; oid: string; type: 'blob' | 'tree' | 'commit' };

/**
 * The tree `tree` (null: an empty one) with the entry at `parts` set to `entry`, or removed when null;
 * missing folders on the way are made. Returns the new tree's id.
 */
export async function setTreeEntry(
  fs: Fs,
  gitdir: string,
  tree: string | null,
  parts: string[],
  entry: TreeEntry | null,
): Promise<string> {
  const entries: TreeEntry[] = tree
    ? ((await git.readTree({ fs, gitdir, oid: tree })).tree as TreeEntry[])
    : [];
  const rest = entries.filter((e) => e.path !== parts[0]);
  const current = entries.find((e) => e.path === parts[0]);
  if (parts.length === 1) {
    if (entry) rest.push({ ...entry, path: parts[0] });
  } else {
    const sub = await setTreeEntry(
      fs,
      gitdir,
      current?.type === 'tree' ? current.oid : null,
      parts.slice(1),
      entry,
    );
    rest.push({ mode: '040000', path: parts[0], oid: sub, type: 'tree' });
  }
  return git.writeTree({ fs, gitdir, tree: rest });
}
