import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RemoteError, WireError } from './errors.ts';
import { buildFetchRequest, type FetchRequestOptions } from './fetchCommand.ts';
import { type FetchEvent, type ProgressLine, ProgressParser, parseFetchResponse } from './fetchResponse.ts';
import {
  concatBytes,
  DELIM_PKT,
  encodePktLine,
  FLUSH_PKT,
  type Packet,
  PktLineDecoder,
  RESPONSE_END_PKT,
  readPackets,
} from './pktLine.ts';
import {
  asStream,
  collect,
  createGitOracle,
  type FixtureRepos,
  type GitOracle,
  makeFixtureRepos,
  splitAt,
} from './testing/realGit.ts';

let oracle: GitOracle;
let repos: FixtureRepos;

beforeAll(() => {
  oracle = createGitOracle();
  repos = makeFixtureRepos(oracle);
});
afterAll(() => oracle.cleanup());

function fetchBody(options: Omit<FetchRequestOptions, 'objectFormat'>): Uint8Array {
  return oracle.uploadPack(repos.full, buildFetchRequest({ objectFormat: 'sha1', ...options })).body;
}

async function events(body: Uint8Array, chunks: Uint8Array[] = [body]): Promise<FetchEvent[]> {
  return collect(parseFetchResponse(readPackets(asStream(chunks))));
}

function packOf(list: FetchEvent[]): Uint8Array {
  return concatBytes(list.flatMap((event) => (event.type === 'pack' ? [event.data] : [])));
}

/** Has real git index the pack; returns the object types it holds. Throws if git finds it invalid. */
function verifyPack(pack: Uint8Array, name: string): Record<string, number> {
  const path = join(oracle.root, `${name}.pack`);
  writeFileSync(path, pack);
  oracle.git(['index-pack', path]);
  const types: Record<string, number> = {};
  for (const line of oracle.git(['verify-pack', '-v', path.replace(/\.pack$/, '.idx')]).split('\n')) {
    const type = /^[0-9a-f]{40} (\w+) /.exec(line)?.[1];
    if (type) types[type] = (types[type] ?? 0) + 1;
  }
  return types;
}

/** Events as comparable values: pack data merged into one entry (chunking of pack data may differ). */
function normalise(list: FetchEvent[]): unknown[] {
  const out: unknown[] = [];
  for (const event of list) {
    if (event.type !== 'pack') out.push(event);
  }
  out.push({ pack: Array.from(packOf(list)) });
  return out;
}

function packets(...parts: (string | Uint8Array)[]): Uint8Array {
  return concatBytes(parts.map((part) => (typeof part === 'string' ? encodePktLine(part) : part)));
}

const band = (n: number, payload: string | Uint8Array) =>
  encodePktLine(
    concatBytes([
      Uint8Array.of(n),
      typeof payload === 'string' ? new TextEncoder().encode(payload) : payload,
    ]),
  );

async function failure(body: Uint8Array): Promise<Error> {
  try {
    await events(body);
  } catch (error) {
    return error as Error;
  }
  throw new Error('expected parseFetchResponse to throw');
}

