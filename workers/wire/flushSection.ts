import { RemoteError, WireError } from './errors.ts';
import { type DataPacket, describePacket, errPacketMessage, type Packet } from './pktLine.ts';

/**
 * The data lines of a response that is a list of lines closed by a flush (a capability advertisement, a
 * ref advertisement, an ls-refs answer), from `start`. An ERR line raises the server's message; nothing but
 * a response-end may follow the flush (gitprotocol-v2: Packet-Line Framing).
 * `what` names the response in messages ("ls-refs response"); `expected` says what its lines are.
 */
export function flushSectionLines(
  packets: Packet[],
  start: number,
  what: string,
  expected: string,
): DataPacket[] {
  const lines: DataPacket[] = [];
  let index = start;
  for (;;) {
    const packet = packets[index++];
    if (packet === undefined) {
      throw new WireError(
        'RESPONSE_TRUNCATED',
        `The ${what} ended before its final flush packet: the response was cut short; try again`,
      );
    }
    if (packet.type === 'flush') break;
    const message = errPacketMessage(packet);
    if (message !== null) throw new RemoteError(message, 'err-packet');
    if (packet.type !== 'data') {
      throw new WireError(
        'PROTOCOL_UNEXPECTED',
        `The server sent ${describePacket(packet)} in the ${what}, where only ${expected} and a flush belong`,
      );
    }
    lines.push(packet);
  }
  for (const packet of packets.slice(index)) {
    if (packet.type !== 'response-end') {
      throw new WireError(
        'PROTOCOL_UNEXPECTED',
        `The server sent ${describePacket(packet)} after the end of its ${what}`,
      );
    }
  }
  return lines;
}
