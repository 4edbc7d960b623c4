import { describe, expect, it } from 'vitest';
import { WireError } from './errors.ts';
import {
  concatBytes,
  DELIM_PKT,
  describePacket,
  encodePktLine,
  errPacketMessage,
  FLUSH_PKT,
  infoRefsCap,
  MAX_PKT_LINE_DATA,
  type Packet,
  PktLineDecoder,
  packetText,
  RESPONSE_END_PKT,
  readAllCapped,
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

describe('pkt-line lengths and messages, byte by byte', () => {
  it('takes exactly the hex digits of either case as a length digit, as git does', () => {
    for (let byte = 0; byte < 256; byte++) {
      const char = String.fromCharCode(byte);
      const header = concatBytes([ascii('001'), Uint8Array.of(byte)]);
      if (/^[0-9a-fA-F]$/.test(char)) {
        const length = 16 + Number.parseInt(char, 16);
        const packets = decodeAll([header, new Uint8Array(length - 4)]);
        expect([byte, packets.length, packets[0].type === 'data' && packets[0].data.length]).toEqual([
          byte,
          1,
          length - 4,
        ]);
      } else {
        const error = decodeError(concatBytes([header, new Uint8Array(40)]));
        expect([byte, error.byteOffset, error.message]).toEqual([
          byte,
          0,
          expect.stringContaining('is not a hexadecimal number'),
        ]);
      }
    }
  });

  it('quotes the bad length printable, escaping control bytes, DEL and the quote mark', () => {
    expect(decodeError(Uint8Array.of(0x1f, 0x20, 0x7e, 0x7f)).message).toContain('length "\\x1f ~\\x7f" at');
    expect(decodeError(Uint8Array.of(0x22, 0x05, 0x30, 0xff)).message).toContain(
      'length "\\x22\\x050\\xff" at',
    );
  });

  it('says a stream cut inside a length was cut there, with how many length bytes came', () => {
    const decoder = new PktLineDecoder();
    decoder.push(concatBytes([FLUSH_PKT, ascii('00')]));
    expect(() => decoder.end()).toThrow(
      'The response ended inside a pkt-line length at byte 4 (2 of 4 length bytes received): the ' +
        'connection was probably cut short; try again',
    );
  });

  it('says a stream cut right after a whole length was cut inside the packet', () => {
    const decoder = new PktLineDecoder();
    decoder.push(concatBytes([FLUSH_PKT, ascii('000a')]));
    let caught: unknown;
    try {
      decoder.end();
    } catch (error) {
      caught = error;
    }
    expect(caught).toMatchObject({
      code: 'PKT_LINE_TRUNCATED',
      byteOffset: 4,
      message:
        'The response ended inside a pkt-line at byte 4: 4 of its 10 bytes arrived. The connection was ' +
        'probably cut short; try again',
    });
  });

  it('says why it cannot encode an empty or an oversized line', () => {
    expect(() => encodePktLine('')).toThrow('Cannot encode an empty pkt-line: 0004 is not valid on the wire');
    expect(() => encodePktLine(new Uint8Array(MAX_PKT_LINE_DATA + 1))).toThrow(
      `Cannot encode a pkt-line of ${MAX_PKT_LINE_DATA + 1} bytes: one line carries at most ${MAX_PKT_LINE_DATA}`,
    );
  });
});

describe('keepUnread (lent chunks)', () => {
  it('keeps the unread start of a packet that already spans two pushed chunks', () => {
    const decoder = new PktLineDecoder();
    // The first chunk is partly read (one whole packet), the second holds the next packet's middle.
    const first = ascii('0005a0009ab');
    const second = ascii('c');
    expect(normalise(decoder.push(first))).toEqual([{ type: 'data', data: [0x61] }]);
    expect(decoder.push(second)).toEqual([]);
    decoder.keepUnread();
    // Their source reads the next bytes into the same memory.
    first.fill(0x7a);
    second.fill(0x7a);
    expect(normalise(decoder.push(ascii('de')))).toEqual([
      { type: 'data', data: Array.from(ascii('abcde')) },
    ]);
    decoder.end();
  });

  it('detaches a lent packet that spanned chunks once the next one is assembled, never overwriting it', () => {
    const decoder = new PktLineDecoder();
    decoder.push(ascii('0008ab'));
    decoder.keepUnread();
    const [kept] = decoder.push(ascii('cd0008w'));
    expect(kept.type === 'data' && Array.from(kept.data)).toEqual(Array.from(ascii('abcd')));
    decoder.keepUnread();
    const [next] = decoder.push(ascii('xyz'));
    expect(next.type === 'data' && Array.from(next.data)).toEqual(Array.from(ascii('wxyz')));
    // Read as empty, not as "wxyz": a consumer that kept it too long sees nothing rather than other bytes.
    expect(kept.type === 'data' && kept.data.length).toBe(0);
  });
});

describe('readPackets and readAllCapped, at their caps', () => {
  const body = concatBytes([encodePktLine('abc\n'), encodePktLine('de\n'), FLUSH_PKT]);

  it('reads a body of exactly the cap, and refuses one byte more naming the setting', async () => {
    const cap = { maxBytes: body.length, limit: 'maxLsRefsBytes', what: 'ls-refs answer' };
    expect(await collect(readPackets(asStream(splitAt(body, [5, 9])), cap))).toHaveLength(3);
    await expect(collect(readPackets(asStream([body, FLUSH_PKT]), cap))).rejects.toMatchObject({
      code: 'LIMIT_EXCEEDED',
      limit: 'maxLsRefsBytes',
    });
  });

  it('readAllCapped joins the chunks of a body of exactly the cap', async () => {
    const cap = infoRefsCap(body.length);
    expect(await readAllCapped(asStream(splitAt(body, [3, 4, 11])), cap)).toEqual(body);
  });

  it('readAllCapped refuses the info/refs byte past the cap without reading the rest', async () => {
    let pulled = 0;
    async function* chunks() {
      for (let i = 0; i < 1000; i++) {
        pulled++;
        yield Uint8Array.of(0x30);
      }
    }
    let caught: unknown;
    try {
      await readAllCapped(chunks(), infoRefsCap(10));
    } catch (error) {
      caught = error;
    }
    expect(caught).toBeInstanceOf(WireError);
    expect(caught).toMatchObject({
      code: 'LIMIT_EXCEEDED',
      limit: 'maxInfoRefsBytes',
      message:
        "The server's ref advertisement (info/refs) is larger than 10 bytes (maxInfoRefsBytes); nothing was " +
        'stored. If the repository really has that many refs, raise the limit in the clone options',
    });
    expect(pulled).toBe(11);
  });

  // Safari's ReadableStream is not async iterable: readPackets reads it with a reader.
  function readerOnly(stream: ReadableStream<Uint8Array>): ReadableStream<Uint8Array> {
    return { getReader: () => stream.getReader() } as unknown as ReadableStream<Uint8Array>;
  }

  it('reads a stream that is not async iterable with its reader, and releases it at the end', async () => {
    const chunks = splitAt(representative, [1, 2, 3, 1000]);
    const stream = new ReadableStream<Uint8Array>({
      start(controller) {
        for (const chunk of chunks) controller.enqueue(chunk);
        controller.close();
      },
    });
    expect(normalise(await collect(readPackets(readerOnly(stream))))).toEqual(
      normalise(decodeAll([representative])),
    );
    expect(stream.locked).toBe(false);
  });

  it('cancels a stream read with its reader when the consumer stops early, not when it ends', async () => {
    let cancelled = 0;
    let sent = 0;
    const endless = new ReadableStream<Uint8Array>({
      pull(controller) {
        controller.enqueue(encodePktLine('line\n'));
      },
      cancel() {
        cancelled++;
      },
    });
    for await (const packet of readPackets(readerOnly(endless))) {
      expect(packet.type).toBe('data');
      break;
    }
    expect([cancelled, endless.locked]).toEqual([1, false]);

    const finite = new ReadableStream<Uint8Array>({
      pull(controller) {
        if (sent++ < 2) controller.enqueue(encodePktLine('line\n'));
        else controller.close();
      },
      cancel() {
        cancelled++;
      },
    });
    expect(await collect(readPackets(readerOnly(finite)))).toHaveLength(2);
    expect(cancelled).toBe(1);
  });
});

describe('packet helpers, at their edges', () => {
  it('errPacketMessage wants "ERR " exactly: each of its four bytes, and nothing after it is fine', () => {
    expect(errPacketMessage({ type: 'data', data: ascii('ERR ') })).toBe('');
    for (const text of ['ERR', 'XRR x', 'EXR x', 'ERX x', 'ERRx', 'err x']) {
      expect([text, errPacketMessage({ type: 'data', data: ascii(text) })]).toEqual([text, null]);
    }
  });

  it('describePacket names every special packet and cuts a long line at 80 characters', () => {
    expect(describePacket({ type: 'delim' })).toBe('a delimiter packet (0001)');
    expect(describePacket({ type: 'response-end' })).toBe('a response-end packet (0002)');
    const eighty = 'x'.repeat(80);
    expect(describePacket({ type: 'data', data: ascii(`${eighty}\n`) })).toBe(`the line "${eighty}"`);
    expect(describePacket({ type: 'data', data: ascii(`${eighty}yz`) })).toBe(`the line "${eighty}…"`);
  });
});
