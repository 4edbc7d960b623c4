import { describe, expect, it } from 'vitest';
import { ArrivalRing, RING_START_BYTES } from './arrivalRing.ts';
import { TABLE_RESERVE_OBJECTS } from './growableBuffers.ts';

describe('ArrivalRing', () => {
  it('never gives back bytes other than those placed for the entry, across laps and restarts', () => {
    // A 1 KiB ring that starts over every ~8 KiB placed: many laps and restarts in 20,000 entries.
    const ring = new ArrivalRing(1024, 12 * 1024);
    ring.reserve(100);
    const placed = new Map<number, Uint8Array>();
    let seed = 7;
    const random = (n: number) => {
      seed ^= seed << 13;
      seed ^= seed >>> 17;
      seed ^= seed << 5;
      return (seed >>> 0) % n;
    };
    let found = 0;
    for (let i = 0; i < 20_000; i++) {
      ring.beginEntry();
      // Read back an earlier entry, as a delta reads its base, and sometimes move it ahead.
      if (i > 0) {
        const j = Math.max(0, i - 1 - random(20));
        const want = placed.get(j);
        const got = want ? ring.get(j, want.length) : null;
        if (got) {
          expect(got).toEqual(want);
          found++;
          if (ring.isOld(j)) ring.place(j, got.length).set(got);
        }
      }
      const bytes = Uint8Array.from({ length: 1 + random(ring.maxObject) }, () => random(256));
      ring.place(i, bytes.length).set(bytes);
      placed.set(i, bytes);
    }
    // Recent bases are found often, and older ones were asked for too (found is not everything).
    expect(found).toBeGreaterThan(3_000);
    expect(found).toBeLessThan(19_000);
  });
});

describe('ArrivalRing grows before its first lap', () => {
  const bufferOf = (ring: ArrivalRing) => (ring as unknown as { bytes: Uint8Array }).bytes;

  it('starts at RING_START_BYTES and doubles only as bytes arrive, up to its size', () => {
    const S = RING_START_BYTES;
    const ring = new ArrivalRing(8 * S);
    const fill = (length: number, value: number) => new Uint8Array(length).fill(value);
    const place = (i: number, length: number) => {
      ring.beginEntry();
      ring.place(i, length).set(fill(length, i + 1));
    };
    expect(bufferOf(ring).length).toBe(S);
    expect(ring.maxObject).toBe(2 * S);
    place(0, 1000);
    expect(bufferOf(ring).length).toBe(S);
    // More than double when one object needs it; the bytes placed before stay where they were.
    place(1, 2 * S);
    expect(bufferOf(ring).length).toBe(2 * S + 1000);
    expect(ring.get(0, 1000)).toEqual(fill(1000, 1));
    place(2, S);
    expect(bufferOf(ring).length).toBe(4 * S + 2000);
    // Never past its size.
    place(3, 2 * S);
    expect(bufferOf(ring).length).toBe(8 * S);
    expect(ring.get(1, 2 * S)).toEqual(fill(2 * S, 2));
    place(4, 2 * S);
    expect(ring.get(0, 1000)).toEqual(fill(1000, 1));
    // At its size it laps as a ring allocated whole: the tail too short is skipped, entries 0 and 1 overwritten.
    place(5, 2 * S);
    expect(bufferOf(ring).length).toBe(8 * S);
    expect(ring.get(0, 1000)).toBeNull();
    expect(ring.get(1, 2 * S)).toBeNull();
    expect(ring.get(3, 2 * S)).toEqual(fill(2 * S, 4));
    expect(ring.get(5, 2 * S)).toEqual(fill(2 * S, 6));
  });

  it('a ring no larger than RING_START_BYTES is allocated whole', () => {
    expect(bufferOf(new ArrivalRing(1024)).length).toBe(1024);
  });

  it('gives back what a ring allocated whole gives back, entry by entry, while it grows and laps', () => {
    const size = RING_START_BYTES * 4;
    const grown = new ArrivalRing(size);
    // The reference: already at full size, so it never grows.
    const whole = new ArrivalRing(size);
    (whole as unknown as { bytes: Uint8Array }).bytes = new Uint8Array(size);
    let seed = 11;
    const random = (n: number) => {
      seed ^= seed << 13;
      seed ^= seed >>> 17;
      seed ^= seed << 5;
      return (seed >>> 0) % n;
    };
    for (let i = 0; i < 400; i++) {
      for (const ring of [grown, whole]) ring.beginEntry();
      const j = Math.max(0, i - 1 - random(30));
      const length = 1 + random(size / 4);
      const [a, b] = [grown.get(j, 64), whole.get(j, 64)];
      expect(a === null).toBe(b === null);
      if (a && b) expect(a).toEqual(b);
      expect(grown.isOld(j)).toBe(whole.isOld(j));
      const bytes = Uint8Array.from({ length }, () => random(256));
      for (const ring of [grown, whole]) ring.place(i, length).set(bytes);
    }
    expect(bufferOf(grown).length).toBe(size);
  });
});

