// The listing that confirms the tags a fetch's pack brought (followedTags.ts, confirmPackedTags) is read
// under the ls-refs byte cap as every other listing: a server that answers it without end, or past the
// cap, ends the fetch in LIMIT_EXCEEDED before anything is stored. git has no such cap (its ls-refs
// answer is read whole), so no git oracle: the cap is Blobless's own (wireLimits.ts).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildPack, objectId } from '../workers/pack/testing/packBuilder.ts';
import {
  type CraftedRef,
  type CraftedRepo,
  startCraftedServer,
  tinyRepoPack,
} from './support/craftedServer.ts';
import { testEngine } from './support/engine.ts';
import { failure, settledGitDir, snapshotGitDir } from './support/repoChecks.ts';

/** Small, so that the test reads little; the branch listing of the fetch (two refs) stays far under it. */
const MAX_LS_REFS_BYTES = 64 * 1024;
const { engine, ctx } = testEngine({ limits: { maxLsRefsBytes: MAX_LS_REFS_BYTES } });

const enc = new TextEncoder();
const first = tinyRepoPack();
const who = 'A U Thor <author@example.com> 1700000001 +0000';
/** The tree of tinyRepoPack's commit (`a.txt`), which the second commit keeps. */
function firstTree(): string {
  const entry = enc.encode('100644 a.txt\0');
  const tree = new Uint8Array([...entry, ...Buffer.from(objectId('blob', first.blob), 'hex')]);
  return objectId('tree', tree);
}
const secondCommit = enc.encode(
  `tree ${firstTree()}\nparent ${first.commit}\nauthor ${who}\ncommitter ${who}\n\nsecond\n`,
);
const second = objectId('commit', secondCommit);
const tagObject = enc.encode(`object ${second}\ntype commit\ntag v2\ntagger ${who}\n\nRelease 2\n`);
const tag = objectId('tag', tagObject);

/** Refs under the one asked for (`refs/tags/v2-000000`…), so only their size is wrong: past the cap. */
function oversizedTagListing(): CraftedRef[] {
  const lines: CraftedRef[] = [{ name: 'refs/tags/v2', oid: tag, peeled: second }];
  for (let i = 0; lines.length * 100 < 2 * MAX_LS_REFS_BYTES; i++) {
    lines.push({ name: `refs/tags/v2-${String(i).padStart(6, '0')}`, oid: tag, peeled: second });
  }
  return lines;
}

const repo: CraftedRepo = {
  refs: [
    { name: 'HEAD', oid: first.commit, symrefTarget: 'refs/heads/main' },
    { name: 'refs/heads/main', oid: first.commit },
  ],
  pack: first.pack,
};
let server: Awaited<ReturnType<typeof startCraftedServer>>;

beforeAll(async () => {
  server = await startCraftedServer({ 'tags.git': repo });
});
afterAll(async () => {
  await server.close();
  await engine.close();
});

describe('the listing that confirms followed tags', () => {
  it('past maxLsRefsBytes ends the fetch in LIMIT_EXCEEDED, refs and packs as before; under it, the tag is kept', async () => {
    const url = `${server.url}/tags.git`;
    const { repoId } = await engine.clone({ url, tags: false });
    // The server moves on: a second commit and an annotated tag on it, which the fetch's pack brings.
    repo.refs = [
      { name: 'HEAD', oid: second, symrefTarget: 'refs/heads/main' },
      { name: 'refs/heads/main', oid: second },
      { name: 'refs/tags/v2', oid: tag, peeled: second },
    ];
    repo.pack = buildPack([
      { type: 'commit', data: secondCommit },
      { type: 'tag', data: tagObject },
    ]);
    repo.tagListing = oversizedTagListing();
    const before = await settledGitDir(ctx, repoId);
    const record = await ctx.store.registry.get(repoId);
    server.requests.length = 0;

    const err = await failure(engine.repo(repoId).fetch());
    expect(err.code).toBe('LIMIT_EXCEEDED');
    expect(err.message).toContain(
      `ls-refs answer is larger than ${MAX_LS_REFS_BYTES} bytes (maxLsRefsBytes)`,
    );
    // It was the confirming listing that was refused: after the fetch, asking for the packed tag alone.
    const last = server.requests.at(-1)?.body ?? '';
    expect(last).toContain('command=ls-refs');
    expect(last).toContain('ref-prefix refs/tags/v2\n');
    expect(server.requests.some((r) => r.body.includes('command=fetch'))).toBe(true);
    expect(await snapshotGitDir(ctx, repoId)).toEqual(before);
    expect(await ctx.store.registry.get(repoId)).toEqual(record);

    // The same answer under the cap: the fetch stores the commit and the tag (the setup above is sound).
    repo.tagListing = [{ name: 'refs/tags/v2', oid: tag, peeled: second }];
    const fetched = await engine.repo(repoId).fetch();
    expect(fetched.updated.map((u) => `${u.kind} ${u.name}`).sort()).toEqual([
      'fast-forward refs/remotes/origin/main',
      'new refs/tags/v2',
    ]);
  });
});
