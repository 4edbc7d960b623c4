import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { expectTypedError, fuzz, fuzzTimeout } from '../../test/support/fuzz.ts';
import { parseInfoRefs } from './capabilities.ts';
import { parseFetchResponse } from './fetchResponse.ts';
import { parseLsRefsResponse } from './lsRefs.ts';
import {
  concatBytes,
  DELIM_PKT,
  encodePktLine,
  FLUSH_PKT,
  type Packet,
  RESPONSE_END_PKT,
} from './pktLine.ts';

const MAX_PROGRESS_LINE = 200;
const enc = new TextEncoder();
const oid = fc.constantFrom('1'.repeat(40), 'a'.repeat(40), '0'.repeat(40), 'ab', 'Z'.repeat(40));
const word = fc.constantFrom(
  'acknowledgments',
  'shallow-info',
  'wanted-refs',
  'packfile-uris',
  'packfile',
  'version 2',
  'version 1',
  '# service=git-upload-pack',
  'ready',
  'NAK',
  'ERR boom',
  'HEAD',
  'refs/heads/main',
  'unborn',
  'symref-target:refs/heads/main',
  'peeled:',
  'capabilities^{}',
  'ls-refs=unborn',
  'object-format=sha256',
);
/** A line that is sometimes meaningful to one of the parsers. */
const line = fc.oneof(
  word,
  fc.tuple(fc.constantFrom('ACK ', 'shallow ', 'unshallow ', '', 'peeled:'), oid).map(([a, b]) => a + b),
  fc.tuple(oid, word, fc.array(word, { maxLength: 2 })).map(([o, n, attrs]) => [o, n, ...attrs].join(' ')),
  fc.tuple(oid, word, fc.string({ maxLength: 20 })).map(([o, n, caps]) => `${o} ${n}\0${caps}`),
  fc.string({ maxLength: 40 }),
);
const bandPacket = fc
  .tuple(
    fc.constantFrom(1, 2, 2, 3, 0, 69, 255),
    fc.oneof(
      fc.uint8Array({ minLength: 0, maxLength: 120 }),
      fc
        .constantFrom('Counting objects: 1\r', 'x'.repeat(150), 'Total 3 (delta 0)\n', '\n')
        .map((t) => enc.encode(t)),
    ),
  )
  .map(([band, data]) => encodePktLine(concatBytes([Uint8Array.of(band), data])));
const packetBytes = fc.oneof(
  { weight: 4, arbitrary: line.filter((l) => enc.encode(l).length > 0).map((l) => encodePktLine(`${l}\n`)) },
  { weight: 3, arbitrary: bandPacket },
  { weight: 2, arbitrary: fc.constantFrom(FLUSH_PKT, DELIM_PKT, RESPONSE_END_PKT) },
);
const response = fc.array(packetBytes, { maxLength: 25 });

function toPackets(parts: Uint8Array[]): Packet[] {
  return parts.map((bytes) => {
    const head = new TextDecoder().decode(bytes.subarray(0, 4));
    if (head === '0000') return { type: 'flush' };
    if (head === '0001') return { type: 'delim' };
    if (head === '0002') return { type: 'response-end' };
    return { type: 'data', data: bytes.subarray(4) };
  });
}

async function* each<T>(items: T[]): AsyncGenerator<T> {
  yield* items;
}

const TYPED = ['WireError', 'RemoteError'];

describe('fuzz: v2 response parsers', () => {
  it(
    'fetch responses, ls-refs answers and advertisements fail only with typed errors, within their caps',
    async () => {
      await fuzz(
        'v2-response',
        fc.asyncProperty(response, async (parts) => {
          const packets = toPackets(parts);
          const size = parts.reduce((n, p) => n + p.length, 0);
          let packBytes = 0;
          try {
            for await (const event of parseFetchResponse(each(packets), {
              maxProgressLineBytes: MAX_PROGRESS_LINE,
            })) {
              if (event.type === 'pack') packBytes += event.data.length;
              if (event.type === 'progress') expect(event.text.length).toBeLessThanOrEqual(MAX_PROGRESS_LINE);
            }
          } catch (error) {
            expectTypedError(error, TYPED);
          }
          expect(packBytes).toBeLessThanOrEqual(size);
          try {
            for (const ref of parseLsRefsResponse(packets)) expect(ref.name.length).toBeGreaterThan(0);
          } catch (error) {
            expectTypedError(error, TYPED);
          }
          try {
            parseInfoRefs(concatBytes(parts));
          } catch (error) {
            expectTypedError(error, TYPED);
          }
        }),
      );
    },
    fuzzTimeout(),
  );
});
