import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildFetchRequest, INFINITE_DEPTH } from './fetchCommand.ts';
import { PktLineDecoder, packetText } from './pktLine.ts';
import { createGitOracle, type FixtureRepos, type GitOracle, makeFixtureRepos } from './testing/realGit.ts';

let oracle: GitOracle;
let repos: FixtureRepos;

beforeAll(() => {
  oracle = createGitOracle();
  repos = makeFixtureRepos(oracle);
});
afterAll(() => oracle.cleanup());

/** Packets as GIT_TRACE_PACKET shows them: text without LF, 0000 and 0001 for flush and delim. */
function traceForm(bytes: Uint8Array): string[] {
  const decoder = new PktLineDecoder();
  const packets = decoder.push(bytes);
  decoder.end();
  return packets.map((p) =>
    p.type === 'data' ? packetText(p) : { flush: '0000', delim: '0001', 'response-end': '0002' }[p.type],
  );
}

/** The `command=fetch` requests in a GIT_TRACE_PACKET log, each from its command line to its flush. */
function tracedFetchRequests(stderr: string): string[][] {
  const sent = stderr
    .split('\n')
    .map((line) => /packet: +(?:clone|fetch)> (.*)$/.exec(line)?.[1])
    .filter((line): line is string => line !== undefined);
  const requests: string[][] = [];
  let current: string[] | null = null;
  for (const line of sent) {
    if (line === 'command=fetch') current = [];
    if (current === null) continue;
    current.push(line);
    if (line === '0000') {
      requests.push(current);
      current = null;
    }
  }
  return requests;
}

const oid = (c: string) => c.repeat(40);
const argsAfter = (lines: string[], prefix: string) =>
  lines.filter((line) => line.startsWith(prefix)).map((line) => line.slice(prefix.length));

