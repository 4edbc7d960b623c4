// What a commit-graph needs of a commit object: its tree, its parents and its committer time, read from
// the header git writes (gitformat-commit: `tree`, `parent`s, `author`, `committer`, each on one line
// before the first empty line). The bytes are a stored object's, possibly hostile: anything but that
// shape is null, and the caller reads the commit the slower way, whose errors it reports.

import { isSha1Hex } from './objectId.ts';

export interface CommitHeader {
  tree: string;
  parents: string[];
  /** The committer's timestamp, seconds since the epoch, as isomorphic-git reads it. */
  committerTime: number;
}

/** The commit's tree, parents and committer time, or null when its header is not what git writes. */
export function parseCommitHeader(data: Uint8Array): CommitHeader | null {
  let end = 0;
  while (end < data.length && !(data[end] === 10 && (end === 0 || data[end - 1] === 10))) end++;
  let text = '';
  for (let i = 0; i < end; i++) text += String.fromCharCode(data[i]!);
  const lines = text.split('\n');
  const tree = lines[0]?.startsWith('tree ') ? lines[0].slice(5) : '';
  if (!isSha1Hex(tree)) return null;
  const parents: string[] = [];
  let at = 1;
  for (; lines[at]?.startsWith('parent '); at++) {
    const parent = lines[at]!.slice(7);
    if (!isSha1Hex(parent)) return null;
    parents.push(parent);
  }
  const committers = lines.filter((line) => line.startsWith('committer '));
  if (committers.length !== 1) return null;
  // isomorphic-git's reading of an identity line: "name <email> timestamp offset".
  const identity = /^(.*) <(.*)> (.*) (.*)$/.exec(committers[0]!.slice(10));
  const committerTime = identity ? Number(identity[3]) : Number.NaN;
  if (!Number.isSafeInteger(committerTime)) return null;
  return { tree, parents, committerTime };
}
