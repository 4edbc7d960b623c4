/**
 * pkt-line framing (gitprotocol-common: pkt-line Format; gitprotocol-v2: Packet-Line Framing).
 *
 * A pkt-line is four hex digits giving the total length (header included) followed by that many bytes less
 * four. Three lengths are special in protocol v2: 0000 flush, 0001 delim, 0002 response-end.
 */

import { WireError } from './errors.ts';

export type DataPacket = { type: 'data'; data: Uint8Array };
export type Packet = DataPacket | { type: 'flush' } | { type: 'delim' } | { type: 'response-end' };

/** LARGE_PACKET_MAX in git: "Implementations MUST NOT send pkt-line whose length exceeds 65520" (gitprotocol-common). */
export const MAX_PKT_LINE_LENGTH = 65520;
/** The most payload one pkt-line can carry: 65520 minus the four length bytes. */
export const MAX_PKT_LINE_DATA = MAX_PKT_LINE_LENGTH - 4;

const HEADER_LENGTH = 4;

// The ASCII bytes of "0000", "0001" and "0002".
export const FLUSH_PKT: Uint8Array = Uint8Array.of(0x30, 0x30, 0x30, 0x30);
export const DELIM_PKT: Uint8Array = Uint8Array.of(0x30, 0x30, 0x30, 0x31);
export const RESPONSE_END_PKT: Uint8Array = Uint8Array.of(0x30, 0x30, 0x30, 0x32);

// Shared packets: their consumers only compare `type`, so one object each avoids an allocation per packet.
const FLUSH: Packet = Object.freeze({ type: 'flush' });
const DELIM: Packet = Object.freeze({ type: 'delim' });
const RESPONSE_END: Packet = Object.freeze({ type: 'response-end' });

const textEncoder = new TextEncoder();
const textDecoder = new TextDecoder('utf-8');

/**
 * Streaming pkt-line decoder. Feed it the response body as it arrives, split anywhere (inside the length
 * header too); it returns every packet completed so far and keeps the rest.
 *
 * Incoming chunks are queued, not appended to a growing buffer, so each byte is copied at most once: a
 * packet that lies inside one chunk comes back as a subarray view of that chunk (no copy), one that spans
 * chunks is assembled once. Callers must therefore not reuse a chunk's memory after pushing it, unless they
 * call `keepUnread` first (and are done with the packets already returned).
 *
 * Any malformed length is fatal (`WireError` `PKT_LINE_INVALID`, with the stream offset); the decoder stays
 * failed afterwards, since a pkt-line stream cannot be resynchronised. A push that completed packets before
 * the bad bytes returns them and the next call throws.
 */
export class PktLineDecoder {
  #chunks: Uint8Array[] = [];
  /** Index into #chunks of the first chunk with unread bytes; chunks before it are spent. */
  #first = 0;
  /** Read offset inside #chunks[#first]. */
  #offset = 0;
  /** Unread bytes across all queued chunks. */
  #buffered = 0;
  /** Stream offset of the next unread byte, for error messages. */
  #position = 0;
  #failure: WireError | null = null;
  /** Lent-mode (keepUnread): where the unread start of a packet waits for the next chunk. */
  #carry: Uint8Array | null = null;
  /** Lent-mode: where the packet that spans chunks is assembled, valid until the next push. */
  #assembly: Uint8Array | null = null;

