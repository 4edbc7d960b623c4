// An annotated tag object's header, as git-mktag(1) and fsck's tag check require it: `object <id>`,
// `type <kind>`, `tag <name>` in that order, then `tagger` and the message. A
// fetch that asks for `include-tag` learns which tags came with the pack from these headers alone, so they
// are read as the hostile bytes they are: the name is only a claim, checked as a ref name before use.

import { isSha1Hex, type ObjectId } from './objectId.ts';

export interface TagHeader {
  /** The object the tag points to. */
  object: ObjectId;
  /** Its kind, as the tag says (`commit`, `tag` for a tag of a tag, …). */
  type: string;
  /** The name the tag was made with (`v1.0`): the ref it was published as is `refs/tags/<name>` by custom. */
  name: string;
}

/** The header of a tag object's bytes, or null when its first three lines are not what git writes (fsck_tag). */
export function parseTagHeader(data: Uint8Array): TagHeader | null {
  // The three lines git requires are ASCII and short; the message after them is never needed.
  const end = Math.min(data.length, 1024);
  let text = '';
  for (let i = 0; i < end; i++) text += String.fromCharCode(data[i]!);
  const lines = text.split('\n');
  if (lines.length < 4) return null;
  const [objectLine, typeLine, tagLine] = lines as [string, string, string];
  if (!objectLine.startsWith('object ') || !typeLine.startsWith('type ') || !tagLine.startsWith('tag ')) {
    return null;
  }
  const object = objectLine.slice('object '.length);
  const type = typeLine.slice('type '.length);
  const name = tagLine.slice('tag '.length);
  if (!isSha1Hex(object) || type === '' || name === '') return null;
  return { object, type, name };
}
