import { describe, expect, it } from 'vitest';
import { ZERO_OID } from '../model/objectId.ts';
import { RemoteError, WireError } from './errors.ts';
import { concatBytes, encodePktLine, FLUSH_PKT, type Packet, PktLineDecoder } from './pktLine.ts';
import { buildReceivePackRequest, parseReportStatus } from './receivePack.ts';

const A = 'a'.repeat(40);
const B = 'b'.repeat(40);

async function* packetsOf(bytes: Uint8Array): AsyncGenerator<Packet> {
  const decoder = new PktLineDecoder();
  yield* decoder.push(bytes);
  decoder.end();
}

/** A report as receive-pack writes it, wrapped in sideband 1 in pieces of `chunk` bytes. */
function sideband(report: Uint8Array, chunk: number, extra: Uint8Array[] = []): Uint8Array {
  const parts: Uint8Array[] = [...extra];
  for (let i = 0; i < report.length; i += chunk) {
    parts.push(encodePktLine(concatBytes([Uint8Array.of(1), report.subarray(i, i + chunk)])));
  }
  parts.push(FLUSH_PKT);
  return concatBytes(parts);
}

const report = (...lines: string[]) => concatBytes([...lines.map((l) => encodePktLine(`${l}\n`)), FLUSH_PKT]);

describe('buildReceivePackRequest', () => {
  it('puts the capabilities behind a NUL on the first command, then a flush, then the pack', () => {
    const pack = new TextEncoder().encode('PACK...');
    const body = new TextDecoder().decode(
      buildReceivePackRequest(
        [{ oldOid: A, newOid: B, name: 'refs/heads/main' }],
        ['report-status', 'side-band-64k'],
        pack,
      ),
    );
    expect(body).toBe(`0081${A} ${B} refs/heads/main\0report-status side-band-64k0000PACK...`);
  });

  it('sends no pack for deletes only, and refuses bad input', () => {
    const del = buildReceivePackRequest([{ oldOid: A, newOid: ZERO_OID, name: 'refs/heads/x' }], [], null);
    expect(new TextDecoder().decode(del).endsWith('0000')).toBe(true);
    expect(() => buildReceivePackRequest([{ oldOid: A, newOid: B, name: 'refs/heads/x' }], [], null)).toThrow(
      WireError,
    );
    expect(() =>
      buildReceivePackRequest([{ oldOid: 'xyz', newOid: B, name: 'refs/heads/x' }], [], null),
    ).toThrow(/object id/);
    expect(() => buildReceivePackRequest([{ oldOid: A, newOid: B, name: 'main' }], [], null)).toThrow(
      /ref name/,
    );
  });
});

describe('buildReceivePackRequest, rule by rule', () => {
  const pack = new TextEncoder().encode('PACK');
  const build = (updates: { oldOid: string; newOid: string; name: string }[], caps: string[]) =>
    new TextDecoder().decode(buildReceivePackRequest(updates, caps, pack));

  it('puts the capabilities on the first command only, and no NUL when there are none', () => {
    const two = [
      { oldOid: A, newOid: B, name: 'refs/heads/main' },
      { oldOid: ZERO_OID, newOid: A, name: 'refs/heads/new' },
    ];
    expect(build(two, ['report-status'])).toBe(
      `0073${A} ${B} refs/heads/main\0report-status0064${ZERO_OID} ${A} refs/heads/new0000PACK`,
    );
    expect(build(two, [])).toBe(`0065${A} ${B} refs/heads/main0064${ZERO_OID} ${A} refs/heads/new0000PACK`);
  });

  it('wants a pack unless every update deletes, and says why it refuses', () => {
    const message = (run: () => unknown) => {
      try {
        run();
      } catch (error) {
        expect(error).toMatchObject({ code: 'REQUEST_INVALID' });
        return (error as Error).message;
      }
      throw new Error('expected a throw');
    };
    const mixed = [
      { oldOid: A, newOid: ZERO_OID, name: 'refs/heads/old' },
      { oldOid: ZERO_OID, newOid: B, name: 'refs/heads/new' },
    ];
    expect(message(() => buildReceivePackRequest(mixed, [], null))).toBe(
      'A push that creates or moves a ref needs a pack',
    );
    expect(message(() => buildReceivePackRequest([], [], pack))).toBe('A push needs at least one ref update');
    expect(
      message(() => buildReceivePackRequest([{ oldOid: A, newOid: 'B', name: 'refs/x' }], [], pack)),
    ).toBe('"B" is not an object id');
    expect(
      message(() => buildReceivePackRequest([{ oldOid: A, newOid: B, name: 'refs/a b' }], [], pack)),
    ).toBe('"refs/a b" is not a ref name a push can update');
  });
});