describe('parseFetchResponse on real git upload-pack responses', () => {
  it('reads a blob:none partial clone with progress into a valid pack without blobs', async () => {
    const body = fetchBody({ wants: [repos.commits.third], ofsDelta: true, filter: 'blob:none' });
    const list = await events(body);
    expect(list.filter((e) => e.type !== 'pack' && e.type !== 'progress')).toEqual([]);
    const types = verifyPack(packOf(list), 'blobless');
    expect(types).toEqual({ commit: 3, tree: 4 });

    // git counts 7 objects: 3 commits and 4 trees.
    const progress = list.flatMap((e) => (e.type === 'progress' ? [e] : []));
    const texts = progress.map((e) => e.text);
    expect(texts).toContain('Enumerating objects: 7, done.');
    expect(texts).toContain('Counting objects: 100% (7/7), done.');
    expect(texts.some((text) => text.startsWith('Total 7 (delta 0)'))).toBe(true);
    expect(progress.find((e) => e.text === 'Enumerating objects: 7, done.')?.progress).toEqual({
      phase: 'Enumerating objects',
      loaded: 7,
      done: true,
    });
    expect(progress.find((e) => e.text === 'Counting objects:  14% (1/7)')?.progress).toEqual({
      phase: 'Counting objects',
      loaded: 1,
      total: 7,
      done: false,
    });
    expect(progress.find((e) => e.text.startsWith('Total'))?.progress).toEqual({
      phase: 'Total',
      loaded: 7,
      total: 7,
      done: true,
    });
  });

  it('yields the same events however the response is split in two, or byte by byte', async () => {
    const body = fetchBody({ wants: [repos.commits.third], ofsDelta: true, filter: 'blob:none' });
    const expected = normalise(await events(body));
    for (let offset = 0; offset <= body.length; offset++) {
      expect(normalise(await events(body, splitAt(body, [offset]))), `split at ${offset}`).toEqual(expected);
    }
    const bytes = Array.from({ length: body.length }, (_, i) => body.subarray(i, i + 1));
    expect(normalise(await events(body, bytes))).toEqual(expected);
  });

  it('sends no progress when asked not to', async () => {
    const body = fetchBody({ wants: [repos.commits.third], filter: 'blob:none', noProgress: true });
    const list = await events(body);
    expect(list.every((e) => e.type === 'pack')).toBe(true);
    expect(verifyPack(packOf(list), 'quiet')).toEqual({ commit: 3, tree: 4 });
  });

  it('streams a multi-packet pack as views of the packets, without copying', async () => {
    const body = fetchBody({
      wants: [repos.commits.third],
      ofsDelta: true,
      includeTag: true,
      noProgress: true,
    });
    const decoder = new PktLineDecoder();
    const all = decoder.push(body);
    decoder.end();
    // upload-pack forwards whatever it read from pack-objects' pipe, up to 65515 bytes after the band byte;
    // how full each packet is depends on pipe timing, so only the bound and the count are fixed.
    const sizes = all.flatMap((p) => (p.type === 'data' && p.data[0] === 1 ? [p.data.length - 1] : []));
    expect(sizes.length).toBeGreaterThan(4);
    expect(Math.max(...sizes)).toBeLessThanOrEqual(65515);
    expect(sizes.reduce((a, b) => a + b, 0)).toBeGreaterThan(300_000);

    async function* fromPackets(list: Packet[]): AsyncGenerator<Packet> {
      yield* list;
    }
    const list = await collect(parseFetchResponse(fromPackets(all)));
    for (const event of list) if (event.type === 'pack') expect(event.data.buffer).toBe(body.buffer);
    const types = verifyPack(packOf(list), 'full');
    // 3 commits, 4 trees (three roots and src/, shared by two), 3 blobs (README.md, src/a.txt, big.bin) and the annotated tag via include-tag.
    expect(types).toEqual({ commit: 3, tree: 4, blob: 3, tag: 1 });
  });

  it('reads shallow-info for a depth-1 fetch', async () => {
    const body = fetchBody({
      wants: [repos.commits.third],
      deepen: 1,
      filter: 'blob:none',
      noProgress: true,
    });
    const list = await events(body);
    expect(list[0]).toEqual({ type: 'shallow-info', shallow: [repos.commits.third], unshallow: [] });
    expect(verifyPack(packOf(list), 'shallow')).toEqual({ commit: 1, tree: 2 });
  });

  it('reads acknowledgments with ready, then the pack, when negotiation succeeds', async () => {
    const body = fetchBody({
      wants: [repos.commits.third],
      haves: [repos.commits.first],
      filter: 'blob:none',
      noProgress: true,
    });
    const list = await events(body);
    expect(list[0]).toEqual({
      type: 'acknowledgments',
      acks: [repos.commits.first],
      nak: false,
      ready: true,
    });
    expect(verifyPack(packOf(list), 'negotiated').commit).toBe(2);
  });

  it('stops after acknowledgments when the server is not ready', async () => {
    const body = fetchBody({ wants: [repos.commits.third], haves: ['f'.repeat(40)] });
    expect(new TextDecoder().decode(body)).toBe('0014acknowledgments\n0008NAK\n0000');
    expect(await events(body)).toEqual([{ type: 'acknowledgments', acks: [], nak: true, ready: false }]);
  });

  it('turns the ERR git sends for an unknown want into a RemoteError', async () => {
    const body = fetchBody({ wants: ['1'.repeat(40)] });
    const error = await failure(body);
    expect(error).toBeInstanceOf(RemoteError);
    expect((error as RemoteError).remoteMessage).toBe(`upload-pack: not our ref ${'1'.repeat(40)}`);
    expect(error.message).toBe(
      `The git server refused the request: upload-pack: not our ref ${'1'.repeat(40)}. Check the repository's address and your access to it, then try again.`,
    );
  });
});

