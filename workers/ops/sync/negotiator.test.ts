import { describe, expect, it } from 'vitest';
import { type NegotiatorCommit, SkippingNegotiator } from './negotiator.ts';

/** A linear history c1 ← c2 ← … ← cn, one minute apart. */
function chain(n: number, prefix = 'c', parentOfFirst?: string): Map<string, NegotiatorCommit> {
  const graph = new Map<string, NegotiatorCommit>();
  for (let i = 1; i <= n; i++) {
    const parents = i === 1 ? (parentOfFirst ? [parentOfFirst] : []) : [`${prefix}${i - 1}`];
    graph.set(`${prefix}${i}`, { parents, time: i * 60 });
  }
  return graph;
}

const reader = (graph: Map<string, NegotiatorCommit>) => async (oid: string) => graph.get(oid) ?? null;

async function drain(n: SkippingNegotiator, batch = 1000): Promise<string[]> {
  const out: string[] = [];
  for (let got = await n.next(batch); got.length > 0; got = await n.next(batch)) out.push(...got);
  return out;
}

describe('SkippingNegotiator', () => {
  it('sends the newest commits one after the other, then skips by growing gaps down to the root', async () => {
    const graph = chain(200);
    const n = new SkippingNegotiator(reader(graph), [], 4);
    await n.addTip('c200');
    const sent = await drain(n);
    expect(sent.slice(0, 4)).toEqual(['c200', 'c199', 'c198', 'c197']);
    const gaps = sent
      .slice(3)
      .map((oid, i, all) => (i === 0 ? 0 : Number(all[i - 1].slice(1)) - Number(oid.slice(1))));
    // Each gap at least as long as the one before, and growing overall.
    for (let i = 2; i < gaps.length - 1; i++) expect(gaps[i]).toBeGreaterThanOrEqual(gaps[i - 1]);
    expect(gaps.at(-2)).toBeGreaterThan(10);
    expect(sent.at(-1)).toBe('c1');
    expect(sent.length).toBeLessThan(25);
  });

  it('never sends what the server ACKed, nor anything below it', async () => {
    const graph = chain(40);
    const n = new SkippingNegotiator(reader(graph), [], 16);
    await n.addTip('c40');
    const first = await n.next(5);
    expect(first).toEqual(['c40', 'c39', 'c38', 'c37', 'c36']);
    expect(n.ack('c36')).toBe(false);
    expect(n.ack('c36')).toBe(true);
    expect(await n.next(100)).toEqual([]);
  });

  it('sends an advertised commit whatever the gap, and skips its ancestors', async () => {
    const base = chain(5, 'b');
    const local = chain(100, 'x', 'b5');
    const graph = new Map([...base, ...local]);
    for (const [oid, c] of local) graph.set(oid, { ...c, time: c.time + 10_000 });
    const n = new SkippingNegotiator(reader(graph), [], 2);
    await n.knownCommon('b5');
    await n.addTip('x100');
    const sent = await drain(n);
    expect(sent).toContain('b5');
    expect(sent.filter((s) => s.startsWith('b'))).toEqual(['b5']);
  });

  it('treats a shallow commit as a root and reads nothing beyond it', async () => {
    const graph = chain(10);
    const asked: string[] = [];
    const n = new SkippingNegotiator(
      async (oid) => {
        asked.push(oid);
        return graph.get(oid) ?? null;
      },
      ['c8'],
      16,
    );
    await n.addTip('c10');
    expect(await drain(n)).toEqual(['c10', 'c9', 'c8']);
    expect(asked).toEqual(['c10', 'c9', 'c8']);
  });
});

