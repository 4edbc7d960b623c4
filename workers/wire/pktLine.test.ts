import { describe, expect, it } from 'vitest';
import { WireError } from './errors.ts';
import {
  concatBytes,
  DELIM_PKT,
  describePacket,
  encodePktLine,
  errPacketMessage,
  FLUSH_PKT,
  MAX_PKT_LINE_DATA,
  type Packet,
  PktLineDecoder,
  packetText,
  RESPONSE_END_PKT,
  readPackets,
} from './pktLine.ts';
import { asStream, collect, pseudoRandomBytes, splitAt } from './testing/realGit.ts';

const ascii = (text: string) => new TextEncoder().encode(text);

function decodeAll(chunks: Uint8Array[]): Packet[] {
  const decoder = new PktLineDecoder();
  const packets = chunks.flatMap((chunk) => decoder.push(chunk));
  decoder.end();
  return packets;
}

/** Packets as comparable values: data becomes a plain array so views and copies compare equal. */
function normalise(packets: Packet[]): unknown[] {
  return packets.map((p) =>
    p.type === 'data' ? { type: 'data', data: Array.from(p.data) } : { type: p.type },
  );
}

function decodeError(bytes: Uint8Array): WireError {
  try {
    decodeAll([bytes]);
  } catch (error) {
    if (error instanceof WireError) return error;
    throw error;
  }
  throw new Error('expected the decoder to throw');
}

// A representative stream: every special packet, text with and without LF, binary with every byte value,
// an ERR line and sideband packets. Small enough to decode once per split offset.
const binary = Uint8Array.from({ length: 256 }, (_, i) => i);
const representative = concatBytes([
  encodePktLine('# service=git-upload-pack\n'),
  FLUSH_PKT,
  encodePktLine('version 2\n'),
  encodePktLine('no-newline'),
  DELIM_PKT,
  encodePktLine(binary),
  encodePktLine(concatBytes([Uint8Array.of(1), pseudoRandomBytes(1000, 7)])),
  encodePktLine('\u0002Counting objects:  50% (1/2)\r'),
  RESPONSE_END_PKT,
  encodePktLine('ERR something broke'),
  FLUSH_PKT,
]);
const maxPacket = encodePktLine(pseudoRandomBytes(MAX_PKT_LINE_DATA, 9));

