import { describe, expect, it } from 'vitest';
import { CommitQueue, DateQueue } from './commitQueue.ts';

describe('DateQueue: git prio_queue order', () => {
  it('pops the most recent first, ties in the order they were pushed', () => {
    const q = new DateQueue<string>();
    q.push('old', 1);
    q.push('tie-a', 5);
    q.push('new', 9);
    q.push('tie-b', 5);
    q.push('tie-c', 5);
    const out: string[] = [];
    for (let s = q.pop(); s !== undefined; s = q.pop()) out.push(s);
    expect(out).toEqual(['new', 'tie-a', 'tie-b', 'tie-c', 'old']);
    expect(q.size).toBe(0);
  });

  it('finds a queued item, and forgets one once popped', () => {
    const q = new DateQueue<{ id: number }>();
    q.push({ id: 1 }, 1);
    q.push({ id: 2 }, 2);
    expect(q.find((x) => x.id === 1)).toEqual({ id: 1 });
    q.pop();
    expect(q.find((x) => x.id === 2)).toBeUndefined();
  });
});

describe('CommitQueue', () => {
  const dates: Record<string, number> = { a: 3, b: 2, c: 2, d: 1 };
  const read = async (oid: string) => ({ committer: { timestamp: dates[oid] } });

  it('lets each commit in once and keeps the skipped ones out', async () => {
    const reads: string[] = [];
    const q = new CommitQueue(
      async (oid) => {
        reads.push(oid);
        return read(oid);
      },
      new Set(['d']),
    );
    for (const oid of ['c', 'a', 'b', 'a', 'd', 'c']) await q.push(oid);
    expect(reads).toEqual(['c', 'a', 'b']);
    expect([q.pop()?.oid, q.pop()?.oid, q.pop()?.oid, q.pop()]).toEqual(['a', 'c', 'b', undefined]);
    await q.push('a');
    expect(q.size).toBe(0);
  });

  it('needs no skip set', async () => {
    const q = new CommitQueue(read);
    for (const oid of ['d', 'b', 'a']) await q.push(oid);
    expect([q.pop()?.oid, q.pop()?.oid, q.pop()?.oid]).toEqual(['a', 'b', 'd']);
  });
});
