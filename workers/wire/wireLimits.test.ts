import { afterEach, describe, expect, it } from 'vitest';
import { WireError } from './errors.ts';
import { type FetchEvent, ProgressParser, parseFetchResponse } from './fetchResponse.ts';
import { concatBytes, encodePktLine, FLUSH_PKT, type Packet, readPackets } from './pktLine.ts';
import { DEFAULT_WIRE_LIMITS } from './wireLimits.ts';

async function* chunks(parts: Uint8Array[]): AsyncGenerator<Uint8Array> {
  yield* parts;
}

async function failureOf(run: () => Promise<unknown>): Promise<WireError> {
  try {
    await run();
  } catch (e) {
    if (e instanceof WireError) return e;
    throw e;
  }
  throw new Error('no error');
}

describe('readPackets with a cap', () => {
  const line = encodePktLine(`${'0'.repeat(40)} refs/heads/main\n`);
  const cap = { maxBytes: 1000, limit: 'maxLsRefsBytes', what: 'ls-refs answer' };

  it('passes a response up to the cap', async () => {
    const body = concatBytes([...Array(16).fill(line), FLUSH_PKT]);
    expect(body.length).toBeLessThanOrEqual(1000);
    const packets: Packet[] = [];
    for await (const p of readPackets(chunks([body]), cap)) packets.push(p);
    expect(packets.length).toBe(17);
  });

  it('stops an endless response at the cap, without reading the rest', async () => {
    let pulled = 0;
    // "Endless" up to 100,000 lines: enough for any cap here, and a test that ends if the cap is gone.
    async function* endless() {
      for (let i = 0; i < 100_000; i++) {
        pulled++;
        yield line;
      }
    }
    const error = await failureOf(async () => {
      for await (const _ of readPackets(endless(), cap));
    });
    expect(error.code).toBe('LIMIT_EXCEEDED');
    expect(error.limit).toBe('maxLsRefsBytes');
    expect(error.message).toMatch(/ls-refs answer is larger than 1000 bytes \(maxLsRefsBytes\)/);
    expect(pulled).toBe(Math.floor(1000 / line.length) + 1);
  });
});

describe('ProgressParser', () => {
  const realExec = RegExp.prototype.exec;
  afterEach(() => {
    RegExp.prototype.exec = realExec;
  });

  it('scans each character once when a line arrives a character at a time (no O(n²))', () => {
    // Counts the characters the line-end search looks at: O(n) overall, where the old parser re-scanned
    // the whole unfinished line on every piece (n²/2 here, 2·10⁹).
    let scanned = 0;
    RegExp.prototype.exec = function (this: RegExp, input: string) {
      if (this.source === '[\\r\\n]') scanned += input.length - this.lastIndex;
      return realExec.call(this, input);
    };
    const parser = new ProgressParser(100_000);
    for (let i = 0; i < 60_000; i++) parser.push('x');
    const lines = parser.push(' done\n');
    RegExp.prototype.exec = realExec;
    expect(lines.length).toBe(1);
    expect(lines[0].text).toBe(`${'x'.repeat(60_000)} done`);
    expect(scanned).toBeLessThan(200_000);
  });

  it('fails a line longer than the cap with LIMIT_EXCEEDED naming maxProgressLineBytes', () => {
    const parser = new ProgressParser(1000);
    parser.push('a'.repeat(600));
    expect(() => parser.push('b'.repeat(600))).toThrow(
      expect.objectContaining({ code: 'LIMIT_EXCEEDED', limit: 'maxProgressLineBytes' }),
    );
  });

  it('a line exactly at the cap passes; many short lines are never capped together', () => {
    const parser = new ProgressParser(1000);
    expect(parser.push(`${'a'.repeat(1000)}\n`).length).toBe(1);
    for (let i = 0; i < 100; i++) expect(parser.push(`Counting objects: ${i}\r`).length).toBe(1);
  });

  it('the default cap is 64 KiB', () => {
    expect(DEFAULT_WIRE_LIMITS.maxProgressLineBytes).toBe(65536);
    const parser = new ProgressParser();
    expect(() => parser.push('x'.repeat(65537))).toThrow(expect.objectContaining({ code: 'LIMIT_EXCEEDED' }));
  });

  it('parseFetchResponse fails a band-2 stream that never ends a line', async () => {
    const body = [encodePktLine('packfile\n')];
    for (let i = 0; i < 100; i++)
      body.push(encodePktLine(concatBytes([Uint8Array.of(2), new Uint8Array(1000).fill(0x2e)])));
    body.push(FLUSH_PKT);
    const error = await failureOf(async () => {
      const events: FetchEvent[] = [];
      for await (const e of parseFetchResponse(readPackets(chunks(body)), { maxProgressLineBytes: 50_000 })) {
        events.push(e);
      }
    });
    expect(error.code).toBe('LIMIT_EXCEEDED');
    expect(error.limit).toBe('maxProgressLineBytes');
  });
});