describe('pkt-line decoding', () => {
  it('decodes special packets, text and binary data', () => {
    const packets = decodeAll([representative]);
    expect(packets.map((p) => p.type)).toEqual([
      'data',
      'flush',
      'data',
      'data',
      'delim',
      'data',
      'data',
      'data',
      'response-end',
      'data',
      'flush',
    ]);
    const texts = packets.filter((p) => p.type === 'data').map((p) => packetText(p));
    expect(texts.slice(0, 3)).toEqual(['# service=git-upload-pack', 'version 2', 'no-newline']);
    expect((packets[5] as { data: Uint8Array }).data).toEqual(binary);
  });

  it('gives the same packets however the input is split in two', () => {
    const expected = normalise(decodeAll([representative]));
    for (let offset = 0; offset <= representative.length; offset++) {
      expect(normalise(decodeAll(splitAt(representative, [offset]))), `split at ${offset}`).toEqual(expected);
    }
  });

  it('gives the same packets when fed one byte at a time', () => {
    const chunks = Array.from({ length: representative.length }, (_, i) => representative.subarray(i, i + 1));
    expect(normalise(decodeAll(chunks))).toEqual(normalise(decodeAll([representative])));
  });

  it('assembles a maximum-length packet however it is split', () => {
    const stream = concatBytes([maxPacket, FLUSH_PKT]);
    const payload = maxPacket.subarray(4);
    const check = (chunks: Uint8Array[]) => {
      const packets = decodeAll(chunks);
      expect(packets).toHaveLength(2);
      expect(packets[0].type === 'data' && Buffer.compare(packets[0].data, payload) === 0).toBe(true);
      expect(packets[1].type).toBe('flush');
    };
    // Every split near the edges, where the header and the trailing flush lie, and a spread in between.
    const offsets = [
      ...Array.from({ length: 16 }, (_, i) => i),
      ...Array.from({ length: 16 }, (_, i) => stream.length - i),
      ...Array.from({ length: 64 }, (_, i) => Math.floor((i * stream.length) / 64)),
    ];
    for (const offset of offsets) check(splitAt(stream, [offset]));
    check(Array.from({ length: stream.length }, (_, i) => stream.subarray(i, i + 1)));
  });

  it('gives the same packets for every three-way split of a small stream', () => {
    const small = concatBytes([encodePktLine('abc\n'), FLUSH_PKT, encodePktLine('de'), DELIM_PKT]);
    const expected = normalise(decodeAll([small]));
    for (let a = 0; a <= small.length; a++) {
      for (let b = a; b <= small.length; b++) {
        expect(normalise(decodeAll(splitAt(small, [a, b])))).toEqual(expected);
      }
    }
  });

  it('returns views into the chunk, not copies, for packets inside one chunk', () => {
    const chunk = concatBytes([encodePktLine('hello'), encodePktLine('world')]);
    const packets = new PktLineDecoder().push(chunk);
    for (const packet of packets) {
      expect(packet.type).toBe('data');
      if (packet.type === 'data') expect(packet.data.buffer).toBe(chunk.buffer);
    }
  });

  it('assembles a packet spread over many chunks once, in linear time', () => {
    // 200 maximum-size packets (13 MB) in 1000-byte chunks: a quadratic buffer would take minutes.
    const packet = encodePktLine(pseudoRandomBytes(MAX_PKT_LINE_DATA, 3));
    const stream = concatBytes(Array.from({ length: 200 }, () => packet));
    const offsets = Array.from({ length: Math.floor(stream.length / 1000) }, (_, i) => (i + 1) * 1000);
    const started = performance.now();
    const packets = decodeAll(splitAt(stream, offsets));
    const elapsed = performance.now() - started;
    expect(packets).toHaveLength(200);
    expect(packets.every((p) => p.type === 'data' && p.data.length === MAX_PKT_LINE_DATA)).toBe(true);
    expect(elapsed).toBeLessThan(5000);
  });

  it('accepts upper-case hex lengths, as git does', () => {
    expect(normalise(decodeAll([ascii('000Ahello\n')]))).toEqual(
      normalise(decodeAll([ascii('000ahello\n')])),
    );
  });

  it('rejects 0003: shorter than the length field', () => {
    const error = decodeError(concatBytes([encodePktLine('ok'), ascii('0003')]));
    expect(error.code).toBe('PKT_LINE_INVALID');
    expect(error.byteOffset).toBe(6);
    expect(error.message).toBe(
      'The server sent an invalid pkt-line length "0003" at byte 6: it is shorter than the length field ' +
        'itself, so the response is not git protocol data. Try again; if it happens again, something ' +
        'between here and the server (a proxy, a captive portal) rewrites the answer',
    );
  });

  it('rejects 0004, an empty data packet', () => {
    const error = decodeError(ascii('0004'));
    expect(error.code).toBe('PKT_LINE_INVALID');
    expect(error.message).toContain('"0004" at byte 0');
    expect(error.message).toContain('empty pkt-line');
  });

  it('rejects a length that is not hex, quoting the bytes', () => {
    const error = decodeError(ascii('<!DOCTYPE html>'));
    expect(error.code).toBe('PKT_LINE_INVALID');
    expect(error.message).toContain('"<!DO" at byte 0');
    expect(error.message).toContain('not a hexadecimal number');
    expect(decodeError(ascii('00 5x')).code).toBe('PKT_LINE_INVALID');
    expect(decodeError(ascii('-001')).code).toBe('PKT_LINE_INVALID');
  });

  it('rejects a non-hex length even before all four bytes arrive', () => {
    const decoder = new PktLineDecoder();
    expect(() => decoder.push(ascii('0'))).not.toThrow();
    expect(decoder.push(ascii('0g'))).toEqual([]); // still fewer than 4 bytes
    expect(() => decoder.push(ascii('1'))).toThrow(/"00g1" at byte 0/);
  });

  it('rejects a length over 65520 and accepts exactly 65520', () => {
    const error = decodeError(ascii('fff1'));
    expect(error.code).toBe('PKT_LINE_INVALID');
    expect(error.message).toContain('exceeds the pkt-line maximum of 65520');
    expect(decodeError(ascii('ffff')).code).toBe('PKT_LINE_INVALID');
    const max = encodePktLine(new Uint8Array(MAX_PKT_LINE_DATA));
    expect(new TextDecoder().decode(max.subarray(0, 4))).toBe('fff0');
    expect(decodeAll([max])).toHaveLength(1);
  });

  it('stays failed after an error', () => {
    const decoder = new PktLineDecoder();
    expect(() => decoder.push(ascii('0003'))).toThrow(WireError);
    expect(() => decoder.push(FLUSH_PKT)).toThrow(/"0003"/);
    expect(() => decoder.end()).toThrow(/"0003"/);
  });

  it('reports a stream truncated inside the length', () => {
    const decoder = new PktLineDecoder();
    decoder.push(concatBytes([FLUSH_PKT, ascii('00')]));
    expect(() => decoder.end()).toThrow(
      expect.objectContaining({ code: 'PKT_LINE_TRUNCATED', byteOffset: 4 }) as unknown as Error,
    );
  });

  it('reports a stream truncated inside the data', () => {
    const decoder = new PktLineDecoder();
    decoder.push(ascii('000ahel'));
    let caught: unknown;
    try {
      decoder.end();
    } catch (error) {
      caught = error;
    }
    expect(caught).toBeInstanceOf(WireError);
    expect((caught as WireError).code).toBe('PKT_LINE_TRUNCATED');
    expect((caught as WireError).message).toBe(
      'The response ended inside a pkt-line at byte 0: 7 of its 10 bytes arrived. The connection was ' +
        'probably cut short; try again',
    );
  });

  it('ends cleanly on a packet boundary', () => {
    const decoder = new PktLineDecoder();
    decoder.push(FLUSH_PKT);
    expect(() => decoder.end()).not.toThrow();
  });
});

