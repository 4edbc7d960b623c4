import { describe, expect, it } from 'vitest';
import { ArrivalRing } from './arrivalRing.ts';

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