describe('SkippingNegotiator: the walk in detail', () => {
  it('skips 1, 2, 4, 7, 11, … commits after the consecutive stretch, each gap half again the last plus one', async () => {
    const n = new SkippingNegotiator(reader(chain(200)), [], 4);
    await n.addTip('c200');
    // The stretch's last commit had its parent queued before skipping began, so that parent comes next too.
    const expected = ['c200', 'c199', 'c198', 'c197', 'c196'];
    let at = 196;
    for (let skip = 1; at - skip - 1 > 1; skip = Math.floor((skip * 3) / 2) + 1) {
      at -= skip + 1;
      expected.push(`c${at}`);
    }
    expected.push('c1');
    expect(await drain(n)).toEqual(expected);
  });

  it('sends the newest first across lines of history, equal times in the order the tips were given', async () => {
    const graph = new Map<string, NegotiatorCommit>([
      ['a1', { parents: [], time: 100 }],
      ['a2', { parents: ['a1'], time: 300 }],
      ['b1', { parents: [], time: 200 }],
      ['b2', { parents: ['b1'], time: 400 }],
      ['t1', { parents: [], time: 500 }],
      ['t2', { parents: [], time: 500 }],
    ]);
    const n = new SkippingNegotiator(reader(graph), [], 16);
    for (const tip of ['a2', 't2', 'b2', 't1']) await n.addTip(tip);
    expect(await drain(n)).toEqual(['t2', 't1', 'b2', 'a2', 'b1', 'a1']);
  });

  it('sends a commit two refs point at once', async () => {
    const n = new SkippingNegotiator(reader(chain(3)), [], 16);
    await n.addTip('c3');
    await n.addTip('c3');
    expect(await drain(n)).toEqual(['c3', 'c2', 'c1']);
  });

  it('passes over what is not stored: a tip, an advertised commit, an ACK, and a parent (sent as a root)', async () => {
    const graph = chain(6);
    graph.delete('c3');
    const n = new SkippingNegotiator(reader(graph), [], 16);
    await n.addTip('gone');
    await n.knownCommon('gone-too');
    expect(n.ack('never-sent')).toBe(false);
    await n.addTip('c6');
    expect(await drain(n)).toEqual(['c6', 'c5', 'c4']);
  });

  it('reads nothing below an ACKed commit once every line is common', async () => {
    const graph = chain(40);
    const asked: string[] = [];
    const n = new SkippingNegotiator(
      async (oid) => {
        asked.push(oid);
        return graph.get(oid) ?? null;
      },
      [],
      16,
    );
    await n.addTip('c40');
    expect(await n.next(5)).toEqual(['c40', 'c39', 'c38', 'c37', 'c36']);
    n.ack('c38');
    expect(await n.next(100)).toEqual([]);
    // c35 was read when c36 was sent (its parent); nothing older.
    expect(asked).toEqual(['c40', 'c39', 'c38', 'c37', 'c36', 'c35']);
  });

  it('walks the other line of history down to its root after one line is ACKed', async () => {
    // Two unrelated lines, their commits interleaved in time: x at odd minutes, y at even ones.
    const graph = new Map<string, NegotiatorCommit>();
    for (let i = 1; i <= 30; i++) {
      graph.set(`x${i}`, { parents: i === 1 ? [] : [`x${i - 1}`], time: i * 120 + 60 });
      graph.set(`y${i}`, { parents: i === 1 ? [] : [`y${i - 1}`], time: i * 120 });
    }
    const n = new SkippingNegotiator(reader(graph), [], 6);
    await n.addTip('x30');
    await n.addTip('y30');
    expect(await n.next(4)).toEqual(['x30', 'y30', 'x29', 'y29']);
    n.ack('x29');
    n.ack('x30');
    const rest = await drain(n);
    expect(rest.some((oid) => oid.startsWith('x'))).toBe(false);
    expect(rest.at(-1)).toBe('y1');
  });
});

describe('SkippingNegotiator: a commit reached from two children', () => {
  /** m1 ← … ← mN, a side line s1 … sK branched off m<from> and merged into m<into> as its second parent. */
  function merged(n: number, k: number, from: number, into: number): Map<string, NegotiatorCommit> {
    const graph = chain(n, 'm');
    for (let i = 1; i <= k; i++) {
      const time = from * 60 + (i * 60 * (into - from)) / (k + 1) + 1;
      graph.set(`s${i}`, { parents: [i === 1 ? `m${from}` : `s${i - 1}`], time });
    }
    graph.get(`m${into}`)!.parents.push(`s${k}`);
    return graph;
  }

  // As git's skipping negotiator: the commit keeps the larger gap of the two, with the count left of that gap;
  // an equal gap keeps the count it had first.
  it('keeps the larger gap', async () => {
    const n = new SkippingNegotiator(reader(merged(10, 1, 6, 9)), [], 0);
    await n.addTip('m10');
    expect(await drain(n)).toEqual(['m10', 'm8', 's1', 'm4', 'm1']);
  });

  it('keeps the first count of an equal gap', async () => {
    const n = new SkippingNegotiator(reader(merged(10, 2, 5, 9)), [], 1);
    await n.addTip('m10');
    expect(await drain(n)).toEqual(['m10', 'm9', 'm7', 's1', 'm3', 'm1']);
  });
});
