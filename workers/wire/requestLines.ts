/**
 * Shared pieces of v2 command requests (gitprotocol-v2: Command Request):
 *
 *   command-request = command capability-list delim-pkt command-args flush-pkt
 */

import { isObjectIdHex } from '../model/objectId.ts';
import { WireError } from './errors.ts';
import { concatBytes, DELIM_PKT, encodePktLine, FLUSH_PKT } from './pktLine.ts';

export type CommandCapabilities = {
  /** Our `agent=` value. gitprotocol-v2: agent: send it only if the server advertised `agent`. */
  agent?: string;
  /** `object-format=`; git sends it whenever the server advertised object-format. */
  objectFormat?: string;
};

/** Frames a v2 command request from its command name, capabilities and argument lines. */
export function encodeCommandRequest(command: string, caps: CommandCapabilities, args: string[]): Uint8Array {
  const parts: Uint8Array[] = [textLine(`command=${command}`)];
  if (caps.agent !== undefined) {
    // gitprotocol-v2: agent: "printable ASCII characters except space (i.e., the byte range 32 < x < 127)".
    if (!/^[\x21-\x7e]+$/.test(caps.agent)) {
      throw new WireError(
        'REQUEST_INVALID',
        `The agent string ${JSON.stringify(caps.agent)} must be printable ASCII without spaces`,
      );
    }
    parts.push(textLine(`agent=${caps.agent}`));
  }
  if (caps.objectFormat !== undefined)
    parts.push(textLine(`object-format=${checkArgument(caps.objectFormat)}`));
  parts.push(DELIM_PKT);
  for (const arg of args) parts.push(textLine(arg));
  parts.push(FLUSH_PKT);
  return concatBytes(parts);
}

/** A text pkt-line with its LF; gitprotocol-common: a non-binary line "SHOULD BE terminated by an LF". */
function textLine(text: string): Uint8Array {
  return encodePktLine(`${checkArgument(text)}\n`);
}

/** Rejects what would break the line framing: an argument may not contain a line feed or NUL. */
export function checkArgument(text: string): string {
  if (/[\n\0]/.test(text)) {
    throw new WireError(
      'REQUEST_INVALID',
      `The request argument ${JSON.stringify(text)} contains a line feed or NUL, which the protocol cannot carry`,
    );
  }
  return text;
}

export function checkOid(oid: string, role: string): string {
  if (!isObjectIdHex(oid)) {
    throw new WireError(
      'REQUEST_INVALID',
      `The ${role} ${JSON.stringify(oid)} is not a full lowercase hexadecimal object id`,
    );
  }
  return oid;
}
