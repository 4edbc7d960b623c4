// The one way a pack comes in: POST a v2 `fetch` command, read its pkt-lines, parse the response's sections
// and feed the packfile's band 1 to a PackIngester, under the engine's limits (the wire's on progress text,
// the pack's on objects and inflation). Clone, fetch, lazy blobs and the minimal read all receive through
// it, so a limit set on the engine holds for each of them; what each stores afterwards is its own.

import {
  PackIngester as Ingester,
  type PackIngester,
  type PackIngesterOptions,
} from '../../pack/packIngester.ts';
import type { GitHttpClient } from '../../transport/gitHttp.ts';
import { parseFetchResponse } from '../../wire/fetchResponse.ts';
import { readPackets } from '../../wire/pktLine.ts';
import type { EngineLimits } from '../common/engineContext.ts';
import type { Timeline } from '../common/timeline.ts';

/** A line of the server's progress text (band 2), its meter read when it has one. */
export type RemoteProgressLine = { phase: 'remote'; text: string; loaded?: number; total?: number };

export interface ReceiveOptions {
  limits: EngineLimits;
  signal?: AbortSignal;
  /** The ingester's progress as the pack arrives and is resolved. */
  onPackProgress?: PackIngesterOptions['onProgress'];
  /** Each object the ingester holds whole, once hashed (ObjectHook): valid only during the call. */
  onObject?: PackIngesterOptions['onObject'];
  /** The server's progress text; absent, it is still parsed (and capped), not told. */
  onRemoteProgress?: (line: RemoteProgressLine) => void;
  /** For a thin pack: the repo's own objects, where a delta's base is looked for (PackIngester). */
  externalBase?: PackIngesterOptions['externalBase'];
  /** Records `fetch-response`, `ingester-create` and `receive` as steps of the operation's timeline. */
  steps?: Timeline;
}

/** What one fetch response held. */
export interface ReceivedResponse {
  /** gitprotocol-v2: fetch, acknowledgments: the haves the server has in common, and whether it is ready. */
  acknowledgments: { acks: string[]; nak: boolean; ready: boolean } | null;
  /** gitprotocol-v2: fetch, shallow-info: the commits the server made shallow, or unshallowed. */
  shallowInfo: { shallow: string[]; unshallow: string[] } | null;
  /**
   * The pack's ingester, every byte of the packfile section pushed, neither `received()` nor `finish()`
   * called yet (the caller decides how to store it); null when the response held no packfile section.
   */
  ingester: PackIngester | null;
}

/**
 * Sends `request` (a v2 fetch command) to `client`'s upload-pack and receives its answer. The ingester is
 * made while the request waits for the server (its hashers' WebAssembly compiles meanwhile). Throws what
 * the wire and the pack throw: RemoteError, WireError (LIMIT_EXCEEDED, truncation), PackError.
 */
export async function receivePack(
  client: GitHttpClient,
  request: Uint8Array,
  options: ReceiveOptions,
): Promise<ReceivedResponse> {
  const { limits, signal, onRemoteProgress, steps } = options;
  const step = <T>(name: string, work: () => Promise<T>) => (steps ? steps.step(name, work) : work());
  const [body, ingester] = await Promise.all([
    // Lent: every packet is consumed before the next is read (lines parsed, pack bytes copied by push).
    step('fetch-response', () => client.postLent('git-upload-pack', request)),
    step('ingester-create', () =>
      Ingester.create({
        signal,
        onProgress: options.onPackProgress,
        onObject: options.onObject,
        limits,
        externalBase: options.externalBase,
      }),
    ),
  ]);
  const start = performance.now();
  const received: ReceivedResponse = { acknowledgments: null, shallowInfo: null, ingester: null };
  const caps = { maxProgressLineBytes: limits.maxProgressLineBytes };
  for await (const event of parseFetchResponse(readPackets(body), caps)) {
    if (event.type === 'pack') {
      received.ingester = ingester;
      ingester.push(event.data);
    } else if (event.type === 'acknowledgments') {
      received.acknowledgments = event;
    } else if (event.type === 'shallow-info') {
      received.shallowInfo = event;
    } else if (event.type === 'progress' && onRemoteProgress) {
      const p = event.progress;
      onRemoteProgress({ phase: 'remote', text: event.text, loaded: p?.loaded, total: p?.total });
    }
  }
  steps?.measure('receive', start);
  return received;
}
