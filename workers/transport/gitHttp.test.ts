import { createHash } from 'node:crypto';
import { join } from 'node:path';
import { describe, expect, inject, it } from 'vitest';
import { git } from '../../test/support/git.ts';
import { buildFetchRequest } from '../wire/fetchCommand.ts';
import { parseFetchResponse } from '../wire/fetchResponse.ts';
import { concatBytes, type Packet, readPackets } from '../wire/pktLine.ts';
import { GitHttpClient } from './gitHttp.ts';

describe('GitHttpClient.postLent', () => {
  it('reads a pack into one reused buffer: a packet kept past its chunk is detached, never other bytes', async () => {
    const repo = 'features.git';
    const head = (await git(['--git-dir', join(inject('fixturesDir'), repo), 'rev-parse', 'HEAD'])).trim();
    // No filter: a pack of a few hundred kB, many reads of the body.
    const request = buildFetchRequest({ wants: [head], done: true, ofsDelta: true, noProgress: true });
    const client = new GitHttpClient(`${inject('gitServerUrl')}/${repo}`, { protocol: 'version=2' });
    const kept: { view: Uint8Array; copy: Uint8Array }[] = [];
    const copies: Packet[] = [];
    for await (const packet of readPackets(await client.postLent('git-upload-pack', request))) {
      if (packet.type !== 'data') {
        copies.push(packet);
        continue;
      }
      const copy = packet.data.slice();
      kept.push({ view: packet.data, copy });
      copies.push({ type: 'data', data: copy });
    }
    // The memory moved on to later chunks: views into it read as empty (and throw where copied from).
    const detached = kept.filter((k) => k.view.buffer.byteLength === 0);
    expect(detached.length).toBeGreaterThan(kept.length / 2);
    expect(() => new Uint8Array(1).set(detached[0].view)).toThrow(TypeError);
    const changed = kept.filter(
      (k) => k.view.buffer.byteLength > 0 && Buffer.compare(Buffer.from(k.view), Buffer.from(k.copy)) !== 0,
    );
    expect(changed).toEqual([]);
    // What was copied in time is the pack: its trailer is the SHA-1 of the rest.
    const parts: Uint8Array[] = [];
    for await (const event of parseFetchResponse(
      (async function* () {
        yield* copies;
      })(),
    )) {
      if (event.type === 'pack') parts.push(event.data);
    }
    const pack = concatBytes(parts);
    expect(pack.length).toBeGreaterThan(200_000);
    const digest = createHash('sha1')
      .update(pack.subarray(0, pack.length - 20))
      .digest();
    expect(Buffer.from(pack.subarray(pack.length - 20)).equals(digest)).toBe(true);
  });
});
