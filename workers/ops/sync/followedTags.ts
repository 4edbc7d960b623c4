// The tags a routine fetch follows (gitprotocol-v2: fetch, `include-tag`): the server adds to the pack
// every annotated tag whose object the pack holds, so the fetch learns of new releases on the commits it
// brings without listing every tag the server has (23 KB per fetch on a project with 304 tags, 114 KB on
// one with 200,000 commits). Which ref names those tags are published under is then asked with one narrow
// `ls-refs` (`ref-prefix refs/tags/<name>` per tag), whose answer must keep to what was asked.
//
// Lightweight tags hold no object of their own, so no pack can bring them: they, and tags moved or made
// on commits already held, come with a full tag listing (`fetch({ tags: 'all' })`, "Fetch tags").

import { parseTagHeader } from '../../model/tagObject.ts';
import type { IngestedPack } from '../../pack/packIngester.ts';
import { PackReader } from '../../pack/packReader.ts';
import type { GitHttpClient } from '../../transport/gitHttp.ts';
import type { V2Capabilities } from '../../wire/capabilities.ts';
import { type RemoteRef, requireAskedRefs } from '../../wire/lsRefs.ts';
import { lsRefsCall } from './lsRefsCall.ts';
import { checkRemoteRefNames } from './remoteRefNames.ts';

/*
 * Above this many tags in one pack, the whole of refs/tags/ is listed instead of one prefix per tag. Bytes
 * only, no time, decide it: a prefix line costs about 16 B plus the name in the request, while the answer
 * is the same for the tags asked (about 110 B each with its peeled id); past 1,000 names the request
 * passes 30 KB, about what listing 300 tags costs, and a pack with that many new tags is a first fetch in
 * years. git's server ignores the prefixes past 65,536 of them (ls-refs.c: TOO_MANY_PREFIXES).
 */
const MAX_TAG_PREFIXES = 1000;

/** An annotated tag found in a pack: its id and the ref it names itself as (unchecked). */
export interface PackedTag {
  oid: string;
  ref: string;
}

/** The annotated tags in a received pack, with the `refs/tags/<name>` each one's header claims. */
export function tagsInPack(pack: IngestedPack): PackedTag[] {
  const tagObjects = pack.objects.filter((o) => o.type === 'tag');
  if (tagObjects.length === 0) return [];
  const offsets = new Map(pack.objects.map((o) => [o.oid, o.offset]));
  const reader = new PackReader(pack.pack, (oid) => offsets.get(oid));
  const found: PackedTag[] = [];
  for (const object of tagObjects) {
    const header = parseTagHeader(reader.read(object.offset).data);
    if (header) found.push({ oid: object.oid, ref: `refs/tags/${header.name}` });
  }
  return found;
}

/**
 * The server's refs for the tags that came in the pack: names git would refuse are left out with a
 * warning before anything is asked, and the answer is refused (WireError PROTOCOL_UNEXPECTED) if it names
 * a ref outside the prefixes asked. Only refs named exactly as a packed tag are returned; the caller keeps
 * those whose object it holds.
 */
export async function confirmPackedTags(
  client: GitHttpClient,
  caps: V2Capabilities,
  packed: PackedTag[],
  opts: { agent?: string; maxBytes: number },
): Promise<{ refs: RemoteRef[]; warnings: string[] }> {
  const named = checkRemoteRefNames(
    packed.map((t) => ({ ...t, name: t.ref })),
    undefined,
    client.url.href,
  );
  const names = new Set(named.kept.map((t) => t.name));
  if (names.size === 0) return { refs: [], warnings: named.warnings };
  const prefixes = names.size > MAX_TAG_PREFIXES ? ['refs/tags/'] : [...names].sort();
  const answer = requireAskedRefs(await lsRefsCall(client, caps, prefixes, opts), prefixes);
  return {
    refs: answer.filter((ref) => ref.oid !== null && names.has(ref.name)),
    warnings: named.warnings,
  };
}