describe('ArrivalRing, rule by rule (a 16-byte ring: objects of up to 4 bytes)', () => {
  const bytesOf = (length: number, fill: number) => new Uint8Array(length).fill(fill);
  /** Places entries `0..lengths.length-1` with those lengths, each filled with its index + 1. */
  const placeAll = (ring: ArrivalRing, lengths: number[], from = 0) => {
    for (const [k, length] of lengths.entries()) {
      ring.beginEntry();
      ring.place(from + k, length).set(bytesOf(length, from + k + 1));
    }
  };
  // The table of starts is private; its length and buffer are what reserve and place promise about memory.
  const table = (ring: ArrivalRing) => (ring as unknown as { starts: Uint32Array }).starts;

  it('keeps an object a quarter of the ring at most', () => {
    expect(new ArrivalRing(16).maxObject).toBe(4);
  });

  it('gives back an entry until a whole ring of bytes has been placed after its start', () => {
    const ring = new ArrivalRing(16);
    placeAll(ring, [4, 4, 4, 4]);
    // 16 bytes placed since entry 0 started: the head is back at its first byte, nothing of it overwritten.
    expect(ring.get(0, 4)).toEqual(bytesOf(4, 1));
    expect(ring.get(3, 4)).toEqual(bytesOf(4, 4));
    placeAll(ring, [1], 4);
    expect(ring.get(0, 4)).toBeNull();
    expect(ring.get(1, 4)).toEqual(bytesOf(4, 2));
    expect(ring.get(4, 1)).toEqual(bytesOf(1, 5));
  });

  it('answers null for an entry never placed, inside and past the table', () => {
    const ring = new ArrivalRing(16);
    placeAll(ring, [2]);
    expect(table(ring).length).toBe(1024);
    expect(ring.get(1, 2)).toBeNull();
    expect(ring.get(1023, 2)).toBeNull();
    expect(ring.get(1024, 2)).toBeNull();
  });

  it('skips a tail too short for the object, and uses one that fits exactly', () => {
    const ring = new ArrivalRing(16);
    placeAll(ring, [4, 4, 4, 3]);
    // 15 bytes placed: a 2-byte object does not fit the last byte, so it goes to the start, over entry 0.
    placeAll(ring, [2], 4);
    expect(ring.get(4, 2)).toEqual(bytesOf(2, 5));
    expect(ring.get(0, 4)).toBeNull();
    expect(ring.get(1, 4)).toEqual(bytesOf(4, 2));
    // 18 bytes now: the head is at 2, and a 2-byte object ends exactly where entry 1 (at 4) starts.
    const exact = new ArrivalRing(16);
    placeAll(exact, [4, 4, 4, 2, 2]);
    expect(exact.place(5, 2)).toHaveLength(2);
    expect(exact.get(1, 4)).toEqual(bytesOf(4, 2));
    expect(exact.get(2, 4)).toEqual(bytesOf(4, 3));
    expect(exact.get(0, 4)).toBeNull();
  });

  it('calls an entry old once it is more than half a ring behind the head', () => {
    const ring = new ArrivalRing(16);
    placeAll(ring, [4, 4]);
    expect(ring.isOld(0)).toBe(false);
    placeAll(ring, [1], 2);
    // 9 bytes placed: entry 0 started 9 bytes back, more than 8; entry 1 started 5 back.
    expect(ring.isOld(0)).toBe(true);
    expect(ring.isOld(1)).toBe(false);
    // Placed again, it is new.
    ring.place(0, 4).set(bytesOf(4, 1));
    expect(ring.isOld(0)).toBe(false);
    expect(ring.get(0, 4)).toEqual(bytesOf(4, 1));
  });

  it('starts over empty once the bytes placed reach the bound less four rings, and counts again from 0', () => {
    // 100 - 4 * 16 = 36.
    const ring = new ArrivalRing(16, 100);
    placeAll(ring, [4, 4, 4, 4, 4, 4, 4, 4, 3]);
    // 35 placed: the next entry still finds the last ones.
    ring.beginEntry();
    expect(ring.get(8, 3)).toEqual(bytesOf(3, 9));
    ring.place(9, 1).set(bytesOf(1, 10));
    // 36: the next entry starts over, so none of the earlier entries is found.
    ring.beginEntry();
    expect(ring.get(9, 1)).toBeNull();
    expect(ring.get(8, 3)).toBeNull();
    ring.place(10, 4).set(bytesOf(4, 11));
    // Counting from 0 again, the next entry does not start over.
    ring.beginEntry();
    expect(ring.get(10, 4)).toEqual(bytesOf(4, 11));
  });

  it('grows its table by doubling, from 1,024 entries, and at once to an index far ahead', () => {
    const ring = new ArrivalRing(16);
    ring.place(0, 1);
    expect(table(ring).length).toBe(1024);
    ring.place(1024, 1);
    expect(table(ring).length).toBe(2048);
    ring.place(5000, 2).set(bytesOf(2, 7));
    expect(table(ring).length).toBe(5001);
    expect(ring.get(5000, 2)).toEqual(bytesOf(2, 7));
  });

  it('reserves its table for the header count, only when empty and up to TABLE_RESERVE_OBJECTS', () => {
    const ring = new ArrivalRing(16);
    ring.reserve(2048);
    const reserved = table(ring);
    expect((reserved.buffer as ArrayBuffer).resizable).toBe(true);
    placeAll(ring, [4, 4]);
    // Grown in place: the same view, over the same buffer.
    expect(table(ring)).toBe(reserved);
    // A second reserve keeps what was placed.
    ring.reserve(2048);
    expect(ring.get(1, 4)).toEqual(bytesOf(4, 2));
    expect(table(ring)).toBe(reserved);

    const largest = new ArrivalRing(16);
    largest.reserve(TABLE_RESERVE_OBJECTS);
    expect((table(largest).buffer as ArrayBuffer).resizable).toBe(true);
    const tooMany = new ArrivalRing(16);
    tooMany.reserve(TABLE_RESERVE_OBJECTS + 1);
    expect((table(tooMany).buffer as ArrayBuffer).resizable).toBe(false);
  });

  it('gives its table back when freed', () => {
    // Node 20 has no transferToFixedLength: only the reserved (resizable) table is released here; the ring's
    // plain bytes are released where a browser has it.
    const ring = new ArrivalRing(16);
    ring.reserve(2048);
    placeAll(ring, [4]);
    ring.free();
    expect(table(ring)).toHaveLength(0);
    expect(ring.get(0, 4)).toBeNull();
  });
});
