// Warming up what a clone does with the server's refs, before the first clone. On a repository with a
// thousand tags (the bench's tags50: 1,050 refs) the first clone ran this code cold, about 20 ms of a
// 140 ms clone in Chromium's CPU profile; warm, under 10 (docs/decisions/warm-up.md). So the engine's
// warm-up (maintenance/ingesterWarmUp.ts) also runs a synthetic ls-refs answer through the functions a
// clone runs, in its order, with what makes a real answer: HEAD's symref, branches, annotated tags peeled and lightweight ones.

import { refNameProblem } from '../../model/refName.ts';
import { serializePackedRefs } from '../../store/packedRefs.ts';
import { buildFetchRequest } from '../../wire/fetchCommand.ts';
import { concatBytes, encodePktLine, FLUSH_PKT, readPackets } from '../../wire/pktLine.ts';
import { throwIfAborted } from '../common/errors.ts';
import { planRefs } from './clone.ts';
import { readLsRefs } from './lsRefsCall.ts';
import { checkRemoteRefNames } from './remoteRefNames.ts';

/** Rounds over the synthetic answer; each is a few milliseconds once compiled. */
export const REF_ROUNDS = 3;
const BRANCHES = 50;
/** Chunks of the lent reading: smaller than a packet is long at times, so that packets span chunks. */
const LENT_CHUNK_BYTES = 61;
/** Chunks of the ls-refs answer, about what a response body brings at a time. */
const ANSWER_CHUNK_BYTES = 16 * 1024;
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
    // Every tenth tag lightweight (no `peeled`): a ref object of another shape, as real lists have.
    const peeled = t % 10 === 9 ? '' : ` peeled:${oid(t % BRANCHES)}`;
    lines.push(encodePktLine(`${oid(BRANCHES + t)} refs/tags/v${t >>> 7}.${t & 127}.0${peeled}\n`));
  }
  lines.push(FLUSH_PKT);
  return concatBytes(lines);
}

/** What the warm-up's last round made of its answer: how a test sees that each step ran on all of it. */
export interface RefsWarmUpReport {
  rounds: number;
  /** Refs ls-refs' reading gave; packets the lent reading gave, flush included. */
  listed: number;
  lentPackets: number;
  headTarget: string | undefined;
  kept: number;
  branch: string | null;
  wants: number;
  /** The fetch request, the packed-refs text and the `.promisor` text, as a clone makes them. */
  request: Uint8Array;
  packedRefs: string;
  promisor: string;
  /** Packed names refNameProblem refused: none, for an answer a clone would take. */
  refused: number;
}

/**
 * Runs the synthetic answer `rounds` times through ls-refs' reading and parsing, the name checks, the
 * clone's plan, the fetch request, and the packed-refs and `.promisor` text the write makes; yields to
 * the event loop between rounds and stops (ABORTED) when `signal` says an operation began.
 */
export async function warmUpRefs(signal: AbortSignal, rounds = REF_ROUNDS): Promise<RefsWarmUpReport | null> {
  const answer = warmUpLsRefsAnswer();
  let report: RefsWarmUpReport | null = null;
  for (let round = 0; round < rounds; round++) {
    throwIfAborted(signal);
    // Read as a clone reads its ls-refs answer, an async generator of chunks (GitHttpClient's stream).
    const listed = await readLsRefs(chunks(answer, ANSWER_CHUNK_BYTES), answer.length);
    // A fetch's answer is read lent (LentChunks) and cut anywhere, with no cap (receivePack's reading):
    // those paths of the reader too, each packet let go before the next, as a lent body requires.
    let lentPackets = 0;
    for await (const _packet of readPackets({ lent: chunks(answer, LENT_CHUNK_BYTES) })) lentPackets++;
    const headTarget = listed.find((r) => r.name === 'HEAD')?.symrefTarget;
    const named = checkRemoteRefNames(listed, headTarget, WARM_UP_URL);
    const plan = planRefs(named.kept, { url: WARM_UP_URL }, true, WARM_UP_URL);
    const request = buildFetchRequest({
      wants: plan.wants,
      done: true,
      ofsDelta: true,
      noProgress: true,
      includeTag: true,
      filter: 'blob:none',
      agent: 'blobless/warm-up',
    });
    // What the write checks and writes of them (store/gitDir.ts checks each name before writing).
    let refused = 0;
    for (const ref of plan.packedRefs) if (refNameProblem(ref.name) !== null) refused++;
    report = {
      rounds: round + 1,
      listed: listed.length,
      lentPackets,
      headTarget,
      kept: named.kept.length,
      branch: plan.branch,
      wants: plan.wants.length,
      request,
      packedRefs: serializePackedRefs(plan.packedRefs),
      promisor: plan.refs.map((r) => `${r.oid} ${r.name}\n`).join(''),
      refused,
    };
    await new Promise((resolve) => setTimeout(resolve, 0));
  }
  throwIfAborted(signal);
  return report;
}

/** `bytes` in chunks of `size`, as a response body arrives. */
async function* chunks(bytes: Uint8Array, size: number): AsyncGenerator<Uint8Array> {
  for (let at = 0; at < bytes.length; at += size) yield bytes.subarray(at, at + size);
}
