/**
 * The response to a v2 `fetch` (gitprotocol-v2: fetch, output):
 *
 *   output = acknowledgements flush-pkt |
 *            [acknowledgments delim-pkt] [shallow-info delim-pkt]
 *            [wanted-refs delim-pkt] [packfile-uris delim-pkt]
 *            packfile flush-pkt
 *
 * Sections come in that order, each opening with its name as a header line. The packfile section is
 * multiplexed like side-band-64k: every packet's first byte is its band (1 pack data, 2 progress, 3 fatal).
 */

import { isObjectIdHex } from '../model/objectId.ts';
import { RemoteError, WireError } from './errors.ts';
import { describePacket, errPacketMessage, type Packet, packetText } from './pktLine.ts';
import { DEFAULT_WIRE_LIMITS } from './wireLimits.ts';

export type RemoteProgress = {
  /** The phase as the server names it: `Enumerating objects`, `Counting objects`, `Total`. */
  phase: string;
  loaded: number;
  total?: number;
  done: boolean;
};

export type FetchEvent =
  | { type: 'acknowledgments'; acks: string[]; nak: boolean; ready: boolean }
  | { type: 'shallow-info'; shallow: string[]; unshallow: string[] }
  | { type: 'wanted-refs'; refs: { oid: string; name: string }[] }
  | { type: 'packfile-uris'; uris: { hash: string; uri: string }[] }
  | { type: 'pack'; data: Uint8Array }
  | { type: 'progress'; text: string; progress: RemoteProgress | null };

export type ProgressLine = { text: string; progress: RemoteProgress | null };

const SECTIONS = ['acknowledgments', 'shallow-info', 'wanted-refs', 'packfile-uris', 'packfile'] as const;
type SectionName = (typeof SECTIONS)[number];

const BAND_PACK = 1;
const BAND_PROGRESS = 2;
const BAND_ERROR = 3;

/**
 * Turns the packets of a fetch response into events as they arrive. Pack bytes are yielded as subarray views
 * of the packets (no copy) in arrival order; each section other than the packfile is yielded once complete.
 * Stops at the flush that ends the response without reading further.
 *
 * Throws `RemoteError` for an `ERR` packet or a band-3 message, `WireError` `PROTOCOL_UNEXPECTED` for
 * sections out of order or unknown, and `RESPONSE_TRUNCATED` if the packets end before that flush.
 */
