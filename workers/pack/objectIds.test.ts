import { fileURLToPath } from 'node:url';
import { type MessagePort as NodeMessagePort, Worker } from 'node:worker_threads';
import { describe, expect, it } from 'vitest';
import { PackError } from './errors.ts';
import { createWasmSha1, toHex } from './objectHash.ts';
import { RemoteObjectIds, serveObjectIds } from './objectIds.ts';
import { PackIngester } from './packIngester.ts';
import { countingPort } from './testing/countingPort.ts';
import { noise } from './testing/gitPacks.ts';
import { buildPack, objectId } from './testing/packBuilder.ts';

const enc = new TextEncoder();

/** Ids of `objects` computed over a MessageChannel, as the ingester gets them. */
async function idsOver(objects: { type: number; data: Uint8Array }[]): Promise<string[]> {
  const { port1, port2 } = new MessageChannel();
  serveObjectIds(port2, await createWasmSha1());
  const out = new Uint8Array(objects.length * 20);
  const remote = new RemoteObjectIds(port1, (entry, ids, at) =>
    out.set(ids.subarray(at, at + 20), entry * 20),
  );
  objects.forEach((o, i) => {
    remote.add(i, o.type, o.data);
  });
  await remote.settle();
  remote.close();
  port2.close();
  return objects.map((_, i) => toHex(out, i * 20, 20));
}

describe('object ids in another worker', () => {
  it("answers each object with git's id, across batches, for objects bigger than a batch too", async () => {
    const objects = [
      { type: 3, data: enc.encode('') },
      { type: 3, data: enc.encode('hello\n') },
      { type: 2, data: new Uint8Array(100) },
      // Bigger than a batch (256 KiB): sent alone, in a buffer of its own.
      { type: 3, data: new Uint8Array(300 * 1024).fill(7) },
      ...Array.from({ length: 2000 }, (_, i) => ({ type: 1, data: enc.encode(`commit ${i}\n`.repeat(20)) })),
    ];
    const names = ['', 'commit', 'tree', 'blob', 'tag'];
    expect(await idsOver(objects)).toEqual(objects.map((o) => objectId(names[o.type], o.data)));
  });

  it('holds at most 8 batches for a hasher that is behind, and hashes the rest itself', async () => {
    const { port1, port2 } = new MessageChannel();
    const held: MessageEvent[] = [];
    port2.onmessage = (event) => held.push(event);
    const blobs = Array.from({ length: 40 }, (_, i) => new Uint8Array(100 * 1024).fill(i));
    const ingester = await PackIngester.create({ objectIds: port1 });
    ingester.push(buildPack(blobs.map((data) => ({ type: 'blob' as const, data }))));
    // 4 MB of objects: 16 batches' worth, of which 8 went over before the hasher fell behind.
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(held.length).toBe(8);
    // The hasher catches up.
    const sha1 = await createWasmSha1();
    const answering = new MessageChannel();
    serveObjectIds(answering.port2, sha1);
    answering.port1.onmessage = (event) => port2.postMessage(event.data, [event.data.buffer, event.data.ids]);
    port2.onmessage = (event) => answering.port1.postMessage(event.data, [event.data.buffer]);
    for (const event of held) answering.port1.postMessage(event.data, [event.data.buffer]);
    const result = await ingester.finish();
    expect(result.objects.map((o) => o.oid)).toEqual(blobs.map((data) => objectId('blob', data)));
    answering.port1.close();
    port2.close();
  });

  it('a receive loop that never leaves its microtasks still reads the answers, and the objects keep going over', async () => {
    // The hasher on a thread of its own, as the object-id worker is in the browser.
    const thread = new Worker(
      `import('tsx/esm/api').then(({ register }) => { register(); return import(${JSON.stringify(
        fileURLToPath(new URL('./testing/objectIdThread.ts', import.meta.url)),
      )}); })`,
      { eval: true },
    );
    try {
      const { port1, port2 } = new MessageChannel();
      thread.postMessage(port2, [port2 as unknown as Transferable & NodeMessagePort]);
      await new Promise((resolve) => thread.once('message', resolve));
      const blobs = Array.from({ length: 80 }, (_, i) => noise(100 * 1024, i + 1));
      const pack = buildPack(blobs.map((data) => ({ type: 'blob' as const, data })));
      const port = countingPort(port1);
      const ingester = await PackIngester.create({ objectIds: port });
      // As a stream whose chunks are already buffered: each read resolves in a microtask. A little work per
      // chunk, as inflating is, gives the other thread time to answer.
      for (let at = 0; at < pack.length; at += 16 * 1024) {
        ingester.push(pack.subarray(at, at + 16 * 1024));
        const until = performance.now() + 1;
        while (performance.now() < until) {}
        await Promise.resolve();
        await ingester.receiveAnswers();
      }
      const result = await ingester.finish();
      expect(result.objects.map((o) => o.oid)).toEqual(blobs.map((data) => objectId('blob', data)));
      // 8 MB of objects (incompressible, so that they arrive over 500 chunks), 32 batches: all of them hashed
      // over there, not the first 8 only.
      expect(port.posted.length).toBeGreaterThanOrEqual(32);
    } finally {
      await thread.terminate();
    }
  });

  it('a hasher that fails is a PackError PACK_HASH_FAILED, not a wrong id', async () => {
    const { port1, port2 } = new MessageChannel();
    serveObjectIds(port2, {
      init() {},
      update() {
        throw new Error('out of memory');
      },
      digestInto() {},
    });
    const ingester = await PackIngester.create({ objectIds: port1 });
    ingester.push(buildPack([{ type: 'blob', data: enc.encode('x') }]));
    const error = await ingester.finish().catch((e) => e);
    port2.close();
    expect(error).toBeInstanceOf(PackError);
    expect(error.code).toBe('PACK_HASH_FAILED');
    expect(error.message).toMatch(/out of memory/);
  });

  it('a hasher that never answers is not waited for past a cancel', async () => {
    const { port1, port2 } = new MessageChannel();
    port2.onmessage = () => {}; // receives, never answers
    const controller = new AbortController();
    const ingester = await PackIngester.create({ objectIds: port1, signal: controller.signal });
    ingester.push(buildPack([{ type: 'blob', data: enc.encode('x') }]));
    const finished = ingester.finish().catch((e) => e);
    setTimeout(() => controller.abort(), 50);
    const error = await finished;
    port2.close();
    expect(error.code).toBe('ABORTED');
  });
});
