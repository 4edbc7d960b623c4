import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseInfoRefs, supports } from './capabilities.ts';
import { RemoteError, WireError } from './errors.ts';
import { concatBytes, encodePktLine, FLUSH_PKT } from './pktLine.ts';
import { createGitOracle, type FixtureRepos, type GitOracle, makeFixtureRepos } from './testing/realGit.ts';

const ascii = (text: string) => new TextEncoder().encode(text);
const SERVICE_PREAMBLE = concatBytes([encodePktLine('# service=git-upload-pack\n'), FLUSH_PKT]);

let oracle: GitOracle;
let repos: FixtureRepos;
let gitVersion: string;

beforeAll(() => {
  oracle = createGitOracle();
  repos = makeFixtureRepos(oracle);
  gitVersion = oracle.git(['version']).trim().replace('git version ', '');
});
afterAll(() => oracle.cleanup());

function thrown(fn: () => unknown): Error {
  try {
    fn();
  } catch (error) {
    return error as Error;
  }
  throw new Error('expected a throw');
}

describe('parseInfoRefs on protocol v2 (real git http-backend)', () => {
  it('reads the capability advertisement git sends', () => {
    const { headers, body } = oracle.infoRefs(repos.full, 'version=2');
    expect(headers).toContain('Content-Type: application/x-git-upload-pack-advertisement');
    const info = parseInfoRefs(body);
    if (info.version !== 2) throw new Error(`expected v2, got v${info.version}`);
    const caps = info.capabilities;
    expect(caps.agent).toBe(`git/${gitVersion}`);
    expect(caps.objectFormat).toBe('sha1');
    expect(caps.lines[0]).toBe(`agent=git/${gitVersion}`);
    expect(caps.commands.get('ls-refs')).toBeDefined();
    expect(supports(caps, 'fetch')).toBe(true);
    expect(supports(caps, 'fetch', 'filter')).toBe(true); // uploadpack.allowFilter
    expect(supports(caps, 'fetch', 'shallow')).toBe(true);
    expect(supports(caps, 'fetch', 'no-such-feature')).toBe(false);
    expect(supports(caps, 'server-option')).toBe(true);
    expect(supports(caps, 'push')).toBe(false);
  });

  it('accepts the "# service" preamble that GitHub puts before "version 2"', () => {
    // git http-backend omits the preamble in v2; GitHub and others send it as gitprotocol-http describes.
    const { body } = oracle.infoRefs(repos.full, 'version=2');
    expect(new TextDecoder().decode(body.subarray(0, 14))).toBe('000eversion 2\n');
    const withPreamble = parseInfoRefs(concatBytes([SERVICE_PREAMBLE, body]));
    expect(withPreamble).toEqual(parseInfoRefs(body));
  });

  it('does not advertise filter unless the server allows it', () => {
    oracle.git(['init', '-q', '--bare', 'nofilter.git']);
    const info = parseInfoRefs(oracle.infoRefs('nofilter.git', 'version=2').body);
    if (info.version !== 2) throw new Error('expected v2');
    expect(supports(info.capabilities, 'fetch')).toBe(true);
    expect(supports(info.capabilities, 'fetch', 'filter')).toBe(false);
  });

  it('reads object-format and unknown keys', () => {
    const body = concatBytes([
      encodePktLine('version 2\n'),
      encodePktLine('agent=custom/1.0\n'),
      encodePktLine('fetch=shallow filter  packfile-uris\n'),
      encodePktLine('object-format=sha256\n'),
      encodePktLine('some-future-thing=a b\n'),
      FLUSH_PKT,
    ]);
    const info = parseInfoRefs(body);
    if (info.version !== 2) throw new Error('expected v2');
    expect(info.capabilities.objectFormat).toBe('sha256');
    expect([...(info.capabilities.commands.get('fetch') ?? [])]).toEqual([
      'shallow',
      'filter',
      'packfile-uris',
    ]);
    expect(supports(info.capabilities, 'some-future-thing', 'b')).toBe(true);
  });

  it('reports a capability list cut short', () => {
    const body = concatBytes([encodePktLine('version 2\n'), encodePktLine('agent=x\n')]);
    expect(thrown(() => parseInfoRefs(body))).toMatchObject({ code: 'RESPONSE_TRUNCATED' });
  });
});

