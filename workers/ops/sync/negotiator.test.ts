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
    expect(asked).not.toContain('c7');
  });
});
