import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { expectTypedError, fuzz, fuzzTimeout, mutated, split } from '../../test/support/fuzz.ts';
import {
  concatBytes,
  DELIM_PKT,
  encodePktLine,
  FLUSH_PKT,
  type Packet,
  PktLineDecoder,
  RESPONSE_END_PKT,
} from './pktLine.ts';

/** A stream of well-formed pkt-lines, as the start of something to damage. */
const pktStream = fc
  .array(
    fc.oneof(
      fc.uint8Array({ minLength: 1, maxLength: 300 }).map(encodePktLine),
      fc.constantFrom(FLUSH_PKT, DELIM_PKT, RESPONSE_END_PKT),
      // Hand-written headers: bad hex, 0003, 0004, lengths past the end or over 65520.
      fc.constantFrom('0003', '0004', 'fff1', 'zzzz', '00ff', '000a').map((h) => new TextEncoder().encode(h)),
    ),
    { maxLength: 20 },
  )
  .map(concatBytes);

/** Decodes chunks; the packets and the error, if any. */
function decode(chunks: Uint8Array[]): { packets: Packet[]; error?: unknown } {
  const decoder = new PktLineDecoder();
  const packets: Packet[] = [];
  try {
    for (const chunk of chunks) packets.push(...decoder.push(chunk));
    decoder.end();
  } catch (error) {
    return { packets, error };
  }
  return { packets };
}

const describeData = (ps: Packet[]) =>
  ps.map((p) => (p.type === 'data' ? Array.from(p.data).join(',') : p.type));

describe('fuzz: pkt-line decoder', () => {
  it(
    'fails only with WireError, holds no more than it was given, and ignores how input is split',
    async () => {
      await fuzz(
        'pkt-line',
        fc.property(
          mutated(pktStream),
          fc.array(fc.double({ min: 0, max: 1, noNaN: true }), { maxLength: 6 }),
          (input, cuts) => {
            const whole = decode([input]);
            const pieces = decode(split(input, cuts));
            if (whole.error) expectTypedError(whole.error, ['WireError']);
            if (pieces.error) expectTypedError(pieces.error, ['WireError']);
            expect((pieces.error as Error | undefined)?.message).toBe(
              (whole.error as Error | undefined)?.message,
            );
            expect(describeData(pieces.packets)).toEqual(describeData(whole.packets));
            // Bounded memory: every packet costs at least its four length bytes.
            let data = 0;
            for (const p of whole.packets) if (p.type === 'data') data += p.data.length + 4;
            expect(data + 4 * whole.packets.filter((p) => p.type !== 'data').length).toBeLessThanOrEqual(
              input.length,
            );
          },
        ),
      );
    },
    fuzzTimeout(),
  );
});
