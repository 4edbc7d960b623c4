import type { GitHttpClient } from '../../transport/gitHttp.ts';
import type { V2Capabilities } from '../../wire/capabilities.ts';
import { buildLsRefsRequest, parseLsRefsResponse, type RemoteRef } from '../../wire/lsRefs.ts';
import { type Packet, readPackets } from '../../wire/pktLine.ts';

/**
 * One `ls-refs` round trip (gitprotocol-v2: ls-refs) for clone, fetch and the minimal fetch: symrefs and
 * peeled tags asked for, `unborn` where the server offers it, and the answer read under the ls-refs byte
 * cap, since a hostile server could otherwise send refs without end.
 */
export async function lsRefsCall(
  client: GitHttpClient,
  caps: V2Capabilities,
  refPrefixes: string[],
  opts: { agent?: string; maxBytes: number },
): Promise<RemoteRef[]> {
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
  const { maxBytes } = opts;
  const packets: Packet[] = [];
  for await (const p of readPackets(body, { maxBytes, limit: 'maxLsRefsBytes', what: 'ls-refs answer' })) {
    packets.push(p);
  }
  return parseLsRefsResponse(packets);
}