export async function* parseFetchResponse(
  packets: AsyncIterable<Packet>,
  options: { maxProgressLineBytes?: number } = {},
): AsyncGenerator<FetchEvent> {
  let section: SectionName | null = null;
  let lastSectionIndex = -1;
  let lines: string[] = [];
  const progress = new ProgressParser(options.maxProgressLineBytes);
  // One streaming decoder, so a UTF-8 character split across two progress packets survives.
  const progressText = new TextDecoder('utf-8');

  for await (const packet of packets) {
    if (section === 'packfile') {
      // The hot path: one branch on the band byte, a view for pack data, no per-byte work.
      if (packet.type === 'data') {
        const { data } = packet;
        const band = data[0];
        if (band === BAND_PACK) {
          // "0005\x01" carries nothing; upload-pack sends it as a keepalive while it prepares the pack.
          if (data.length > 1) yield { type: 'pack', data: data.subarray(1) };
        } else if (band === BAND_PROGRESS) {
          for (const line of progress.push(progressText.decode(data.subarray(1), { stream: true }))) {
            yield { type: 'progress', ...line };
          }
        } else if (band === BAND_ERROR) {
          throw new RemoteError(new TextDecoder().decode(data.subarray(1)), 'sideband-3');
        } else {
          const message = errPacketMessage(packet);
          if (message !== null) throw new RemoteError(message, 'err-packet');
          throw new WireError(
            'PROTOCOL_UNEXPECTED',
            `The server sent a packfile packet on sideband channel ${band}; only 1, 2 and 3 exist`,
          );
        }
        continue;
      }
      if (packet.type === 'flush') {
        // What the decoder still holds is the start of a character (U+FFFD now), never a line end: it joins
        // the last line, which end() gives.
        progress.push(progressText.decode());
        for (const line of progress.end()) yield { type: 'progress', ...line };
        return;
      }
      throw new WireError(
        'PROTOCOL_UNEXPECTED',
        `The server sent ${describePacket(packet)} inside the packfile section, which only a flush ends`,
      );
    }

    const message = errPacketMessage(packet);
    if (message !== null) throw new RemoteError(message, 'err-packet');

    if (section === null) {
      if (packet.type !== 'data') {
        throw new WireError(
          'PROTOCOL_UNEXPECTED',
          `The server sent ${describePacket(packet)} where a fetch response section header was expected`,
        );
      }
      const header = packetText(packet);
      const index = SECTIONS.indexOf(header as SectionName);
      if (index < 0) {
        throw new WireError(
          'PROTOCOL_UNEXPECTED',
          `The server sent an unknown fetch response section ${JSON.stringify(header)}`,
        );
      }
      if (index <= lastSectionIndex) {
        throw new WireError(
          'PROTOCOL_UNEXPECTED',
          `The server sent the "${header}" section after "${SECTIONS[lastSectionIndex]}"; the protocol orders ` +
            `sections as ${SECTIONS.join(', ')}`,
        );
      }
      section = SECTIONS[index];
      lastSectionIndex = index;
      lines = [];
      continue;
    }

    if (packet.type === 'data') {
      lines.push(packetText(packet));
      continue;
    }
    if (packet.type === 'response-end') {
      throw new WireError(
        'PROTOCOL_UNEXPECTED',
        `The server ended its response inside the "${section}" section, before the packfile`,
      );
    }

    const event = sectionEvent(section, lines);
    yield event;
    const ready = event.type === 'acknowledgments' && event.ready;
    if (packet.type === 'flush') {
      // gitprotocol-v2: fetch: without "ready" the response is only acknowledgments, ended by a flush;
      // every other section is followed by more, and finally the packfile.
      if (section === 'acknowledgments' && !ready) return;
      throw new WireError(
        'PROTOCOL_UNEXPECTED',
        ready
          ? 'The server said it was ready to send a pack, then ended the response without one'
          : `The server ended its response after the "${section}" section without sending a packfile`,
      );
    }
    if (section === 'acknowledgments' && !ready) {
      throw new WireError(
        'PROTOCOL_UNEXPECTED',
        'The server continued past its acknowledgments without saying "ready": it may not send a pack then',
      );
    }
    section = null;
  }

  throw new WireError(
    'RESPONSE_TRUNCATED',
    section === 'packfile'
      ? 'The pack download stopped before the server finished sending it: the connection was probably cut; try again'
      : 'The fetch response ended before the server finished it: the connection was probably cut; try again',
  );
}

function sectionEvent(section: Exclude<SectionName, 'packfile'>, lines: string[]): FetchEvent {
  switch (section) {
    case 'acknowledgments': {
      // acknowledgments = PKT-LINE("acknowledgments" LF) (nak | *ack) (ready)
      const event = { type: 'acknowledgments' as const, acks: [] as string[], nak: false, ready: false };
      for (const line of lines) {
        if (line === 'NAK') event.nak = true;
        else if (line === 'ready') event.ready = true;
        else if (line.startsWith('ACK ')) event.acks.push(oidIn(line, 'ACK '.length, section));
        else throw badLine(line, section);
      }
      return event;
    }
    case 'shallow-info': {
      const event = { type: 'shallow-info' as const, shallow: [] as string[], unshallow: [] as string[] };
      for (const line of lines) {
        if (line.startsWith('shallow ')) event.shallow.push(oidIn(line, 'shallow '.length, section));
        else if (line.startsWith('unshallow '))
          event.unshallow.push(oidIn(line, 'unshallow '.length, section));
        else throw badLine(line, section);
      }
      return event;
    }
    case 'wanted-refs': {
      // wanted-ref = obj-id SP refname
      const refs = lines.map((line) => {
        const space = line.indexOf(' ');
        if (space < 0) throw badLine(line, section);
        return { oid: oidIn(line.slice(0, space), 0, section), name: line.slice(space + 1) };
      });
      return { type: 'wanted-refs', refs };
    }
    case 'packfile-uris': {
      // packfile-uri = PKT-LINE(40*(HEXDIGIT) SP *%x20-ff LF): the pack's hash as index-pack prints it, then a URI.
      const uris = lines.map((line) => {
        const space = line.indexOf(' ');
        if (space < 0) throw badLine(line, section);
        return { hash: oidIn(line.slice(0, space), 0, section), uri: line.slice(space + 1) };
      });
      return { type: 'packfile-uris', uris };
    }
  }
}

function oidIn(line: string, start: number, section: string): string {
  const oid = line.slice(start);
  if (!isObjectIdHex(oid)) throw badLine(line, section);
  return oid;
}

