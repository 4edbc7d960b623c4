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