describe('buildFetchRequest', () => {
  it('matches git clone --filter=blob:none --depth=1, argument for argument', () => {
    const url = `file://${oracle.root}/${repos.full}`;
    const { stderr } = oracle.gitRaw(
      ['clone', '-q', '--no-local', '--filter=blob:none', '--depth=1', url, 'c1'],
      {
        env: { GIT_TRACE_PACKET: '1' },
      },
    );
    const [traced] = tracedFetchRequests(stderr);
    expect(traced).toContain('filter blob:none');
    const ours = buildFetchRequest({
      agent: argsAfter(traced, 'agent=')[0],
      objectFormat: 'sha1',
      thinPack: true,
      noProgress: true,
      includeTag: true,
      ofsDelta: true,
      deepen: 1,
      filter: 'blob:none',
      wants: argsAfter(traced, 'want '),
      done: true,
    });
    expect(traceForm(ours)).toEqual(traced);
  });

  it('matches a deepening git fetch with shallow and have lines', () => {
    const url = `file://${oracle.root}/${repos.full}`;
    const clone = join(oracle.root, 'c2');
    oracle.git(['clone', '-q', '--no-local', '--filter=blob:none', '--depth=1', url, clone]);
    // A new commit on the server, so the fetch has something to negotiate about.
    const work = join(oracle.root, 'work');
    oracle.git(['commit', '-q', '--allow-empty', '-m', 'fourth'], { cwd: work });
    oracle.git(['push', '-q', join(oracle.root, repos.full), 'main'], { cwd: work });
    const { stderr } = oracle.gitRaw(['fetch', '-q', '--depth=2', 'origin'], {
      cwd: clone,
      env: { GIT_TRACE_PACKET: '1' },
    });
    const [traced] = tracedFetchRequests(stderr);
    expect(argsAfter(traced, 'shallow ')).toHaveLength(1);
    expect(argsAfter(traced, 'have ').length).toBeGreaterThan(0);
    const ours = buildFetchRequest({
      agent: argsAfter(traced, 'agent=')[0],
      objectFormat: 'sha1',
      thinPack: true,
      noProgress: true,
      includeTag: true,
      ofsDelta: true,
      shallow: argsAfter(traced, 'shallow '),
      deepen: 2,
      filter: 'blob:none',
      wants: argsAfter(traced, 'want '),
      haves: argsAfter(traced, 'have '),
      done: traced.includes('done'),
    });
    expect(traceForm(ours)).toEqual(traced);
  });

  for (const [flag, deepen, deepenRelative] of [
    ['--deepen=1', 1, true],
    ['--unshallow', INFINITE_DEPTH, false],
  ] as const) {
    it(`matches git fetch ${flag} on a shallow clone`, () => {
      const url = `file://${oracle.root}/${repos.full}`;
      const clone = join(oracle.root, `c-${flag.slice(2)}`);
      oracle.git(['clone', '-q', '--no-local', '--filter=blob:none', '--depth=1', url, clone]);
      const { stderr } = oracle.gitRaw(['fetch', '-q', flag, 'origin'], {
        cwd: clone,
        env: { GIT_TRACE_PACKET: '1' },
      });
      const [traced] = tracedFetchRequests(stderr);
      expect(traced).toContain(`deepen ${deepen}`);
      const ours = buildFetchRequest({
        agent: argsAfter(traced, 'agent=')[0],
        objectFormat: 'sha1',
        thinPack: true,
        noProgress: true,
        includeTag: true,
        ofsDelta: true,
        shallow: argsAfter(traced, 'shallow '),
        deepen,
        deepenRelative,
        filter: 'blob:none',
        wants: argsAfter(traced, 'want '),
        haves: argsAfter(traced, 'have '),
        done: traced.includes('done'),
      });
      expect(traceForm(ours)).toEqual(traced);
    });
  }

  it('frames a minimal clone request exactly', () => {
    expect(new TextDecoder().decode(buildFetchRequest({ wants: [oid('a')] }))).toBe(
      `0012command=fetch\n00010032want ${oid('a')}\n0009done\n0000`,
    );
  });

  it('sends done by default only when there is nothing to negotiate', () => {
    expect(traceForm(buildFetchRequest({ wants: [oid('a')] }))).toContain('done');
    expect(traceForm(buildFetchRequest({ wants: [oid('a')], haves: [oid('b')] }))).not.toContain('done');
    expect(traceForm(buildFetchRequest({ wants: [oid('a')], haves: [oid('b')], done: true }))).toContain(
      'done',
    );
    expect(traceForm(buildFetchRequest({ wants: [oid('a')], done: false }))).not.toContain('done');
  });

  it('accepts sha256 object ids', () => {
    const long = 'c'.repeat(64);
    expect(traceForm(buildFetchRequest({ wants: [long], objectFormat: 'sha256' }))).toContain(`want ${long}`);
  });

  it('refuses requests it cannot frame or that make no sense', () => {
    const invalid = expect.objectContaining({ code: 'REQUEST_INVALID' }) as unknown as Error;
    expect(() => buildFetchRequest({ wants: [] })).toThrow(invalid);
    expect(() => buildFetchRequest({ wants: ['HEAD'] })).toThrow(invalid);
    expect(() => buildFetchRequest({ wants: [oid('A')] })).toThrow(invalid);
    expect(() => buildFetchRequest({ wants: [oid('a')], haves: ['123'] })).toThrow(invalid);
    expect(() => buildFetchRequest({ wants: [oid('a')], deepen: 0 })).toThrow(invalid);
    expect(() => buildFetchRequest({ wants: [oid('a')], deepen: 1.5 })).toThrow(invalid);
    expect(() => buildFetchRequest({ wants: [oid('a')], filter: '' })).toThrow(invalid);
    expect(() => buildFetchRequest({ wants: [oid('a')], deepenRelative: true })).toThrow(invalid);
    expect(() => buildFetchRequest({ wants: [oid('a')], filter: 'blob:none\nwant x' })).toThrow(invalid);
  });

  it('says in words what is wrong with a request', () => {
    const message = (opts: Parameters<typeof buildFetchRequest>[0]) => {
      try {
        buildFetchRequest(opts);
      } catch (error) {
        expect(error).toMatchObject({ code: 'REQUEST_INVALID' });
        return (error as Error).message;
      }
      throw new Error('expected a throw');
    };
    const a = oid('a');
    expect(message({ wants: [] })).toBe('A fetch request needs at least one object id to want');
    expect(message({ wants: ['HEAD'] })).toBe(
      'The wanted object "HEAD" is not a full lowercase hexadecimal object id',
    );
    expect(message({ wants: [a], haves: ['1'] })).toBe(
      'The object we have "1" is not a full lowercase hexadecimal object id',
    );
    expect(message({ wants: [a], shallow: ['x'] })).toBe(
      'The shallow commit "x" is not a full lowercase hexadecimal object id',
    );
    expect(message({ wants: [a], deepen: 0 })).toBe(
      'The depth 0 must be a whole number of commits, 1 or more',
    );
    expect(message({ wants: [a], deepenRelative: true })).toBe('deepen-relative needs a depth to deepen by');
    expect(message({ wants: [a], filter: ' \t' })).toBe('The filter-spec is empty');
    expect(message({ wants: [a], filter: 'a\0b' })).toBe(
      'The request argument "a\\u0000b" contains a line feed or NUL, which the protocol cannot carry',
    );
    expect(message({ wants: [a], agent: 'my agent' })).toBe(
      'The agent string "my agent" must be printable ASCII without spaces',
    );
  });
});