describe('parseInfoRefs on protocol v0 and v1 (real git http-backend)', () => {
  it('reads refs, peeled tags, capabilities and the HEAD symref (v0)', () => {
    const info = parseInfoRefs(oracle.infoRefs(repos.full).body);
    if (info.version === 2) throw new Error('expected v0');
    expect(info.version).toBe(0);
    expect(info.refs).toEqual([
      { name: 'HEAD', oid: repos.commits.third },
      { name: 'refs/heads/main', oid: repos.commits.third },
      { name: 'refs/tags/light', oid: repos.commits.second },
      { name: 'refs/tags/v1.0', oid: repos.tag.oid, peeled: repos.tag.peeled },
    ]);
    expect(info.symrefs).toEqual({ HEAD: 'refs/heads/main' });
    expect(info.capabilities).toContain('side-band-64k');
    expect(info.capabilities).toContain('filter');
    expect(info.capabilities).toContain(`agent=git/${gitVersion}`);
    expect(info.shallow).toEqual([]);
  });

  it('agrees with git ls-remote', () => {
    const info = parseInfoRefs(oracle.infoRefs(repos.full).body);
    if (info.version === 2) throw new Error('expected v0');
    const lsRemote = oracle
      .git(['ls-remote', repos.full])
      .trim()
      .split('\n')
      .map((line) => line.split('\t'));
    const ours = info.refs.flatMap((ref) => [
      [ref.oid, ref.name],
      ...(ref.peeled ? [[ref.peeled, `${ref.name}^{}`]] : []),
    ]);
    expect(ours).toEqual(lsRemote);
  });

  it('reads "version 1" after the service preamble', () => {
    const { body } = oracle.infoRefs(repos.full, 'version=1');
    const info = parseInfoRefs(body);
    expect(info.version).toBe(1);
    if (info.version === 2) throw new Error('expected v1');
    expect(info.refs.map((ref) => ref.name)).toContain('refs/heads/main');
  });

  it('reads an empty repository, which git 2.39 advertises as a bare flush', () => {
    const { body } = oracle.infoRefs(repos.empty);
    const info = parseInfoRefs(body);
    if (info.version === 2) throw new Error('expected v0');
    expect(info.refs).toEqual([]);
    expect(info.symrefs).toEqual({});
  });

  it('reads the empty-repository form with capabilities^{} (git 2.41 and later)', () => {
    const zero = '0'.repeat(40);
    const body = concatBytes([
      SERVICE_PREAMBLE,
      encodePktLine(`${zero} capabilities^{}\0multi_ack symref=HEAD:refs/heads/trunk object-format=sha1\n`),
      FLUSH_PKT,
    ]);
    const info = parseInfoRefs(body);
    if (info.version === 2) throw new Error('expected v0');
    expect(info.refs).toEqual([]);
    expect(info.capabilities).toEqual(['multi_ack', 'symref=HEAD:refs/heads/trunk', 'object-format=sha1']);
    expect(info.symrefs).toEqual({ HEAD: 'refs/heads/trunk' });
  });

  it('reads shallow lines from a shallow server', () => {
    const oid = 'a'.repeat(40);
    const body = concatBytes([
      SERVICE_PREAMBLE,
      encodePktLine(`${oid} refs/heads/main\0shallow\n`),
      encodePktLine(`shallow ${oid}\n`),
      FLUSH_PKT,
    ]);
    const info = parseInfoRefs(body);
    if (info.version === 2) throw new Error('expected v0');
    expect(info.shallow).toEqual([oid]);
    expect(info.refs).toEqual([{ name: 'refs/heads/main', oid }]);
  });
});

describe('parseInfoRefs on things that are not git', () => {
  it('says an HTML page is not a git server', () => {
    const error = thrown(() => parseInfoRefs(ascii('<!DOCTYPE html><html><body>Sign in</body></html>')));
    expect(error).toBeInstanceOf(WireError);
    expect(error).toMatchObject({ code: 'NOT_GIT' });
    expect(error.message).toContain('did not answer like a git server');
    expect(error.message).toContain('<!DOCTYPE html>');
  });

  it('says so for a plain-text error and an empty body', () => {
    expect(thrown(() => parseInfoRefs(ascii('404 page not found\n')))).toMatchObject({ code: 'NOT_GIT' });
    expect(thrown(() => parseInfoRefs(new Uint8Array(0)))).toMatchObject({ code: 'NOT_GIT' });
  });

  it('recognises a dumb HTTP server', () => {
    const dumb = ascii(`${'95dcfa3633004da0049d3d0fa03f80589cbcaf31'}\trefs/heads/maint\n`);
    const error = thrown(() => parseInfoRefs(dumb));
    expect(error).toMatchObject({ code: 'NOT_GIT' });
    expect(error.message).toContain('"dumb" HTTP git server');
  });

  it('rejects an advertisement for another service', () => {
    const body = concatBytes([encodePktLine('# service=git-receive-pack\n'), FLUSH_PKT, FLUSH_PKT]);
    expect(thrown(() => parseInfoRefs(body))).toMatchObject({ code: 'PROTOCOL_UNEXPECTED' });
  });

  it('turns an ERR packet into a RemoteError', () => {
    const body = concatBytes([
      SERVICE_PREAMBLE,
      encodePktLine('ERR access denied or repository not exported'),
    ]);
    const error = thrown(() => parseInfoRefs(body));
    expect(error).toBeInstanceOf(RemoteError);
    expect((error as RemoteError).remoteMessage).toBe('access denied or repository not exported');
  });

  it('reports framing errors past the first bytes as pkt-line errors, not NOT_GIT', () => {
    const body = concatBytes([SERVICE_PREAMBLE, ascii('0003')]);
    expect(thrown(() => parseInfoRefs(body))).toMatchObject({ code: 'PKT_LINE_INVALID', byteOffset: 34 });
  });

  it('rejects a protocol version it does not know', () => {
    const body = concatBytes([encodePktLine('version 3\n'), FLUSH_PKT]);
    expect(thrown(() => parseInfoRefs(body)).message).toContain('version 3');
  });
});