describe('parseReportStatus, rule by rule', () => {
  async function* from(...packets: Packet[]): AsyncGenerator<Packet> {
    yield* packets;
  }
  const data = (text: string): Packet => ({ type: 'data', data: new TextEncoder().encode(text) });
  const band = (n: number, payload: Uint8Array): Packet => ({
    type: 'data',
    data: concatBytes([Uint8Array.of(n), payload]),
  });
  const failure = async (promise: Promise<unknown>) => {
    try {
      await promise;
    } catch (error) {
      return error as WireError | RemoteError;
    }
    throw new Error('expected a rejection');
  };

  it('steps over empty and non-data packets, in the sideband and in the report', async () => {
    const inner = concatBytes([
      encodePktLine('unpack ok\n'),
      Uint8Array.from([0x30, 0x30, 0x30, 0x31]),
      encodePktLine('ok refs/heads/main\n'),
      FLUSH_PKT,
    ]);
    const parsed = await parseReportStatus(
      from({ type: 'data', data: new Uint8Array(0) }, { type: 'delim' }, band(1, inner), { type: 'flush' }),
      true,
    );
    expect(parsed).toEqual({
      unpack: { ok: true },
      refs: [{ name: 'refs/heads/main', ok: true }],
      messages: '',
    });
  });

  it('is cut short without the sideband flush, or without the report flush', async () => {
    const whole = report('unpack ok', 'ok refs/heads/main');
    const noOuterFlush = await failure(parseReportStatus(from(band(1, whole)), true));
    expect(noOuterFlush).toMatchObject({ code: 'RESPONSE_TRUNCATED' });
    expect(noOuterFlush.message).toBe(
      'The server stopped before reporting the push result; the push may or may not have landed. Reload the remote branch to see.',
    );
    const noFlush = await failure(
      parseReportStatus(from(data('unpack ok\n'), data('ok refs/heads/main\n')), false),
    );
    expect(noFlush).toMatchObject({ code: 'RESPONSE_TRUNCATED' });
  });

  it("raises the server's ERR line and band 3 message as RemoteErrors, and an unknown band as a protocol error", async () => {
    const err = await failure(parseReportStatus(from(data('ERR hook declined\n'), { type: 'flush' }), false));
    expect(err).toMatchObject({
      code: 'REMOTE_ERROR',
      remoteMessage: 'hook declined',
      channel: 'err-packet',
    });
    const fatal = await failure(
      parseReportStatus(from(band(3, new TextEncoder().encode('disk full'))), true),
    );
    expect(fatal).toMatchObject({ remoteMessage: 'disk full', channel: 'sideband-3' });
    const odd = await failure(parseReportStatus(from(band(4, new Uint8Array(1))), true));
    expect(odd).toMatchObject({
      code: 'PROTOCOL_UNEXPECTED',
      message: 'The server sent a packet on sideband channel 4',
    });
  });

  it('refuses a report that does not start with unpack, or has a line neither ok nor ng', async () => {
    const empty = await failure(parseReportStatus(packetsOf(report()), false));
    expect(empty.message).toBe('The server\'s push report starts with "", not "unpack"');
    const other = await failure(
      parseReportStatus(packetsOf(report('unpack ok', 'maybe refs/heads/main')), false),
    );
    expect(other).toMatchObject({
      code: 'PROTOCOL_UNEXPECTED',
      message: 'Unexpected line in the server\'s push report: "maybe refs/heads/main"',
    });
  });

  it('gives an ng line without a reason the reason "rejected"', async () => {
    const parsed = await parseReportStatus(packetsOf(report('unpack ok', 'ng refs/heads/main')), false);
    expect(parsed.refs).toEqual([{ name: 'refs/heads/main', ok: false, reason: 'rejected' }]);
  });

  it('splits an ng line at its first space even when the name before it is empty, as send-pack does', async () => {
    // git's send-pack.c receive_status: `msg = strchr(refname, ' ')`, then `*msg++ = '\0'`: a space
    // right after "ng " ends an empty name, and all after it is the reason, even an empty one.
    const parsed = await parseReportStatus(
      packetsOf(report('unpack ok', 'ng  hook declined', 'ng refs/heads/dev ')),
      false,
    );
    expect(parsed.refs).toEqual([
      { name: '', ok: false, reason: 'hook declined' },
      { name: 'refs/heads/dev', ok: false, reason: '' },
    ]);
  });
});

describe('parseReportStatus', () => {
  it('reads ok and ng lines from sideband 1 split at any byte, and keeps sideband 2 messages', async () => {
    const inner = report('unpack ok', 'ok refs/heads/main', 'ng refs/heads/dev non-fast-forward');
    for (const chunk of [1, 3, 7, inner.length]) {
      const progress = encodePktLine(
        concatBytes([Uint8Array.of(2), new TextEncoder().encode('hook says hi\n')]),
      );
      const parsed = await parseReportStatus(packetsOf(sideband(inner, chunk, [progress])), true);
      expect(parsed).toEqual({
        unpack: { ok: true },
        refs: [
          { name: 'refs/heads/main', ok: true },
          { name: 'refs/heads/dev', ok: false, reason: 'non-fast-forward' },
        ],
        messages: 'hook says hi\n',
      });
    }
  });

  it('reads a report without sideband, and an unpack failure', async () => {
    const parsed = await parseReportStatus(
      packetsOf(report('unpack index-pack failed', 'ng refs/heads/main unpacker error')),
      false,
    );
    expect(parsed.unpack).toEqual({ ok: false, reason: 'index-pack failed' });
    expect(parsed.refs[0]).toEqual({ name: 'refs/heads/main', ok: false, reason: 'unpacker error' });
  });

  it('throws for band 3, a truncated report and a report that is not one', async () => {
    const fatal = concatBytes([
      encodePktLine(concatBytes([Uint8Array.of(3), new TextEncoder().encode('disk full')])),
      FLUSH_PKT,
    ]);
    await expect(parseReportStatus(packetsOf(fatal), true)).rejects.toBeInstanceOf(RemoteError);
    const cut = encodePktLine(concatBytes([Uint8Array.of(1), encodePktLine('unpack ok\n')]));
    await expect(parseReportStatus(packetsOf(cut), true)).rejects.toMatchObject({
      code: 'RESPONSE_TRUNCATED',
    });
    await expect(parseReportStatus(packetsOf(report('hello')), false)).rejects.toMatchObject({
      code: 'PROTOCOL_UNEXPECTED',
    });
  });
});