function badLine(line: string, section: string): WireError {
  return new WireError(
    'PROTOCOL_UNEXPECTED',
    `The server sent ${JSON.stringify(line)} in the "${section}" section of its fetch response, which does not fit there`,
  );
}

// git's progress.c writes "<title>: <n>" or "<title>: <pct>% (<n>/<total>)", optionally followed by
// ", <throughput>" and ", done."; an update in progress ends in CR, the final one in LF. Titles may be
// translated on the server, so the terminator, not the word "done", says whether a phase finished.
const PERCENT_LINE = /^(.+?): +(\d+)% \((\d+)\/(\d+)\)(, .*)?$/;
const COUNT_LINE = /^(.+?): +(\d+)(, .*)?$/;
// pack-objects' summary: "Total 12 (delta 2), reused 0 (delta 0), pack-reused 0".
const TOTAL_LINE = /^Total (\d+) \(delta \d+\)/;

/**
 * Splits sideband-2 text into lines and reads git's progress meters out of them. Text may be split
 * anywhere across packets, and one packet may hold several CR-separated updates.
 *
 * Each piece is scanned once: the start of an unfinished line is kept as pieces and joined when its end
 * comes, so a line sent a byte at a time costs O(n), not O(n²). A line longer than `maxLineLength`
 * characters fails with WireError `LIMIT_EXCEEDED` (`maxProgressLineBytes`).
 */
export class ProgressParser {
  #pieces: string[] = [];
  #pending = 0;
  readonly #maxLineLength: number;
  /** Global, so exec walks a piece from lastIndex: the parser's own, not a module's. */
  readonly #lineEnd = /[\r\n]/g;

  constructor(maxLineLength: number = DEFAULT_WIRE_LIMITS.maxProgressLineBytes) {
    this.#maxLineLength = maxLineLength;
  }

  push(text: string): ProgressLine[] {
    const out: ProgressLine[] = [];
    let start = 0;
    const lineEnd = this.#lineEnd;
    lineEnd.lastIndex = 0;
    for (let match = lineEnd.exec(text); match !== null; match = lineEnd.exec(text)) {
      const line = this.#finish(text.slice(start, match.index));
      start = match.index + 1;
      if (line.trim() !== '') out.push(progressLine(line, match[0] === '\n'));
    }
    if (start < text.length) {
      this.#pieces.push(text.slice(start));
      this.#pending += text.length - start;
      this.#check(this.#pending);
    }
    return out;
  }

  /** The text left after the last line end, if any: call once the band-2 stream is over. */
  end(): ProgressLine[] {
    const rest = this.#finish('');
    return rest.trim() === '' ? [] : [progressLine(rest, false)];
  }

  #finish(tail: string): string {
    this.#check(this.#pending + tail.length);
    if (this.#pieces.length === 0) return tail;
    this.#pieces.push(tail);
    const line = this.#pieces.join('');
    this.#pieces = [];
    this.#pending = 0;
    return line;
  }

  #check(length: number): void {
    if (length > this.#maxLineLength) {
      throw new WireError(
        'LIMIT_EXCEEDED',
        `The server sent more than ${this.#maxLineLength} characters of progress text without a line end ` +
          '(maxProgressLineBytes): no git server does that; the server may be hostile',
        { limit: 'maxProgressLineBytes' },
      );
    }
  }
}

function progressLine(raw: string, endsWithLineFeed: boolean): ProgressLine {
  // progress.c pads a shorter update with spaces to overwrite the previous one on a terminal.
  const text = raw.trimEnd();
  return { text, progress: parseProgress(text, endsWithLineFeed) };
}

function parseProgress(text: string, endsWithLineFeed: boolean): RemoteProgress | null {
  const finished = (tail: string | undefined) => endsWithLineFeed || (tail?.endsWith(', done.') ?? false);
  const percent = PERCENT_LINE.exec(text);
  if (percent) {
    return {
      phase: percent[1],
      loaded: Number(percent[3]),
      total: Number(percent[4]),
      done: finished(percent[5]),
    };
  }
  const count = COUNT_LINE.exec(text);
  if (count) return { phase: count[1], loaded: Number(count[2]), done: finished(count[3]) };
  const total = TOTAL_LINE.exec(text);
  if (total) {
    const objects = Number(total[1]);
    return { phase: 'Total', loaded: objects, total: objects, done: true };
  }
  return null;
}
