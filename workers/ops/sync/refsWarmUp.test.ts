import { describe, expect, it } from 'vitest';
import { parseLsRefsResponse } from '../../wire/lsRefs.ts';
import { type Packet, readPackets } from '../../wire/pktLine.ts';
import { planRefs } from './clone.ts';
import { REF_ROUNDS, warmUpLsRefsAnswer, warmUpRefs } from './refsWarmUp.ts';
import { checkRemoteRefNames } from './remoteRefNames.ts';

async function parsed(bytes: Uint8Array) {
  const packets: Packet[] = [];
  const body = (async function* () {
    yield bytes;
  })();
  for await (const p of readPackets(body, { maxBytes: bytes.length, limit: 'test', what: 'test' })) {
    packets.push(p);
  }
  return parseLsRefsResponse(packets);
}

describe("warming up a clone's handling of refs", () => {
  it('is an answer like a real one: HEAD to main, 50 branches, 1,000 tags (100 lightweight), names git takes', async () => {
    // A synthetic answer that a clone would refuse or skip would warm the error paths, not the clone's.
    const listed = await parsed(warmUpLsRefsAnswer());
    expect(listed).toHaveLength(1051);
    expect(listed[0]).toMatchObject({ name: 'HEAD', symrefTarget: 'refs/heads/main' });
    expect(listed.filter((r) => r.name.startsWith('refs/heads/'))).toHaveLength(50);
    const tags = listed.filter((r) => r.name.startsWith('refs/tags/'));
    expect(tags).toHaveLength(1000);
    // Annotated ones peeled, and lightweight ones: a planned ref of each shape.
    expect(tags.filter((t) => t.peeled && t.peeled !== t.oid)).toHaveLength(900);
    const named = checkRemoteRefNames(listed, 'refs/heads/main', 'https://example.test/');
    expect(named.warnings).toEqual([]);
    expect(named.kept).toHaveLength(1051);
    const plan = planRefs(named.kept, { url: 'https://example.test/' }, true, 'https://example.test/');
    expect(plan.branch).toBe('main');
    // Distinct ids: the fetch request lists a want per ref, as a real one does.
    expect(plan.wants).toHaveLength(1050);
    expect(plan.packedRefs).toHaveLength(1050);
  });

  it('runs its rounds with a task between each, so that calls to the worker are answered meanwhile', async () => {
    let ticks = 0;
    let ticking = true;
    const tick = () => {
      ticks++;
      if (ticking) setTimeout(tick, 0);
    };
    setTimeout(tick, 0);
    await warmUpRefs(new AbortController().signal);
    ticking = false;
    expect(ticks).toBeGreaterThanOrEqual(REF_ROUNDS - 1);
  });

  it('stops when an operation begins, before a round or between two', async () => {
    const before = new AbortController();
    before.abort();
    await expect(warmUpRefs(before.signal)).rejects.toMatchObject({ code: 'ABORTED' });
    const between = new AbortController();
    const warming = warmUpRefs(between.signal, 50);
    setTimeout(() => between.abort(), 0);
    await expect(warming).rejects.toMatchObject({ code: 'ABORTED' });
  });
});
