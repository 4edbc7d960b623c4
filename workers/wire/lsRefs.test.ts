import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RemoteError, WireError } from './errors.ts';
import { buildLsRefsRequest, parseLsRefsResponse, requireAskedRefs } from './lsRefs.ts';
import {
  concatBytes,
  DELIM_PKT,
  encodePktLine,
  FLUSH_PKT,
  type Packet,
  PktLineDecoder,
  packetText,
} from './pktLine.ts';
import { createGitOracle, type FixtureRepos, type GitOracle, makeFixtureRepos } from './testing/realGit.ts';

let oracle: GitOracle;
let repos: FixtureRepos;

beforeAll(() => {
  oracle = createGitOracle();
  repos = makeFixtureRepos(oracle);
});
afterAll(() => oracle.cleanup());

function decode(bytes: Uint8Array): Packet[] {
  const decoder = new PktLineDecoder();
  const packets = decoder.push(bytes);
  decoder.end();
  return packets;
}

/** Packets as git's GIT_TRACE_PACKET shows them: text without LF, 0000 and 0001 for flush and delim. */
function traceForm(bytes: Uint8Array): string[] {
  return decode(bytes).map((p) =>
    p.type === 'data' ? packetText(p) : { flush: '0000', delim: '0001', 'response-end': '0002' }[p.type],
  );
}

const cloneOptions = {
  refPrefixes: ['HEAD', 'refs/heads/', 'refs/tags/'],
  symrefs: true,
  peel: true,
  unborn: true,
};

describe('buildLsRefsRequest', () => {
  it('frames command, capabilities, delim, arguments and flush', () => {
    const request = buildLsRefsRequest({ ...cloneOptions, agent: 'blobless/0.1', objectFormat: 'sha1' });
    expect(new TextDecoder().decode(request)).toBe(
      '0014command=ls-refs\n0017agent=blobless/0.1\n0017object-format=sha1\n0001' +
        '0009peel\n000csymrefs\n000bunborn\n0014ref-prefix HEAD\n001bref-prefix refs/heads/\n' +
        '001aref-prefix refs/tags/\n0000',
    );
  });

  it('sends what git clone sends, in the same order', () => {
    const trace = oracle.gitRaw(
      ['clone', '-q', '--bare', '--no-local', `file://${oracle.root}/${repos.full}`, 'traced.git'],
      {
        env: { GIT_TRACE_PACKET: '1' },
      },
    );
    const sent = trace.stderr
      .split('\n')
      .map((line) => /packet: +clone> (.*)$/.exec(line)?.[1])
      .filter((line): line is string => line !== undefined);
    const lsRefs = sent.slice(0, sent.indexOf('0000') + 1);
    expect(lsRefs[0]).toBe('command=ls-refs');
    const agent = lsRefs[1].slice('agent='.length);
    expect(traceForm(buildLsRefsRequest({ ...cloneOptions, agent, objectFormat: 'sha1' }))).toEqual(lsRefs);
  });

  it('leaves out what was not asked for', () => {
    expect(traceForm(buildLsRefsRequest({ refPrefixes: [] }))).toEqual(['command=ls-refs', '0001', '0000']);
  });

  it('refuses arguments that would break the framing', () => {
    expect(() => buildLsRefsRequest({ refPrefixes: ['refs/heads/\nmain'] })).toThrow(
      expect.objectContaining({ code: 'REQUEST_INVALID' }) as unknown as Error,
    );
    expect(() => buildLsRefsRequest({ refPrefixes: [], agent: 'my agent' })).toThrow(/printable ASCII/);
  });
});

describe('parseLsRefsResponse (real git http-backend)', () => {
  it('reads HEAD with its symref target, branches and peeled tags', () => {
    const { body } = oracle.uploadPack(
      repos.full,
      buildLsRefsRequest({ ...cloneOptions, objectFormat: 'sha1' }),
    );
    expect(parseLsRefsResponse(decode(body))).toEqual([
      { name: 'HEAD', oid: repos.commits.third, symrefTarget: 'refs/heads/main' },
      { name: 'refs/heads/main', oid: repos.commits.third },
      { name: 'refs/tags/light', oid: repos.commits.second },
      { name: 'refs/tags/v1.0', oid: repos.tag.oid, peeled: repos.tag.peeled },
    ]);
  });

  it('honours ref-prefix', () => {
    const { body } = oracle.uploadPack(repos.full, buildLsRefsRequest({ refPrefixes: ['refs/tags/'] }));
    expect(parseLsRefsResponse(decode(body)).map((ref) => ref.name)).toEqual([
      'refs/tags/light',
      'refs/tags/v1.0',
    ]);
  });

  it('reads an unborn HEAD in an empty repository', () => {
    const { body } = oracle.uploadPack(repos.empty, buildLsRefsRequest(cloneOptions));
    expect(new TextDecoder().decode(body)).toBe('002eunborn HEAD symref-target:refs/heads/main\n0000');
    expect(parseLsRefsResponse(decode(body))).toEqual([
      { name: 'HEAD', oid: null, unborn: true, symrefTarget: 'refs/heads/main' },
    ]);
  });

  it('reads nothing at all for an empty repository without unborn', () => {
    const { body } = oracle.uploadPack(repos.empty, buildLsRefsRequest({ ...cloneOptions, unborn: false }));
    expect(parseLsRefsResponse(decode(body))).toEqual([]);
  });
});