describe('pkt-line encoding', () => {
  it('frames text with its length in lowercase hex', () => {
    expect(new TextDecoder().decode(encodePktLine('version 2\n'))).toBe('000eversion 2\n');
    expect(new TextDecoder().decode(encodePktLine('want 0123456789abcdef0123456789abcdef01234567\n'))).toBe(
      '0032want 0123456789abcdef0123456789abcdef01234567\n',
    );
    // Lengths count bytes, not UTF-16 units.
    expect(new TextDecoder().decode(encodePktLine('é').subarray(0, 4))).toBe('0006');
  });

  it('round-trips any payload length from 1 to the maximum', () => {
    for (const length of [1, 2, 15, 16, 255, 256, 4095, 4096, MAX_PKT_LINE_DATA - 1, MAX_PKT_LINE_DATA]) {
      const payload = pseudoRandomBytes(length, length);
      const packets = decodeAll([encodePktLine(payload)]);
      expect(packets).toHaveLength(1);
      expect(packets[0]).toEqual({ type: 'data', data: payload });
    }
  });

  it('refuses payloads that do not fit one pkt-line, and empty ones', () => {
    expect(() => encodePktLine(new Uint8Array(MAX_PKT_LINE_DATA + 1))).toThrow(
      expect.objectContaining({ code: 'PKT_LINE_TOO_LONG' }) as unknown as Error,
    );
    expect(() => encodePktLine('')).toThrow(
      expect.objectContaining({ code: 'PKT_LINE_INVALID' }) as unknown as Error,
    );
  });

  it('has the special packets as bytes', () => {
    expect(new TextDecoder().decode(concatBytes([FLUSH_PKT, DELIM_PKT, RESPONSE_END_PKT]))).toBe(
      '000000010002',
    );
  });
});

