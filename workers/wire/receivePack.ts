/**
 * git-receive-pack's request and its report (gitprotocol-pack: Pushing Data To a Server). There is no v2
 * push: the advertisement is v0 (parsed by capabilities.ts), the request is a list of ref updates with the
 * capabilities behind a NUL on the first, a flush, then the pack; the answer is `report-status`, inside
 * sideband 1 when `side-band-64k` was asked for.
 */

import { isSha1Hex, ZERO_OID } from '../model/objectId.ts';
import { RemoteError, WireError } from './errors.ts';
import { concatBytes, encodePktLine, FLUSH_PKT, type Packet, PktLineDecoder, packetText } from './pktLine.ts';

export interface RefUpdate {
  /** What the client believes the ref is now on the server; ZERO_OID to create it. */
  oldOid: string;
  /** ZERO_OID to delete the ref. */
  newOid: string;
  name: string;
}

export interface ReportStatus {
  /** `unpack ok`, or the server's reason why it could not unpack the pack. */
  unpack: { ok: true } | { ok: false; reason: string };
  /** One per ref update: `ok` or `ng` with the server's reason (`non-fast-forward`, `fetch first`, a hook's message). */
  refs: { name: string; ok: boolean; reason?: string }[];
  /** Sideband 2 text (hooks' output, the server's progress), for showing to the person. */
  messages: string;
}

const BAND_DATA = 1;
const BAND_PROGRESS = 2;
const BAND_ERROR = 3;

/**
 * The request body: update commands, flush, then the pack (omitted when every update is a delete, as
 * gitprotocol-pack says a pack "MUST NOT be sent" then). `capabilities` are the ones the server offered
 * that we use.
 */
export function buildReceivePackRequest(
  updates: RefUpdate[],
  capabilities: string[],
  pack: Uint8Array | null,
): Uint8Array {
  if (updates.length === 0) throw new WireError('REQUEST_INVALID', 'A push needs at least one ref update');
  const parts: Uint8Array[] = [];
  for (const [i, u] of updates.entries()) {
    for (const oid of [u.oldOid, u.newOid]) {
      if (!isSha1Hex(oid)) throw new WireError('REQUEST_INVALID', `"${oid}" is not an object id`);
    }
    if (!u.name.startsWith('refs/') || /[\s\0]/.test(u.name)) {
      throw new WireError('REQUEST_INVALID', `"${u.name}" is not a ref name a push can update`);
    }
    const line = `${u.oldOid} ${u.newOid} ${u.name}`;
    parts.push(
      encodePktLine(i === 0 && capabilities.length > 0 ? `${line}\0${capabilities.join(' ')}` : line),
    );
  }
  parts.push(FLUSH_PKT);
  const onlyDeletes = updates.every((u) => u.newOid === ZERO_OID);
  if (!onlyDeletes) {
    if (!pack) throw new WireError('REQUEST_INVALID', 'A push that creates or moves a ref needs a pack');
    parts.push(pack);
  }
  return concatBytes(parts);
}

/**
 * Reads receive-pack's answer. With `sideband`, band 1 carries the report's own pkt-lines, band 2 the
 * server's messages, band 3 a fatal error (thrown as RemoteError). Throws WireError RESPONSE_TRUNCATED when
 * the answer stops before the report's flush.
 */
export async function parseReportStatus(
  packets: AsyncIterable<Packet>,
  sideband: boolean,
): Promise<ReportStatus> {
  const report: Packet[] = [];
  let messages = '';
  let ended = false;
  if (sideband) {
    const inner = new PktLineDecoder();
    for await (const packet of packets) {
      if (packet.type === 'flush') {
        ended = true;
        break;
      }
      if (packet.type !== 'data' || packet.data.length === 0) continue;
      const band = packet.data[0];
      const payload = packet.data.subarray(1);
      if (band === BAND_DATA) report.push(...inner.push(payload));
      else if (band === BAND_PROGRESS) messages += new TextDecoder().decode(payload);
      else if (band === BAND_ERROR) throw new RemoteError(new TextDecoder().decode(payload), 'sideband-3');
      else throw new WireError('PROTOCOL_UNEXPECTED', `The server sent a packet on sideband channel ${band}`);
    }
  } else {
    for await (const packet of packets) report.push(packet);
    ended = true;
  }
  return readReport(report, ended, messages);
}

function readReport(packets: Packet[], ended: boolean, messages: string): ReportStatus {
  const lines: string[] = [];
  let flushed = false;
  for (const packet of packets) {
    if (packet.type === 'flush') {
      flushed = true;
      break;
    }
    if (packet.type !== 'data') continue;
    const text = packetText(packet);
    if (text.startsWith('ERR ')) throw new RemoteError(text.slice(4), 'err-packet');
    lines.push(text);
  }
  if (!flushed || !ended) {
    throw new WireError(
      'RESPONSE_TRUNCATED',
      'The server stopped before reporting the push result; the push may or may not have landed. Reload the remote branch to see.',
    );
  }
  const [first, ...rest] = lines;
  if (!first?.startsWith('unpack ')) {
    throw new WireError(
      'PROTOCOL_UNEXPECTED',
      `The server's push report starts with ${JSON.stringify(first ?? '')}, not "unpack"`,
    );
  }
  const status = first.slice('unpack '.length);
  const refs: ReportStatus['refs'] = [];
  for (const line of rest) {
    const ok = line.startsWith('ok ');
    if (!ok && !line.startsWith('ng ')) {
      throw new WireError(
        'PROTOCOL_UNEXPECTED',
        `Unexpected line in the server's push report: ${JSON.stringify(line)}`,
      );
    }
    const body = line.slice(3);
    if (ok) refs.push({ name: body, ok: true });
    else {
      const space = body.indexOf(' ');
      refs.push({
        name: space < 0 ? body : body.slice(0, space),
        ok: false,
        reason: space < 0 ? 'rejected' : body.slice(space + 1),
      });
    }
  }
  return { unpack: status === 'ok' ? { ok: true } : { ok: false, reason: status }, refs, messages };
}