describe('parseFetchResponse on crafted responses', () => {
  const oid = 'a'.repeat(40);

  it('throws the band-3 message as a RemoteError', async () => {
    const body = packets('packfile\n', band(1, 'PACK'), band(3, 'fatal: out of memory\n'), FLUSH_PKT);
    const error = await failure(body);
    expect(error).toBeInstanceOf(RemoteError);
    expect(error).toMatchObject({
      code: 'REMOTE_ERROR',
      channel: 'sideband-3',
      remoteMessage: 'fatal: out of memory',
    });
    expect(error.message).toBe(
      "The git server aborted while sending the pack: fatal: out of memory. Try again later, and tell the server's owner if it keeps failing.",
    );
  });

  it('yields pack data that arrived before a band-3 error', async () => {
    const body = packets('packfile\n', band(1, 'PACK'), band(3, 'boom'));
    const seen: FetchEvent[] = [];
    await expect(async () => {
      for await (const event of parseFetchResponse(readPackets(asStream([body])))) seen.push(event);
    }).rejects.toThrow(RemoteError);
    expect(seen).toEqual([{ type: 'pack', data: new TextEncoder().encode('PACK') }]);
  });

  it('treats an ERR packet inside the packfile section as a RemoteError', async () => {
    const error = await failure(packets('packfile\n', 'ERR pack-objects died'));
    expect(error).toMatchObject({ remoteMessage: 'pack-objects died', channel: 'err-packet' });
  });

  it('rejects an unknown sideband channel', async () => {
    const error = await failure(packets('packfile\n', band(5, 'x'), FLUSH_PKT));
    expect(error).toMatchObject({ code: 'PROTOCOL_UNEXPECTED' });
    expect(error.message).toContain('sideband channel 5');
  });

  it('skips keepalive packets that carry no pack data', async () => {
    const list = await events(packets('packfile\n', band(1, ''), band(2, ''), band(1, 'PACK'), FLUSH_PKT));
    expect(list).toEqual([{ type: 'pack', data: new TextEncoder().encode('PACK') }]);
  });

  it('reads wanted-refs and packfile-uris', async () => {
    const list = await events(
      packets(
        'wanted-refs\n',
        `${oid} refs/heads/main\n`,
        DELIM_PKT,
        'packfile-uris\n',
        `${'c'.repeat(40)} https://cdn.example.com/pack-1.pack\n`,
        DELIM_PKT,
        'packfile\n',
        FLUSH_PKT,
      ),
    );
    expect(list).toEqual([
      { type: 'wanted-refs', refs: [{ oid, name: 'refs/heads/main' }] },
      { type: 'packfile-uris', uris: [{ hash: 'c'.repeat(40), uri: 'https://cdn.example.com/pack-1.pack' }] },
    ]);
  });

  it('stops at the final flush without reading further', async () => {
    let pulledAfterFlush = false;
    async function* source(): AsyncGenerator<Packet> {
      yield { type: 'data', data: new TextEncoder().encode('packfile\n') };
      yield { type: 'flush' };
      pulledAfterFlush = true;
      yield { type: 'response-end' };
    }
    expect(await collect(parseFetchResponse(source()))).toEqual([]);
    expect(pulledAfterFlush).toBe(false);
  });

  it('rejects sections out of order, unknown sections and stray packets', async () => {
    const cases: [Uint8Array, RegExp][] = [
      [packets('packfile\n', DELIM_PKT), /inside the packfile section/],
      [
        packets('shallow-info\n', DELIM_PKT, 'acknowledgments\n', 'ready\n', DELIM_PKT),
        /after "shallow-info"/,
      ],
      [packets('bundle-uris\n', DELIM_PKT), /unknown fetch response section "bundle-uris"/],
      [packets(FLUSH_PKT), /where a fetch response section header was expected/],
      [packets('acknowledgments\n', 'ready\n', FLUSH_PKT), /ready to send a pack, then ended/],
      [packets('acknowledgments\n', 'NAK\n', DELIM_PKT, 'packfile\n'), /without saying "ready"/],
      [packets('acknowledgments\n', 'MAYBE\n', FLUSH_PKT), /"MAYBE" in the "acknowledgments" section/],
      [packets('shallow-info\n', 'shallow nothex\n', DELIM_PKT), /"shallow nothex"/],
      [packets('shallow-info\n', `shallow ${oid}\n`, FLUSH_PKT), /without sending a packfile/],
      [packets('shallow-info\n', RESPONSE_END_PKT), /inside the "shallow-info" section/],
    ];
    for (const [body, message] of cases) {
      const error = await failure(body);
      expect(error, String(message)).toBeInstanceOf(WireError);
      expect(error).toMatchObject({ code: 'PROTOCOL_UNEXPECTED' });
      expect(error.message).toMatch(message);
    }
  });

  it('reports a response cut off before its flush as truncated', async () => {
    for (const body of [
      packets('packfile\n', band(1, 'PACK')),
      packets('shallow-info\n'),
      new Uint8Array(0),
    ]) {
      expect(await failure(body)).toMatchObject({ code: 'RESPONSE_TRUNCATED' });
    }
  });

  it('parses progress split across packets, even inside a UTF-8 character', async () => {
    const text = new TextEncoder().encode('Zähle Objekte:  50% (1/2)\rZähle Objekte: 100% (2/2), fertig.\n');
    const cut = text.indexOf(0xc3) + 1; // between the two bytes of "ä"
    const body = packets(
      'packfile\n',
      band(2, text.subarray(0, cut)),
      band(2, text.subarray(cut, 30)),
      band(2, text.subarray(30)),
      band(2, 'Total 2 (delta 0), reused 0 (delta 0), pack-reused 0'),
      FLUSH_PKT,
    );
    expect(await events(body)).toEqual([
      {
        type: 'progress',
        text: 'Zähle Objekte:  50% (1/2)',
        progress: { phase: 'Zähle Objekte', loaded: 1, total: 2, done: false },
      },
      {
        type: 'progress',
        text: 'Zähle Objekte: 100% (2/2), fertig.',
        progress: { phase: 'Zähle Objekte', loaded: 2, total: 2, done: true },
      },
      // No line end before the flush: still reported, at the end.
      {
        type: 'progress',
        text: 'Total 2 (delta 0), reused 0 (delta 0), pack-reused 0',
        progress: { phase: 'Total', loaded: 2, total: 2, done: true },
      },
    ]);
  });
});

