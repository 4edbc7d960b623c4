import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { agentFor, CLIENT_AGENT, parseInfoRefs, supports } from './capabilities.ts';
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
    expect(thrown(() => parseInfoRefs(body))).toMatchObject({
      code: 'PROTOCOL_UNEXPECTED',
      message: expect.stringMatching(
        /^The server speaks git protocol version 3, which Blobless does not understand/,
      ),
    });
  });
});

/** Packets made of text lines (LF added), '0000' for a flush. */
const lines = (...texts: string[]) =>
  concatBytes(texts.map((text) => (text === '0000' ? FLUSH_PKT : encodePktLine(`${text}\n`))));
const A = 'a'.repeat(40);
const B = 'b'.repeat(40);

describe('parseInfoRefs, rule by rule (hand-made answers)', () => {
  function v0(body: Uint8Array) {
    const info = parseInfoRefs(body);
    if (info.version === 2) throw new Error('expected v0');
    return info;
  }
  function v2(body: Uint8Array) {
    const info = parseInfoRefs(body);
    if (info.version !== 2) throw new Error('expected v2');
    return info.capabilities;
  }

  it('wants the flush after the service line, and says which service it got', () => {
    expect(thrown(() => parseInfoRefs(lines('# service=git-upload-pack')))).toMatchObject({
      code: 'RESPONSE_TRUNCATED',
      message: expect.stringMatching(
        /^The advertisement ended where the flush packet after "# service=git-upload-pack" was expected: the response was cut short/,
      ),
    });
    expect(thrown(() => parseInfoRefs(lines('# service=git-upload-pack', 'version 2')))).toMatchObject({
      code: 'PROTOCOL_UNEXPECTED',
      message: expect.stringMatching(
        /^The server sent .*version 2.* where the flush packet after "# service=git-upload-pack"/,
      ),
    });
    expect(thrown(() => parseInfoRefs(lines('# service=git-upload-pack', '0000')))).toMatchObject({
      code: 'RESPONSE_TRUNCATED',
    });
    expect(thrown(() => parseInfoRefs(lines('# service=git-receive-pack', '0000', '0000'))).message).toBe(
      'The server advertised the service "git-receive-pack" where "git-upload-pack" was requested',
    );
    const push = parseInfoRefs(
      lines('# service=git-receive-pack', '0000', `${A} refs/heads/main\0report-status`, '0000'),
      'git-receive-pack',
    );
    expect(push).toMatchObject({ version: 0, refs: [{ name: 'refs/heads/main', oid: A }] });
  });

  it('says in words why a body is not git', () => {
    expect(thrown(() => parseInfoRefs(new Uint8Array(0))).message).toBe(
      'The URL answered with an empty body, not like a git server: check the URL',
    );
    expect(thrown(() => parseInfoRefs(ascii(`${A}\trefs/heads/main\n`))).message).toMatch(
      /server \(git http-backend, GitHub, GitLab, \.\.\.\): check the URL or the server setup$/,
    );
    const html = thrown(() => parseInfoRefs(ascii('<!DOCTYPE html><html><body>Sign in</body></html>')));
    expect(html.message).toBe(
      'The URL did not answer like a git server: its response starts with "<!DOCTYPE html><html><body>Sign in</body" ' +
        'instead of git protocol data. Check the URL, and that any proxy in between passes git traffic through',
    );
    expect(html.cause).toMatchObject({ code: 'PKT_LINE_INVALID', byteOffset: 0 });
    // Cut short in its first length: a dropped connection, not a page that is not git.
    expect(thrown(() => parseInfoRefs(ascii('00')))).toMatchObject({
      code: 'PKT_LINE_TRUNCATED',
      byteOffset: 0,
    });
  });

  it('reads capability keys and values at the first "=", and assumes sha1 when none is named', () => {
    const caps = v2(lines('version 2', 'ls-refs', 'fetch=shallow', '=odd', 'agent=a=b', '0000'));
    expect(caps.objectFormat).toBe('sha1');
    expect(caps.agent).toBe('a=b');
    expect([...(caps.commands.get('ls-refs') ?? ['missing'])]).toEqual([]);
    expect([...(caps.commands.get('') ?? [])]).toEqual(['odd']);
    expect(caps.lines).toEqual(['ls-refs', 'fetch=shallow', '=odd', 'agent=a=b']);
    expect(thrown(() => parseInfoRefs(lines('version 2', 'agent=x'))).message).toMatch(
      /^The capability advertisement ended before its final flush packet/,
    );
    expect(
      thrown(() =>
        parseInfoRefs(
          concatBytes([lines('version 2'), Uint8Array.from([0x30, 0x30, 0x30, 0x31]), lines('0000')]),
        ),
      ).message,
    ).toMatch(/in the capability advertisement, where only capability lines and a flush belong/);
  });

  it('sends our agent only to a server that sent its own', () => {
    expect(agentFor(v2(lines('version 2', 'agent=git/2.39.5', '0000')))).toBe(CLIENT_AGENT);
    expect(agentFor(v2(lines('version 2', 'fetch', '0000')))).toBeUndefined();
  });

  it('takes capabilities from the first line only, split at single or double spaces', () => {
    const info = v0(
      lines(`${A} refs/heads/main\0multi_ack  symref=HEAD:refs/heads/main`, `${B} refs/heads/x\0y`, '0000'),
    );
    expect(info.capabilities).toEqual(['multi_ack', 'symref=HEAD:refs/heads/main']);
    expect(info.refs).toEqual([
      { name: 'refs/heads/main', oid: A },
      { name: 'refs/heads/x\0y', oid: B },
    ]);
    const bare = v0(lines(`${A} refs/heads/main`, '0000'));
    expect(bare.capabilities).toEqual([]);
    expect(bare.refs).toEqual([{ name: 'refs/heads/main', oid: A }]);
  });

  it('names the ref advertisement when it is cut short or holds a delim', () => {
    expect(thrown(() => parseInfoRefs(lines(`${A} refs/heads/main`))).message).toMatch(
      /^The ref advertisement ended before its final flush packet/,
    );
    const delim = concatBytes([lines(`${A} refs/heads/main`), ascii('0001'), FLUSH_PKT]);
    expect(thrown(() => parseInfoRefs(delim)).message).toMatch(
      /in the ref advertisement, where only ref lines and a flush belong$/,
    );
  });

  it('reads symrefs only from symref= capabilities with a name before the colon', () => {
    const info = v0(
      lines(`${A} refs/heads/main\0agent=git/2:x symref=:refs/heads/y symref=HEAD:refs/heads/main`, '0000'),
    );
    expect(info.symrefs).toEqual({ HEAD: 'refs/heads/main' });
  });

  it('refuses ref lines that are not "<oid> <name>", and a peeled line not after its ref', () => {
    const message = (...texts: string[]) => {
      const error = thrown(() => parseInfoRefs(lines(...texts, '0000')));
      expect(error).toMatchObject({ code: 'PROTOCOL_UNEXPECTED' });
      return error.message;
    };
    // No id before the space: the id is what is wrong.
    expect(message(' refs/heads/main')).toMatch(
      /" refs\/heads\/main" where a line starting with an object id/,
    );
    // A first line that is all capabilities has no ref before its NUL.
    expect(message('\0multi_ack side-band-64k')).toMatch(
      /where a line of the form "<oid> <refname>" was expected$/,
    );
    expect(message(`${A}`)).toMatch(
      /^The server sent .* where a line of the form "<oid> <refname>" was expected$/,
    );
    expect(message(`${'g'.repeat(40)} refs/heads/main`)).toBe(
      `The server sent "${'g'.repeat(40)} refs/heads/main" where a line starting with an object id was expected`,
    );
    expect(message(`${A} refs/heads/main`, 'shallow xyz')).toMatch(
      /"shallow xyz" where a line starting with an object id/,
    );
    expect(message(`${A} refs/tags/v1^{}`)).toMatch(
      /where a peeled line right after the ref refs\/tags\/v1 was expected$/,
    );
    expect(message(`${A} refs/tags/v1`, `${B} refs/tags/v2^{}`)).toMatch(
      /right after the ref refs\/tags\/v2 was expected$/,
    );
  });
});
