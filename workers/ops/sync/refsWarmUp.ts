// Warming up what a clone does with the server's refs, before the first clone. On a repository with a
// thousand tags (the bench's tags50: 1,050 refs) the first clone ran this code cold, about 20 ms of a
// 140 ms clone in Chromium's CPU profile; warm, under 10 (docs/decisions/warm-up.md). So the engine's
// warm-up (maintenance/ingesterWarmUp.ts) also runs a synthetic ls-refs answer through the functions a
// clone runs, in its order, with what makes a real answer: HEAD's symref, branches, annotated tags peeled.

import { refNameProblem } from '../../model/refName.ts';
import { serializePackedRefs } from '../../store/packedRefs.ts';
import { buildFetchRequest } from '../../wire/fetchCommand.ts';
import { parseLsRefsResponse } from '../../wire/lsRefs.ts';
import { concatBytes, encodePktLine, FLUSH_PKT, type Packet, readPackets } from '../../wire/pktLine.ts';
import { throwIfAborted } from '../common/errors.ts';
import { planRefs } from './clone.ts';
import { checkRemoteRefNames } from './remoteRefNames.ts';

/** Rounds over the synthetic answer; each is a few milliseconds once compiled. */
export const REF_ROUNDS = 3;
const BRANCHES = 50;
const TAGS = 1000;
/** Where the synthetic refs say they come from: never asked, only named in messages. */
const WARM_UP_URL = 'https://warm-up.invalid/repo.git';

/** A 40-digit object id made from `n`, distinct for each n below 2^32. */
function oid(n: number): string {
  return (Math.imul(n + 1, 0x9e3779b1) >>> 0).toString(16).padStart(8, '0').repeat(5);
}

/** The synthetic ls-refs answer, framed as a server sends it (gitprotocol-v2: ls-refs). */
export function warmUpLsRefsAnswer(): Uint8Array {
  const lines = [encodePktLine(`${oid(0)} HEAD symref-target:refs/heads/main\n`)];
  for (let b = 0; b < BRANCHES; b++) {
    lines.push(encodePktLine(`${oid(b)} refs/heads/${b === 0 ? 'main' : `topic/branch-${b}`}\n`));
  }
  for (let t = 0; t < TAGS; t++) {
    lines.push(
      encodePktLine(`${oid(BRANCHES + t)} refs/tags/v${t >>> 7}.${t & 127}.0 peeled:${oid(t % BRANCHES)}\n`),
    );
  }
  lines.push(FLUSH_PKT);
  return concatBytes(lines);
}

/**
 * Runs the synthetic answer `rounds` times through ls-refs' reading and parsing, the name checks, the
 * clone's plan, the fetch request, and the packed-refs and `.promisor` text the write makes; yields to
 * the event loop between rounds and stops (ABORTED) when `signal` says an operation began.
 */
export async function warmUpRefs(signal: AbortSignal, rounds = REF_ROUNDS): Promise<void> {
  const answer = warmUpLsRefsAnswer();
  for (let round = 0; round < rounds; round++) {
    throwIfAborted(signal);
    const packets: Packet[] = [];
    for await (const packet of readPackets(chunks(answer), {
      maxBytes: answer.length,
      limit: 'maxLsRefsBytes',
      what: 'ls-refs answer',
    })) {
      packets.push(packet);
    }
    const listed = parseLsRefsResponse(packets);
    const headTarget = listed.find((r) => r.name === 'HEAD')?.symrefTarget;
    const named = checkRemoteRefNames(listed, headTarget, WARM_UP_URL);
    const plan = planRefs(named.kept, { url: WARM_UP_URL }, true, WARM_UP_URL);
    buildFetchRequest({
      wants: plan.wants,
      done: true,
      ofsDelta: true,
      noProgress: true,
      includeTag: true,
      filter: 'blob:none',
      agent: 'blobless/warm-up',
    });
    // What the write checks and writes of them (store/gitDir.ts checks each name before writing).
    for (const ref of plan.packedRefs) refNameProblem(ref.name);
    serializePackedRefs(plan.packedRefs);
    plan.refs.map((r) => `${r.oid} ${r.name}\n`).join('');
    await new Promise((resolve) => setTimeout(resolve, 0));
  }
  throwIfAborted(signal);
}

/** The answer in a few chunks, as a response body arrives. */
async function* chunks(bytes: Uint8Array): AsyncGenerator<Uint8Array> {
  const size = 16 * 1024;
  for (let at = 0; at < bytes.length; at += size) yield bytes.subarray(at, at + size);
}