describe('ProgressParser', () => {
  const parse = (...pieces: string[]): ProgressLine[] => {
    const parser = new ProgressParser();
    return [...pieces.flatMap((piece) => parser.push(piece)), ...parser.end()];
  };

  it('reads the messages git sends', () => {
    expect(
      parse(
        'Enumerating objects: 12, done.\n',
        'Counting objects:  45% (123/270)\r',
        'Compressing objects: 100% (5/5), done.\n',
        'Total 12 (delta 2), reused 0 (delta 0), pack-reused 0\n',
      ).map((line) => line.progress),
    ).toEqual([
      { phase: 'Enumerating objects', loaded: 12, done: true },
      { phase: 'Counting objects', loaded: 123, total: 270, done: false },
      { phase: 'Compressing objects', loaded: 5, total: 5, done: true },
      { phase: 'Total', loaded: 12, total: 12, done: true },
    ]);
  });

  it('reads an update that has no total yet', () => {
    expect(parse('Enumerating objects: 7\r')[0].progress).toEqual({
      phase: 'Enumerating objects',
      loaded: 7,
      done: false,
    });
  });

  it('splits several CR updates in one piece and joins lines split across pieces', () => {
    const lines = parse(
      'Compressing objects:  33% (1/3)\rCompressing obj',
      'ects:  66% (2/3)\rCompr',
      'essing',
    );
    expect(lines.map((line) => line.text)).toEqual([
      'Compressing objects:  33% (1/3)',
      'Compressing objects:  66% (2/3)',
      'Compressing',
    ]);
    expect(lines[1].progress).toMatchObject({ loaded: 2, total: 3 });
    expect(lines[2].progress).toBeNull();
  });

  it('keeps throughput and ignores the padding git adds to overwrite a longer line', () => {
    const [line] = parse('Receiving objects:  45% (123/270), 1.20 MiB | 500.00 KiB/s   \r');
    expect(line.text).toBe('Receiving objects:  45% (123/270), 1.20 MiB | 500.00 KiB/s');
    expect(line.progress).toEqual({ phase: 'Receiving objects', loaded: 123, total: 270, done: false });
  });

  it('passes other messages through as text, skipping blank lines', () => {
    expect(parse('warning: ignoring broken ref refs/heads/x\r\n', '\n\n')).toEqual([
      { text: 'warning: ignoring broken ref refs/heads/x', progress: null },
    ]);
    expect(parse('error: 3 objects are missing\n')[0].progress).toBeNull();
  });
});