  push(chunk: Uint8Array): Packet[] {
    if (this.#failure) throw this.#failure;
    if (chunk.length > 0) {
      this.#chunks.push(chunk);
      this.#buffered += chunk.length;
    }
    const packets: Packet[] = [];
    try {
      for (;;) {
        const packet = this.#next();
        if (packet === null) break;
        packets.push(packet);
      }
    } catch (error) {
      if (!(error instanceof WireError)) throw error;
      this.#failure = error;
      // The packets before the bad bytes are delivered first (an ERR packet among them explains the
      // failure better than the garbage after it); the failure comes with the next push or end. So the
      // outcome does not depend on where the input was split.
      if (packets.length === 0) throw error;
    }
    return packets;
  }

  /**
   * The chunks pushed so far are about to be overwritten by their source (`LentChunks`): copies the bytes
   * not yet read (the start of one packet, under 64 KiB) into memory of the decoder's own, so that the
   * packet they begin is whole when the rest arrives. From the first call on, the decoder is lent-mode:
   * the one packet per push that spans chunks is assembled in a reused buffer too, so receiving allocates
   * nothing per chunk, and every packet is valid only until the next push.
   */
  keepUnread(): void {
    const unread = this.#buffered;
    // Reused: one 64 KiB buffer each, where a copy per read held 2.6 MB of garbage at the end of large.git's
    // receive (58 reads).
    this.#carry ??= new Uint8Array(MAX_PKT_LINE_LENGTH);
    this.#assembly ??= new Uint8Array(MAX_PKT_LINE_LENGTH);
    let filled = 0;
    for (let i = this.#first; i < this.#chunks.length; i++) {
      const from = i === this.#first ? this.#chunks[i].subarray(this.#offset) : this.#chunks[i];
      // The unread bytes may already start in the carry: set copies overlapping bytes correctly.
      this.#carry.set(from, filled);
      filled += from.length;
    }
    this.#chunks = unread > 0 ? [this.#carry.subarray(0, unread)] : [];
    this.#first = 0;
    this.#offset = 0;
  }

  /**
   * Declares the end of the input; throws `PKT_LINE_TRUNCATED` if it stopped inside a packet, or the
   * failure found after the packets the last push returned.
   */
  end(): void {
    if (this.#failure) throw this.#failure;
    if (this.#buffered === 0) return;
    const at = this.#position;
    if (this.#buffered < HEADER_LENGTH) {
      throw new WireError(
        'PKT_LINE_TRUNCATED',
        `The response ended inside a pkt-line length at byte ${at} (${this.#buffered} of 4 length bytes ` +
          'received): the connection was probably cut short; try again',
        { byteOffset: at },
      );
    }
    const length = this.#peekLength();
    throw new WireError(
      'PKT_LINE_TRUNCATED',
      `The response ended inside a pkt-line at byte ${at}: ${this.#buffered} of its ${length} bytes ` +
        'arrived. The connection was probably cut short; try again',
      { byteOffset: at },
    );
  }

  /** The next complete packet, or null when more input is needed. */
  #next(): Packet | null {
    if (this.#buffered < HEADER_LENGTH) return null;
    const length = this.#peekLength();
    if (length < HEADER_LENGTH) {
      this.#skip(HEADER_LENGTH);
      if (length === 0) return FLUSH;
      if (length === 1) return DELIM;
      if (length === 2) return RESPONSE_END;
    }
    if (this.#buffered < length) return null;
    this.#skip(HEADER_LENGTH);
    return { type: 'data', data: this.#take(length - HEADER_LENGTH) };
  }

  /** Reads and validates the four-byte length at the read position without consuming it. */
  #peekLength(): number {
    let chunkIndex = this.#first;
    let offset = this.#offset;
    let length = 0;
    for (let i = 0; i < HEADER_LENGTH; i++) {
      while (offset >= this.#chunks[chunkIndex].length) {
        chunkIndex++;
        offset = 0;
      }
      const digit = hexDigitValue(this.#chunks[chunkIndex][offset++]);
      if (digit < 0) throw this.#invalidLength('is not a hexadecimal number');
      length = (length << 4) | digit;
    }
    if (length === 3) throw this.#invalidLength('is shorter than the length field itself');
    if (length === HEADER_LENGTH) {
      // gitprotocol-common: "Implementations SHOULD NOT send an empty pkt-line ("0004")". git's own reader
      // tolerates it, but nothing in upload-pack's output produces one, so we treat it as a broken peer.
      throw this.#invalidLength('is an empty pkt-line, which git servers never send');
    }
    if (length > MAX_PKT_LINE_LENGTH) {
      throw this.#invalidLength(`exceeds the pkt-line maximum of ${MAX_PKT_LINE_LENGTH} (fff0)`);
    }
    return length;
  }

  #invalidLength(problem: string): WireError {
    // Quote up to four bytes from the read position, so an HTML page shows up as "<!DO".
    const shown: number[] = [];
    let chunkIndex = this.#first;
    let offset = this.#offset;
    while (shown.length < HEADER_LENGTH && chunkIndex < this.#chunks.length) {
      if (offset < this.#chunks[chunkIndex].length) {
        shown.push(this.#chunks[chunkIndex][offset++]);
      } else {
        chunkIndex++;
        offset = 0;
      }
    }
    return new WireError(
      'PKT_LINE_INVALID',
      `The server sent an invalid pkt-line length ${printableBytes(shown)} at byte ${this.#position}: it ` +
        `${problem}, so the response is not git protocol data. Try again; if it happens again, something ` +
        'between here and the server (a proxy, a captive portal) rewrites the answer',
      { byteOffset: this.#position },
    );
  }

  #skip(count: number): void {
    this.#position += count;
    this.#buffered -= count;
    while (count > 0) {
      const available = this.#chunks[this.#first].length - this.#offset;
      if (count < available) {
        this.#offset += count;
        return;
      }
      count -= available;
      this.#advanceChunk();
    }
  }

  #take(count: number): Uint8Array {
    const head = this.#chunks[this.#first];
    // Never a view of the carry, which the next keepUnread writes over: it holds less than a packet.
    if (head.length - this.#offset >= count) {
      const view = head.subarray(this.#offset, this.#offset + count);
      this.#skip(count);
      return view;
    }
    // Only the first packet of a push can span chunks (what was unread before it is less than a packet), so
    // one assembly buffer serves. Moved before each use: a packet kept from before is detached (reads as
    // empty), never overwritten with this one's bytes.
    if (this.#assembly) this.#assembly = moved(this.#assembly);
    const out = this.#assembly ? this.#assembly.subarray(0, count) : new Uint8Array(count);
    let filled = 0;
    while (filled < count) {
      const chunk = this.#chunks[this.#first];
      const piece = Math.min(count - filled, chunk.length - this.#offset);
      out.set(chunk.subarray(this.#offset, this.#offset + piece), filled);
      filled += piece;
      this.#skip(piece);
    }
    return out;
  }

  #advanceChunk(): void {
    this.#first++;
    this.#offset = 0;
    // Drop spent chunks in batches so a long run of tiny chunks does not cost a shift per chunk.
    if (this.#first === this.#chunks.length) {
      this.#chunks = [];
      this.#first = 0;
    } else if (this.#first >= 64 && this.#first * 2 >= this.#chunks.length) {
      this.#chunks = this.#chunks.slice(this.#first);
      this.#first = 0;
    }
  }
}

/** The same memory under a new ArrayBuffer, every view of the old one detached; no bytes are copied. */
function moved(bytes: Uint8Array): Uint8Array {
  const buffer = bytes.buffer as ArrayBuffer;
  return new Uint8Array(structuredClone(buffer, { transfer: [buffer] }));
}

/** Frames one pkt-line. Strings are UTF-8 encoded; add the trailing LF yourself for text lines. */
export function encodePktLine(data: string | Uint8Array): Uint8Array {
  const payload = typeof data === 'string' ? textEncoder.encode(data) : data;
  if (payload.length === 0) {
    throw new WireError('PKT_LINE_INVALID', 'Cannot encode an empty pkt-line: 0004 is not valid on the wire');
  }
  if (payload.length > MAX_PKT_LINE_DATA) {
    throw new WireError(
      'PKT_LINE_TOO_LONG',
      `Cannot encode a pkt-line of ${payload.length} bytes: one line carries at most ${MAX_PKT_LINE_DATA}`,
    );
  }
  const out = new Uint8Array(payload.length + HEADER_LENGTH);
  const length = payload.length + HEADER_LENGTH;
  // The payload first: a header loop that ran one digit too far would show, overwriting its first byte.
  out.set(payload, HEADER_LENGTH);
  for (let i = 0; i < HEADER_LENGTH; i++) {
    out[i] = HEX_DIGITS.charCodeAt((length >> (4 * (HEADER_LENGTH - 1 - i))) & 0xf);
  }
  return out;
}

export function concatBytes(parts: Uint8Array[]): Uint8Array {
  let total = 0;
  for (const part of parts) total += part.length;
  const out = new Uint8Array(total);
  let offset = 0;
  for (const part of parts) {
    out.set(part, offset);
    offset += part.length;
  }
  return out;
}

/**
 * A response body whose chunks are lent, not given: each one is valid only until the next is asked for, when
 * its source reads the following bytes into the same memory (a BYOB reader: the memory moves to a new
 * ArrayBuffer, so every view of the old chunk is detached and reads as empty, never as other bytes).
 * Receiving a pack this way allocates nothing per chunk: with a fresh ArrayBuffer per chunk, large.git's
 * clone held ~37 MB of spent chunks at the end of its receive (V8 collects ArrayBuffers lazily).
 *
 * Deliberately not an AsyncIterable: only `readPackets` takes it, which copies what it keeps across reads
 * (`PktLineDecoder.keepUnread`), and whose packets are then valid only until the next packet is asked for.
 * So only a consumer that copies each packet's bytes before asking for the next (PackIngester.push does)
 * may read a lent body; one that collects chunks or packets (`readAllCapped`, ref lists) may not.
 */
export interface LentChunks {
  readonly lent: AsyncIterable<Uint8Array>;
}

/** A cap on a whole response: `limit` names the setting in messages, `what` the response. */
export type ResponseCap = { maxBytes: number; limit: string; what: string };

/**
 * Decodes a byte stream into packets as the bytes arrive. Accepts any async iterable of chunks, a
 * `ReadableStream` (read with a reader where the browser's stream is not async iterable, as in Safari), or
 * `LentChunks`, whose packets are valid only until the next one is asked for.
 * Throws `PKT_LINE_TRUNCATED` if the stream stops inside a packet, and `LIMIT_EXCEEDED` as soon as more
 * than `cap.maxBytes` have arrived (the rest of the body is then cancelled, not read).
 */
export async function* readPackets(
  stream: AsyncIterable<Uint8Array> | ReadableStream<Uint8Array> | LentChunks,
  cap?: ResponseCap,
): AsyncGenerator<Packet> {
  const decoder = new PktLineDecoder();
  const lent = 'lent' in stream;
  let received = 0;
  for await (const chunk of lent ? stream.lent : chunksOf(stream)) {
    received += chunk.length;
    if (cap && received > cap.maxBytes) throw responseTooLarge(cap);
    yield* decoder.push(chunk);
    // Every packet of this chunk was taken: before its memory is read into again.
    if (lent) decoder.keepUnread();
  }
  decoder.end();
}

/** The cap on a ref advertisement (GET info/refs), as every reader of one states it. */
export function infoRefsCap(maxBytes: number): ResponseCap {
  return { maxBytes, limit: 'maxInfoRefsBytes', what: 'ref advertisement (info/refs)' };
}

/** A whole response body; WireError `LIMIT_EXCEEDED` once past `cap.maxBytes`, the rest unread. */
export async function readAllCapped(
  chunks: AsyncIterable<Uint8Array>,
  cap: ResponseCap,
): Promise<Uint8Array> {
  const parts: Uint8Array[] = [];
  let total = 0;
  for await (const chunk of chunks) {
    total += chunk.length;
    if (total > cap.maxBytes) throw responseTooLarge(cap);
    parts.push(chunk);
  }
  return concatBytes(parts);
}

export function responseTooLarge(cap: ResponseCap): WireError {
  return new WireError(
    'LIMIT_EXCEEDED',
    `The server's ${cap.what} is larger than ${cap.maxBytes} bytes (${cap.limit}); nothing was stored. ` +
      'If the repository really has that many refs, raise the limit in the clone options',
    { limit: cap.limit },
  );
}

async function* chunksOf(
  stream: AsyncIterable<Uint8Array> | ReadableStream<Uint8Array>,
): AsyncGenerator<Uint8Array> {
  if (Symbol.asyncIterator in stream) {
    yield* stream as AsyncIterable<Uint8Array>;
    return;
  }
  const reader = (stream as ReadableStream<Uint8Array>).getReader();
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) return;
      yield value;
    }
  } finally {
    // Stopped early (consumer returned or threw): cancel so the body stops downloading. Cancelling a stream
    // that has ended does nothing (Streams: ReadableStreamCancel of a closed stream), so no flag says which.
    await reader.cancel().catch(() => {});
    reader.releaseLock();
  }
}

/**
 * A data packet as text: UTF-8, with one trailing LF dropped. gitprotocol-common: receivers "MUST treat
 * pkt-lines with non-binary data the same whether or not they contain the trailing LF".
 */
export function packetText(packet: DataPacket): string {
  return lineText(packet.data);
}

function lineText(data: Uint8Array): string {
  const end = data.length > 0 && data[data.length - 1] === 0x0a ? data.length - 1 : data.length;
  return textDecoder.decode(data.subarray(0, end));
}

/**
 * The explanation of an `ERR <text>` packet, or null if the packet is something else.
 * gitprotocol-pack: error-line = PKT-LINE("ERR" SP explanation-text), allowed wherever a pkt-line is.
 */
export function errPacketMessage(packet: Packet): string | null {
  if (packet.type !== 'data') return null;
  const { data } = packet;
  if (data.length < 4 || data[0] !== 0x45 || data[1] !== 0x52 || data[2] !== 0x52 || data[3] !== 0x20) {
    return null;
  }
  return lineText(data.subarray(4));
}

/** A short human description of a packet for error messages: `flush packet (0000)`, `"ls-refs=unborn"`. */
export function describePacket(packet: Packet): string {
  switch (packet.type) {
    case 'flush':
      return 'a flush packet (0000)';
    case 'delim':
      return 'a delimiter packet (0001)';
    case 'response-end':
      return 'a response-end packet (0002)';
    case 'data': {
      const text = packetText(packet);
      const shown = text.length > 80 ? `${text.slice(0, 80)}…` : text;
      return `the line ${JSON.stringify(shown)}`;
    }
  }
}

const HEX_DIGITS = '0123456789abcdef';

function hexDigitValue(byte: number): number {
  if (byte >= 0x30 && byte <= 0x39) return byte - 0x30;
  // git's hex parser takes either case, though gitprotocol-common's HEXDIG is lowercase.
  if (byte >= 0x61 && byte <= 0x66) return byte - 0x61 + 10;
  if (byte >= 0x41 && byte <= 0x46) return byte - 0x41 + 10;
  return -1;
}

function printableBytes(bytes: number[]): string {
  let out = '';
  for (const byte of bytes) {
    out +=
      byte >= 0x20 && byte < 0x7f && byte !== 0x22
        ? String.fromCharCode(byte)
        : `\\x${byte.toString(16).padStart(2, '0')}`;
  }
  return `"${out}"`;
}
