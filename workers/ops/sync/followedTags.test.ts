import { describe, expect, it } from 'vitest';
import { PackIngester } from '../../pack/packIngester.ts';
import { buildPack, makeDelta, objectId } from '../../pack/testing/packBuilder.ts';
import { GitHttpClient } from '../../transport/gitHttp.ts';
import type { V2Capabilities } from '../../wire/capabilities.ts';
import { concatBytes, encodePktLine, FLUSH_PKT } from '../../wire/pktLine.ts';
import { confirmPackedTags, type PackedTag, tagsInPack } from './followedTags.ts';

const text = (s: string) => new TextEncoder().encode(s);
const blob = text('hello\n');
const blobId = objectId('blob', blob);
const tag = (name: string, object = blobId) =>
  text(`object ${object}\ntype blob\ntag ${name}\ntagger T <t@x> 0 +0000\n\nm\n`);

async function ingest(pack: Uint8Array) {
  const ingester = await PackIngester.create();
  ingester.push(pack);
  return ingester.finish();
}

describe('tagsInPack', () => {
  it('lists each annotated tag of the pack with the ref its header names, skipping a header git would refuse', async () => {
    const v1 = tag('v1');
    const v2 = tag('release/v2');
    const broken = text(`object ${blobId}\ntype blob\n\n`);
    const pack = await ingest(
      buildPack([
        { type: 'blob', data: blob },
        { type: 'tag', data: v1 },
        { type: 'tag', data: broken },
        { type: 'tag', data: v2 },
      ]),
    );
    expect(tagsInPack(pack)).toEqual([
      { oid: objectId('tag', v1), ref: 'refs/tags/v1' },
      { oid: objectId('tag', v2), ref: 'refs/tags/release/v2' },
    ]);
    expect(tagsInPack(await ingest(buildPack([{ type: 'blob', data: blob }])))).toEqual([]);
  });

  it('reads a tag stored as a delta of another object, and never a blob that looks like one', async () => {
    const v1 = tag('v1');
    const v3 = tag('v3');
    // v3 as v1 with its name changed: a delta against v1 named by id (REF_DELTA).
    const at = new TextDecoder().decode(v1).indexOf('tag v1') + 'tag v'.length;
    const delta = makeDelta(v1.length, [
      { copy: [0, at] },
      { insert: '3' },
      { copy: [at + 1, v1.length - at - 1] },
    ]);
    const lookalike = tag('fake');
    const pack = await ingest(
      buildPack([
        { type: 'tag', data: v1 },
        { refDelta: objectId('tag', v1), delta },
        { type: 'blob', data: lookalike },
      ]),
    );
    expect(tagsInPack(pack)).toEqual([
      { oid: objectId('tag', v1), ref: 'refs/tags/v1' },
      { oid: objectId('tag', v3), ref: 'refs/tags/v3' },
    ]);
  });
});

/** A client whose server answers every ls-refs with `lines`; records each request body. */
function lsRefsServer(lines: string[]) {
  const bodies: string[] = [];
  const fetch = (async (_url: RequestInfo | URL, init?: RequestInit) => {
    bodies.push(new TextDecoder().decode(init?.body as Uint8Array));
    const body = concatBytes([...lines.map((l) => encodePktLine(`${l}\n`)), FLUSH_PKT]);
    return new Response(body as BodyInit, {
      status: 200,
      headers: { 'Content-Type': 'application/x-git-upload-pack-result' },
    });
  }) as typeof globalThis.fetch;
  const client = new GitHttpClient('https://git.example/r.git', { fetch, protocol: 'version=2' });
  return { client, bodies };
}

const caps: V2Capabilities = { objectFormat: 'sha1', commands: new Map([['ls-refs', new Set()]]), lines: [] };
const A = 'a'.repeat(40);
const B = 'b'.repeat(40);
const C = 'c'.repeat(40);
const prefixesOf = (body: string) => [...body.matchAll(/ref-prefix (\S+)\n/g)].map((m) => m[1]);

describe('confirmPackedTags', () => {
  it("asks for exactly the packed tags' refs, sorted, and keeps only those named so", async () => {
    const { client, bodies } = lsRefsServer([
      `${A} refs/tags/v1 peeled:${C}`,
      `${B} refs/tags/v10`,
      `${A} refs/tags/a`,
      // An unborn ref of a packed tag's name holds nothing to keep.
      'unborn refs/tags/v2',
    ]);
    const packed: PackedTag[] = [
      { oid: A, ref: 'refs/tags/v1' },
      { oid: B, ref: 'refs/tags/a' },
      { oid: C, ref: 'refs/tags/v2' },
    ];
    const result = await confirmPackedTags(client, caps, packed, { maxBytes: 1 << 20 });
    expect(prefixesOf(bodies[0] ?? '')).toEqual(['refs/tags/a', 'refs/tags/v1', 'refs/tags/v2']);
    expect(result).toEqual({
      refs: [
        { name: 'refs/tags/v1', oid: A, peeled: C },
        { name: 'refs/tags/a', oid: A },
      ],
      warnings: [],
    });
  });

  it('asks nothing when every name is one git refuses, and says which it skipped', async () => {
    const { client, bodies } = lsRefsServer([]);
    const result = await confirmPackedTags(client, caps, [{ oid: A, ref: 'refs/tags/bad..name' }], {
      maxBytes: 1 << 20,
    });
    expect(bodies).toEqual([]);
    expect(result.refs).toEqual([]);
    expect(result.warnings).toEqual([
      'Skipped a remote ref whose name git would refuse: "refs/tags/bad..name" (it contains "..").',
    ]);
  });

  it('refuses an answer naming a ref it was not asked for', async () => {
    const { client } = lsRefsServer([`${A} refs/tags/v1`, `${B} refs/heads/main`]);
    await expect(
      confirmPackedTags(client, caps, [{ oid: A, ref: 'refs/tags/v1' }], { maxBytes: 1 << 20 }),
    ).rejects.toMatchObject({ code: 'PROTOCOL_UNEXPECTED' });
  });

  it('lists the whole of refs/tags/ past 1,000 tags, and keeps only the packed ones of the answer', async () => {
    const many = (n: number): PackedTag[] =>
      Array.from({ length: n }, (_, i) => ({ oid: A, ref: `refs/tags/t${String(i).padStart(4, '0')}` }));
    const at = lsRefsServer([`${A} refs/tags/t0000`]);
    await confirmPackedTags(at.client, caps, many(1000), { maxBytes: 1 << 20 });
    expect(prefixesOf(at.bodies[0] ?? '')).toHaveLength(1000);

    const past = lsRefsServer([`${A} refs/tags/t0000`, `${B} refs/tags/other`]);
    const result = await confirmPackedTags(past.client, caps, many(1001), { maxBytes: 1 << 20 });
    expect(prefixesOf(past.bodies[0] ?? '')).toEqual(['refs/tags/']);
    expect(result.refs).toEqual([{ name: 'refs/tags/t0000', oid: A }]);
  });
});
