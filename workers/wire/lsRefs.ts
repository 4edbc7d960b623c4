/**
 * The v2 `ls-refs` command (gitprotocol-v2: ls-refs): asks which refs the server has.
 */

import { isObjectIdHex } from '../model/objectId.ts';
import { WireError } from './errors.ts';
import { flushSectionLines } from './flushSection.ts';
import { type Packet, packetText } from './pktLine.ts';
import { type CommandCapabilities, checkArgument, encodeCommandRequest } from './requestLines.ts';

export type LsRefsOptions = CommandCapabilities & {
  /** `ref-prefix` arguments. Only an optimisation: the server MAY send other refs, so filter the result too. */
  refPrefixes: string[];
  /** Show the target of symbolic refs (`symref-target:`). */
  symrefs?: boolean;
  /** Show what annotated tags point to (`peeled:`). */
  peel?: boolean;
  /** Report HEAD even when its branch has no commit yet. Send only if the server advertises `ls-refs=unborn`. */
  unborn?: boolean;
};

export type RemoteRef = {
  name: string;
  /** null for an unborn ref: HEAD pointing at a branch with no commits (an empty repository). */
  oid: string | null;
  symrefTarget?: string;
  /** For an annotated tag, the object it points to. */
  peeled?: string;
  unborn?: boolean;
};

/**
 * Builds the POST body for `ls-refs`. Arguments go in the order git's own client sends them (peel, symrefs,
 * unborn, ref-prefix...), which makes request traces comparable with git's.
 */
export function buildLsRefsRequest(opts: LsRefsOptions): Uint8Array {
  const args: string[] = [];
  if (opts.peel) args.push('peel');
  if (opts.symrefs) args.push('symrefs');
  if (opts.unborn) args.push('unborn');
  for (const prefix of opts.refPrefixes) args.push(`ref-prefix ${checkArgument(prefix)}`);
  return encodeCommandRequest('ls-refs', opts, args);
}

/**
 * Parses an ls-refs response:
 *
 *   output = *ref flush-pkt
 *   ref = PKT-LINE(obj-id-or-unborn SP refname *(SP ref-attribute) LF)
 *   ref-attribute = (symref | peeled)
 *
 * Unknown attributes are ignored so a newer server's additions do not break us.
 */
export function parseLsRefsResponse(packets: Packet[]): RemoteRef[] {
  return flushSectionLines(packets, 0, 'ls-refs response', 'ref lines').map((packet) =>
    parseRefLine(packetText(packet)),
  );
}

function parseRefLine(line: string): RemoteRef {
  const [id, name, ...attributes] = line.split(' ');
  if (name === undefined || name === '' || (id !== 'unborn' && !isObjectIdHex(id))) {
    throw new WireError(
      'PROTOCOL_UNEXPECTED',
      `The server sent the ls-refs line ${JSON.stringify(line)}, which is not "<oid> <refname> [attributes]"`,
    );
  }
  const ref: RemoteRef = { name, oid: id === 'unborn' ? null : id };
  if (id === 'unborn') ref.unborn = true;
  for (const attribute of attributes) {
    if (attribute.startsWith('symref-target:')) {
      ref.symrefTarget = attribute.slice('symref-target:'.length);
    } else if (attribute.startsWith('peeled:')) {
      const peeled = attribute.slice('peeled:'.length);
      if (!isObjectIdHex(peeled)) {
        throw new WireError(
          'PROTOCOL_UNEXPECTED',
          `The server sent the ls-refs line ${JSON.stringify(line)}, whose peeled object id is malformed`,
        );
      }
      ref.peeled = peeled;
    }
  }
  return ref;
}

/**
 * A narrow listing's answer, kept to what was asked: gitprotocol-v2 lets a server send refs outside the
 * `ref-prefix`es ("purely for optimization"), and git's own server never does, so an answer that names
 * others is from a server that does not filter, or one that lies. Where the caller would act on the
 * answer's names alone (tags it never listed in full), it refuses such an answer rather than guess.
 */
export function requireAskedRefs(refs: RemoteRef[], refPrefixes: readonly string[]): RemoteRef[] {
  const outside = refs.filter((ref) => !refPrefixes.some((prefix) => ref.name.startsWith(prefix)));
  if (outside.length > 0) {
    const shown = outside
      .slice(0, 3)
      .map((r) => JSON.stringify(r.name))
      .join(', ');
    throw new WireError(
      'PROTOCOL_UNEXPECTED',
      `The server answered a listing of ${refPrefixes.length} ref prefix${refPrefixes.length === 1 ? '' : 'es'} with ` +
        `${outside.length} ref${outside.length === 1 ? '' : 's'} it was not asked for (${shown}${outside.length > 3 ? ', …' : ''}); nothing was stored.`,
    );
  }
  return refs;
}