describe('parseLsRefsResponse on bad responses', () => {
  const oid = 'b'.repeat(40);

  it('turns ERR into a RemoteError', () => {
    const packets = decode(encodePktLine('ERR ls-refs: unexpected argument'));
    expect(() => parseLsRefsResponse(packets)).toThrow(RemoteError);
    expect(() => parseLsRefsResponse(packets)).toThrow(/ls-refs: unexpected argument/);
  });

  it('ignores attributes it does not know', () => {
    const packets = decode(concatBytes([encodePktLine(`${oid} refs/heads/x future:thing\n`), FLUSH_PKT]));
    expect(parseLsRefsResponse(packets)).toEqual([{ name: 'refs/heads/x', oid }]);
  });

  it('reports a response without its flush as truncated', () => {
    const packets = decode(encodePktLine(`${oid} refs/heads/x\n`));
    expect(() => parseLsRefsResponse(packets)).toThrow(
      expect.objectContaining({ code: 'RESPONSE_TRUNCATED' }) as unknown as Error,
    );
  });

  it('rejects lines that are not refs', () => {
    // An id with no name, or an empty one: a ref named "" would be written as the refs folder itself.
    for (const line of [
      'hello',
      `${oid.slice(1)} refs/heads/x`,
      `${oid} refs/tags/t peeled:nothex`,
      oid,
      `${oid} `,
    ]) {
      const packets = decode(concatBytes([encodePktLine(`${line}\n`), FLUSH_PKT]));
      expect(() => parseLsRefsResponse(packets), line).toThrow(
        expect.objectContaining({ code: 'PROTOCOL_UNEXPECTED' }) as unknown as Error,
      );
    }
  });

  it('accepts a response-end after the flush but nothing else', () => {
    const ok = decode(concatBytes([FLUSH_PKT, new TextEncoder().encode('0002')]));
    expect(parseLsRefsResponse(ok)).toEqual([]);
    const extra = decode(concatBytes([FLUSH_PKT, encodePktLine('more\n')]));
    expect(() => parseLsRefsResponse(extra)).toThrow(/after the end of its ls-refs response/);
  });
});

describe('requireAskedRefs', () => {
  const ref = (name: string) => ({ name, oid: 'a'.repeat(40) });

  it('keeps an answer within the prefixes asked, longer names under a prefix included', () => {
    const refs = [ref('refs/tags/v1'), ref('refs/tags/v1.1'), ref('refs/tags/v2')];
    expect(requireAskedRefs(refs, ['refs/tags/v1', 'refs/tags/v2'])).toEqual(refs);
    expect(requireAskedRefs([], ['refs/tags/v1'])).toEqual([]);
  });

  it('refuses an answer naming a ref outside them, with a typed error', () => {
    const asked = ['refs/tags/v1'];
    const err = (() => {
      try {
        requireAskedRefs([ref('refs/tags/v1'), ref('refs/heads/main'), ref('refs/tags/v0')], asked);
      } catch (e) {
        return e;
      }
    })();
    expect(err).toBeInstanceOf(WireError);
    expect((err as WireError).code).toBe('PROTOCOL_UNEXPECTED');
    expect((err as WireError).message).toContain('"refs/heads/main", "refs/tags/v0"');
  });
});

describe('parseLsRefsResponse: what each refusal says', () => {
  const oid = 'b'.repeat(40);
  const error = (...parts: Uint8Array[]): unknown => {
    try {
      parseLsRefsResponse(decode(concatBytes(parts)));
    } catch (e) {
      return e;
    }
    throw new Error('expected a refusal');
  };

  it('a line that is not a ref, a malformed peeled id', () => {
    expect(error(encodePktLine('hello\n'), FLUSH_PKT)).toMatchObject({
      code: 'PROTOCOL_UNEXPECTED',
      message: 'The server sent the ls-refs line "hello", which is not "<oid> <refname> [attributes]"',
    });
    expect(error(encodePktLine(`${oid} refs/tags/t peeled:x\n`), FLUSH_PKT)).toMatchObject({
      code: 'PROTOCOL_UNEXPECTED',
      message: `The server sent the ls-refs line "${oid} refs/tags/t peeled:x", whose peeled object id is malformed`,
    });
  });

  it('a special packet among the refs, or after the flush; no flush at all; an ERR line', () => {
    expect(error(encodePktLine(`${oid} refs/heads/x\n`), DELIM_PKT, FLUSH_PKT)).toMatchObject({
      code: 'PROTOCOL_UNEXPECTED',
      message:
        'The server sent a delimiter packet (0001) in the ls-refs response, where only ref lines and a flush belong',
    });
    expect(error(FLUSH_PKT, FLUSH_PKT)).toMatchObject({
      code: 'PROTOCOL_UNEXPECTED',
      message: 'The server sent a flush packet (0000) after the end of its ls-refs response',
    });
    expect(error(encodePktLine(`${oid} refs/heads/x\n`))).toMatchObject({
      code: 'RESPONSE_TRUNCATED',
      message:
        'The ls-refs response ended before its final flush packet: the response was cut short; try again',
    });
    expect(error(encodePktLine('ERR denied\n'), FLUSH_PKT)).toMatchObject({ channel: 'err-packet' });
  });
});
