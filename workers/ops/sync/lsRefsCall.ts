import type { GitHttpClient } from '../../transport/gitHttp.ts';
import type { V2Capabilities } from '../../wire/capabilities.ts';
import { WireError } from '../../wire/errors.ts';
import { buildLsRefsRequest, parseLsRefsResponse, type RemoteRef } from '../../wire/lsRefs.ts';
import { type Packet, readPackets } from '../../wire/pktLine.ts';

/**
 * An ls-refs sent together with the info/refs GET, before the capabilities are known (lsRefsAhead). Its
 * answer is used only where the request it made is the one lsRefsCall would make now (usableAhead).
 */
export interface LsRefsAhead {
  readonly client: GitHttpClient;
  readonly refPrefixes: readonly string[];
  /** The repository address the request went to: its answer is used only if info/refs lands there. */
  readonly sentTo: string;
  /**
   * The refs listed; or the server's answer was bad (WireError: framing, a cap passed), or null when the
   * request failed before an answer was read (then it is asked again, in turn).
   */
  readonly answer: Promise<RemoteRef[] | WireError | null>;
}

/**
 * Sends ls-refs at once, in parallel with `client.infoRefs`: on a v2 server the two are independent, so the
 * clone waits for one round trip (and, in a browser, one preflight) fewer. It asks only what is valid
 * whatever the server advertises (gitprotocol-v2: ls-refs: `symrefs`, `peel` and `ref-prefix` are
 * arguments every ls-refs takes; `unborn` only if advertised; `agent` only if advertised, and never
 * needed). A v1 server answers it with an error or nonsense: never read, as lsRefsCall is only called
 * after a v2 advertisement. `movedTo`: where an earlier info/refs of this repository landed
 * (RepoRecord.movedTo): a moved repository is asked there, not at the address that would answer 301
 * (GitHttpClient.aheadBase; docs/decisions/ls-refs-ahead.md).
 */
export function lsRefsAhead(
  client: GitHttpClient,
  refPrefixes: string[],
  maxBytes: number,
  movedTo?: string,
): LsRefsAhead {
  const at = client.aheadBase(movedTo);
  const answer = (async () => {
    const body = await client.postAhead(
      'git-upload-pack',
      buildLsRefsRequest({ refPrefixes, symrefs: true, peel: true }),
      at,
    );
    return readLsRefs(body, maxBytes);
  })().catch((err: unknown) => (err instanceof WireError ? err : null));
  return { client, refPrefixes: [...refPrefixes], sentTo: at.href, answer };
}

/**
 * One `ls-refs` round trip (gitprotocol-v2: ls-refs) for clone, fetch and the minimal fetch: symrefs and
 * peeled tags asked for, `unborn` where the server offers it, and the answer read under the ls-refs byte
 * cap, since a hostile server could otherwise send refs without end. With `ahead`, the answer of the
 * speculative request when it is the same request (usableAhead).
 */
export async function lsRefsCall(
  client: GitHttpClient,
  caps: V2Capabilities,
  refPrefixes: string[],
  opts: { agent?: string; maxBytes: number; ahead?: LsRefsAhead },
): Promise<RemoteRef[]> {
  if (opts.ahead) {
    const listed = await usableAhead(opts.ahead, client, caps, refPrefixes);
    if (listed) return listed;
  }
  const lsCaps = caps.commands.get('ls-refs') ?? new Set<string>();
  const body = await client.post(
    'git-upload-pack',
    buildLsRefsRequest({
      refPrefixes,
      symrefs: true,
      peel: true,
      unborn: lsCaps.has('unborn'),
      agent: opts.agent,
    }),
  );
  return readLsRefs(body, opts.maxBytes);
}

/**
 * The speculative answer, or null where it may differ from what asking now would give: another client (a
 * fallback to the CORS proxy), the POST sent elsewhere than where info/refs landed (a repository that
 * moved, or moved again, since its address was last learnt), other
 * prefixes, a server without ls-refs, or an `unborn` HEAD the request could not ask for (an empty
 * repository: without `unborn` the server leaves HEAD out, so a listing with HEAD is the same either way).
 */
async function usableAhead(
  ahead: LsRefsAhead,
  client: GitHttpClient,
  caps: V2Capabilities,
  refPrefixes: string[],
): Promise<RemoteRef[] | null> {
  const lsCaps = caps.commands.get('ls-refs');
  if (
    ahead.client !== client ||
    (client.redirectedTo ?? client.url).href !== ahead.sentTo ||
    !lsCaps ||
    ahead.refPrefixes.length !== refPrefixes.length ||
    ahead.refPrefixes.some((p, i) => p !== refPrefixes[i])
  )
    return null;
  const listed = await ahead.answer;
  if (!listed) return null;
  // The same request, answered badly (64 MB of refs, broken framing): asking again would read it again.
  if (listed instanceof WireError) throw listed;
  if (lsCaps.has('unborn') && refPrefixes.includes('HEAD') && !listed.some((r) => r.name === 'HEAD'))
    return null;
  return listed;
}

/** An ls-refs answer read under its byte cap and parsed (also the warm-up's, sync/refsWarmUp.ts). */
export async function readLsRefs(body: AsyncIterable<Uint8Array>, maxBytes: number): Promise<RemoteRef[]> {
  const packets: Packet[] = [];
  for await (const p of readPackets(body, { maxBytes, limit: 'maxLsRefsBytes', what: 'ls-refs answer' })) {
    packets.push(p);
  }
  return parseLsRefsResponse(packets);
}