describe('readPackets', () => {
  it('decodes an async iterable of chunks', async () => {
    const chunks = splitAt(representative, [3, 50, 51, 400, 30_000]);
    expect(normalise(await collect(readPackets(asStream(chunks))))).toEqual(
      normalise(decodeAll([representative])),
    );
  });

  it('decodes a ReadableStream', async () => {
    const chunks = splitAt(representative, [1, 2, 3, 1000]);
    const stream = new ReadableStream<Uint8Array>({
      start(controller) {
        for (const chunk of chunks) controller.enqueue(chunk);
        controller.close();
      },
    });
    expect(normalise(await collect(readPackets(stream)))).toEqual(normalise(decodeAll([representative])));
  });

  it('decodes lent chunks whole although their source reads each into the same memory', async () => {
    const stream = concatBytes([representative, maxPacket, encodePktLine('after the longest\n'), FLUSH_PKT]);
    const expected = normalise(decodeAll([stream]));
    for (const size of [1, 3, 5, 1000, 40_000, 70_000]) {
      // One buffer for every chunk, overwritten in place: what a reused read buffer does at worst.
      const memory = new Uint8Array(size);
      async function* lend() {
        for (let at = 0; at < stream.length; at += size) {
          const piece = stream.subarray(at, at + size);
          memory.set(piece);
          yield memory.subarray(0, piece.length);
        }
      }
      const packets: Packet[] = [];
      for await (const packet of readPackets({ lent: lend() })) {
        // Copied before the next is asked for, as a consumer of lent packets must.
        packets.push(packet.type === 'data' ? { type: 'data', data: packet.data.slice() } : packet);
      }
      expect(normalise(packets), `chunks of ${size} bytes`).toEqual(expected);
    }
  });

  it('throws PKT_LINE_TRUNCATED when the stream stops mid-packet', async () => {
    const cut = representative.subarray(0, representative.length - 10);
    await expect(collect(readPackets(asStream([cut])))).rejects.toMatchObject({ code: 'PKT_LINE_TRUNCATED' });
  });

  it('cancels a ReadableStream when the consumer stops early', async () => {
    let cancelled = false;
    const stream = new ReadableStream<Uint8Array>({
      pull(controller) {
        controller.enqueue(encodePktLine('line\n'));
      },
      cancel() {
        cancelled = true;
      },
    });
    for await (const packet of readPackets(stream)) {
      expect(packet.type).toBe('data');
      break;
    }
    expect(cancelled).toBe(true);
  });
});

describe('packet helpers', () => {
  it('packetText drops exactly one trailing LF', () => {
    expect(packetText({ type: 'data', data: ascii('a\n\n') })).toBe('a\n');
    expect(packetText({ type: 'data', data: ascii('a') })).toBe('a');
    expect(packetText({ type: 'data', data: ascii('ünïcode\n') })).toBe('ünïcode');
  });

  it('errPacketMessage recognises ERR packets only', () => {
    expect(errPacketMessage({ type: 'data', data: ascii('ERR access denied\n') })).toBe('access denied');
    expect(errPacketMessage({ type: 'data', data: ascii('ERRATA') })).toBeNull();
    expect(errPacketMessage({ type: 'flush' })).toBeNull();
  });

  it('describePacket names packets for error messages', () => {
    expect(describePacket({ type: 'flush' })).toBe('a flush packet (0000)');
    expect(describePacket({ type: 'data', data: ascii('version 2\n') })).toBe('the line "version 2"');
  });
});
