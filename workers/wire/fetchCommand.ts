/**
 * The v2 `fetch` request (gitprotocol-v2: fetch): which objects we want, which we have, and how to send them.
 */

import { WireError } from './errors.ts';
import { type CommandCapabilities, checkArgument, checkOid, encodeCommandRequest } from './requestLines.ts';

export type FetchRequestOptions = CommandCapabilities & {
  /** Object ids to fetch (`want <oid>`). At least one. */
  wants: string[];
  /** Object ids we already have (`have <oid>`), for negotiation. */
  haves?: string[];
  /**
   * End negotiation and ask for the pack now. Defaults to true when there are no haves, as git does: with
   * nothing to negotiate (a clone), a request without `done` would only get acknowledgments back.
   */
  done?: boolean;
  /** Allow deltas against objects we have but the pack does not contain. */
  thinPack?: boolean;
  /** We understand OBJ_OFS_DELTA (type 6). */
  ofsDelta?: boolean;
  /** Suppress sideband-2 progress. Sideband 3 errors still arrive. */
  noProgress?: boolean;
  /** Send annotated tags that point into the pack. */
  includeTag?: boolean;
  /** A filter-spec such as `blob:none`. Requires `fetch=filter` in the server's capabilities. */
  filter?: string;
  /** Shallow fetch: history depth in commits. Requires `fetch=shallow`. */
  deepen?: number;
  /**
   * `deepen` counts from our current shallow boundary rather than from the wanted tips (`deepen-relative`,
   * what `git fetch --deepen=N` sends). Requires `deepen`.
   */
  deepenRelative?: boolean;
  /** Commits we hold only shallowly (`shallow <oid>`). Requires `fetch=shallow`. */
  shallow?: string[];
};

/** What git sends for `--unshallow` (fetch-pack.c: INFINITE_DEPTH): deeper than any history. */
export const INFINITE_DEPTH = 0x7fffffff;

/**
 * Builds the POST body for `fetch`, with the arguments in the order git's fetch-pack.c (send_fetch_request)
 * writes them: thin-pack, no-progress, include-tag, ofs-delta, shallow..., deepen, deepen-relative, filter,
 * want..., have..., done.
 */
export function buildFetchRequest(opts: FetchRequestOptions): Uint8Array {
  if (opts.wants.length === 0) {
    throw new WireError('REQUEST_INVALID', 'A fetch request needs at least one object id to want');
  }
  const haves = opts.haves ?? [];
  const args: string[] = [];
  if (opts.thinPack) args.push('thin-pack');
  if (opts.noProgress) args.push('no-progress');
  if (opts.includeTag) args.push('include-tag');
  if (opts.ofsDelta) args.push('ofs-delta');
  for (const oid of opts.shallow ?? []) args.push(`shallow ${checkOid(oid, 'shallow commit')}`);
  if (opts.deepen !== undefined) {
    if (!Number.isSafeInteger(opts.deepen) || opts.deepen < 1) {
      throw new WireError(
        'REQUEST_INVALID',
        `The depth ${opts.deepen} must be a whole number of commits, 1 or more`,
      );
    }
    args.push(`deepen ${opts.deepen}`);
  }
  if (opts.deepenRelative) {
    if (opts.deepen === undefined) {
      throw new WireError('REQUEST_INVALID', 'deepen-relative needs a depth to deepen by');
    }
    args.push('deepen-relative');
  }
  if (opts.filter !== undefined) {
    if (opts.filter.trim() === '') throw new WireError('REQUEST_INVALID', 'The filter-spec is empty');
    args.push(`filter ${checkArgument(opts.filter)}`);
  }
  for (const oid of opts.wants) args.push(`want ${checkOid(oid, 'wanted object')}`);
  for (const oid of haves) args.push(`have ${checkOid(oid, 'object we have')}`);
  if (opts.done ?? haves.length === 0) args.push('done');
  return encodeCommandRequest('fetch', opts, args);
}