describe('parseFetchResponse: each rule at its edge, and what it says', () => {
  const oid = 'a'.repeat(40);

  it('reads unshallow lines, and refuses lines that only look like shallow-info or acknowledgments', async () => {
    const list = await events(
      packets(
        'shallow-info\n',
        `shallow ${oid}\n`,
        `unshallow ${'b'.repeat(40)}\n`,
        DELIM_PKT,
        'packfile\n',
        FLUSH_PKT,
      ),
    );
    expect(list).toEqual([{ type: 'shallow-info', shallow: [oid], unshallow: ['b'.repeat(40)] }]);
    for (const [section, line] of [
      ['shallow-info', `shallox ${oid}`],
      ['shallow-info', `unshallox ${oid}`],
      ['acknowledgments', `ACX ${oid}`],
      ['wanted-refs', `${oid}x`],
      ['packfile-uris', `${oid}x`],
    ]) {
      const error = await failure(packets(`${section}\n`, `${line}\n`, DELIM_PKT, 'packfile\n', FLUSH_PKT));
      expect([line, error.message]).toEqual([
        line,
        `The server sent ${JSON.stringify(line)} in the "${section}" section of its fetch response, which does not fit there`,
      ]);
    }
  });

  it('refuses a section sent twice, saying the order', async () => {
    const error = await failure(
      packets('acknowledgments\n', 'ready\n', DELIM_PKT, 'acknowledgments\n', 'ready\n', DELIM_PKT),
    );
    expect(error.message).toBe(
      'The server sent the "acknowledgments" section after "acknowledgments"; the protocol orders sections as ' +
        'acknowledgments, shallow-info, wanted-refs, packfile-uris, packfile',
    );
  });

  it("an ERR line where a section header belongs is the server's message", async () => {
    expect(await failure(packets('ERR no such ref'))).toMatchObject({
      remoteMessage: 'no such ref',
      channel: 'err-packet',
    });
  });

  it('a section other than acknowledgments never counts as "ready"', async () => {
    expect((await failure(packets('wanted-refs\n', `${oid} refs/heads/x\n`, FLUSH_PKT))).message).toBe(
      'The server ended its response after the "wanted-refs" section without sending a packfile',
    );
  });

  it('says whether the pack or the response before it was cut off', async () => {
    expect((await failure(packets('packfile\n', band(1, 'PACK')))).message).toBe(
      'The pack download stopped before the server finished sending it: the connection was probably cut; try again',
    );
    expect((await failure(packets('shallow-info\n'))).message).toBe(
      'The fetch response ended before the server finished it: the connection was probably cut; try again',
    );
  });
});

describe('ProgressParser at its edges', () => {
  it('skips lines of spaces only, ended or not', () => {
    const parser = new ProgressParser();
    expect(parser.push('   \r  \n')).toEqual([]);
    expect(parser.push('  ')).toEqual([]);
    expect(parser.end()).toEqual([]);
  });

  it('a last line without its end is not done, unless it says ", done."', () => {
    const parser = new ProgressParser();
    parser.push('Counting objects: 5');
    expect(parser.end()).toEqual([
      { text: 'Counting objects: 5', progress: { phase: 'Counting objects', loaded: 5, done: false } },
    ]);
    expect(new ProgressParser().push('Counting objects: 100% (5/5), done.\r')).toEqual([
      {
        text: 'Counting objects: 100% (5/5), done.',
        progress: { phase: 'Counting objects', loaded: 5, total: 5, done: true },
      },
    ]);
  });

  it('a CR-ended update is done when it ends in ", done.", after its throughput', () => {
    const [line] = new ProgressParser().push('Receiving objects: 100% (5/5), 1.00 MiB | 2.00 MiB/s, done.\r');
    expect(line.progress).toEqual({ phase: 'Receiving objects', loaded: 5, total: 5, done: true });
  });

  it('counts toward the cap only the unfinished line, across pieces', () => {
    const parser = new ProgressParser(10);
    expect(parser.push('abcdefgh\nxy')).toHaveLength(1);
    expect(parser.push('z\n')).toEqual([{ text: 'xyz', progress: null }]);
    const split = new ProgressParser(10);
    split.push('abcdef');
    let caught: unknown;
    try {
      split.push('ghijk\n');
    } catch (error) {
      caught = error;
    }
    expect(caught).toMatchObject({
      code: 'LIMIT_EXCEEDED',
      limit: 'maxProgressLineBytes',
      message:
        'The server sent more than 10 characters of progress text without a line end (maxProgressLineBytes): no ' +
        'git server does that; the server may be hostile',
    });
  });
});
