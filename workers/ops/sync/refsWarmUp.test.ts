import { describe, expect, it } from 'vitest';
import { timerTicksDuring } from '../../../test/support/timerTicks.ts';
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
    expect(new Set(listed.map((r) => r.name)).size).toBe(1051);
    const branches = listed.filter((r) => r.name.startsWith('refs/heads/'));
    expect(branches).toHaveLength(50);
    expect(branches.map((b) => b.name)).toContain('refs/heads/main');
    const tags = listed.filter((r) => r.name.startsWith('refs/tags/'));
    expect(tags).toHaveLength(1000);
    // Annotated ones peeled, and lightweight ones: a planned ref of each shape.
    expect(tags.filter((t) => t.peeled && t.peeled !== t.oid)).toHaveLength(900);
    expect(tags.every((t) => /^refs\/tags\/v\d+\.\d+\.0$/.test(t.name))).toBe(true);
    // A tag points at a commit a branch holds, as release tags do.
    const tips = new Set(branches.map((b) => b.oid));
    expect(tags.every((t) => !t.peeled || tips.has(t.peeled))).toBe(true);
    const named = checkRemoteRefNames(listed, 'refs/heads/main', 'https://example.test/');
    expect(named.warnings).toEqual([]);
    expect(named.kept).toHaveLength(1051);
    const plan = planRefs(named.kept, { url: 'https://example.test/' }, true, 'https://example.test/');
    expect(plan.branch).toBe('main');
    // Distinct ids: the fetch request lists a want per ref, as a real one does.
    expect(plan.wants).toHaveLength(1050);
    expect(plan.packedRefs).toHaveLength(1050);
  });

  it('takes the whole answer through every step, as a clone of it would', async () => {
    const report = await warmUpRefs(new AbortController().signal);
    expect(report).toMatchObject({
      rounds: REF_ROUNDS,
      listed: 1051,
      // The 1,051 refs and the flush, read lent in 61-byte chunks.
      lentPackets: 1052,
      headTarget: 'refs/heads/main',
      kept: 1051,
      branch: 'main',
      wants: 1050,
      refused: 0,
    });
    // The request a clone sends: one want per ref, and every argument of a clone's fetch.
    const lines: string[] = [];
    for await (const p of readPackets(
      (async function* () {
        yield report!.request;
      })(),
    )) {
      if (p.type === 'data') lines.push(new TextDecoder().decode(p.data).trimEnd());
    }
    expect(lines.filter((l) => l.startsWith('want '))).toHaveLength(1050);
    for (const arg of [
      'command=fetch',
      'done',
      'ofs-delta',
      'no-progress',
      'include-tag',
      'filter blob:none',
    ]) {
      expect(lines).toContain(arg);
    }
    // packed-refs: the header, 50 remote-tracking branches, 1,000 tags and the 900 annotated ones' peeled lines.
    const packed = report!.packedRefs.split('\n').filter(Boolean);
    expect(packed).toHaveLength(1 + 50 + 1000 + 900);
    expect(packed.filter((l) => l.startsWith('^'))).toHaveLength(900);
    expect(packed).toContain(`${packed[1].slice(0, 40)} refs/remotes/origin/main`);
    // .promisor: HEAD, the branches and the tags, one `<oid> <name>` line each.
    const promisor = report!.promisor.split('\n').filter(Boolean);
    expect(promisor).toHaveLength(1051);
    expect(promisor.every((l) => /^[0-9a-f]{40} (HEAD|refs\/(heads|tags)\/\S+)$/.test(l))).toBe(true);
  });

  it('runs its rounds with a task between each, so that calls to the worker are answered meanwhile', async () => {
    const ticks = await timerTicksDuring(() => warmUpRefs(new AbortController().signal));
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
