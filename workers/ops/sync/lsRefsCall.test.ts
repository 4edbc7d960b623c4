// ls-refs against a scripted fetch: which request goes out, when the answer of the one sent with the info/refs
// GET (lsRefsAhead) is used and when it is asked again, and the byte cap on either answer. No server: each
// mutant of lsRefsCall.ts costs milliseconds. Against git http-backend: test/lsRefsAhead.test.ts.
import { describe, expect, it } from 'vitest';
import { requestLines } from '../../../test/support/craftedServer.ts';
import { GitHttpClient } from '../../transport/gitHttp.ts';
import type { V2Capabilities } from '../../wire/capabilities.ts';
import { WireError } from '../../wire/errors.ts';
import { concatBytes, encodePktLine, FLUSH_PKT } from '../../wire/pktLine.ts';
import { lsRefsAhead, lsRefsCall } from './lsRefsCall.ts';

const MAIN = '1'.repeat(40);
const TAG = '2'.repeat(40);
const PEELED = '3'.repeat(40);
const OTHER = '4'.repeat(40);

function lsRefsAnswer(lines: string[]): Uint8Array {
  return concatBytes([...lines.map((l) => encodePktLine(`${l}\n`)), FLUSH_PKT]);
}

const HEAD_AND_MAIN = lsRefsAnswer([`${MAIN} HEAD symref-target:refs/heads/main`, `${MAIN} refs/heads/main`]);

/**
 * A client whose fetch answers every POST with the next of `answers` (bytes, or an Error to fail it) and
 * records each request body as text.
 */
function scripted(...answers: (Uint8Array | Error)[]) {
  const bodies: string[] = [];
  const fetch = (async (_input: RequestInfo | URL, init?: RequestInit) => {
    bodies.push(new TextDecoder().decode(init?.body as Uint8Array));
    const answer = answers.shift();
    if (answer === undefined) throw new Error('unexpected request');
    if (answer instanceof Error) throw answer;
    return new Response(answer as BodyInit, {
      status: 200,
      headers: { 'Content-Type': 'application/x-git-upload-pack-result' },
    });
  }) as typeof globalThis.fetch;
  const client = new GitHttpClient('https://git.example/r.git', {
    fetch,
    retry: { attempts: 1, baseDelayMs: 1, maxDelayMs: 1 },
  });
  return { client, bodies };
}

function caps(lsRefs: string[] | null, agent?: string): V2Capabilities {
  const commands = new Map<string, Set<string>>();
  if (lsRefs) commands.set('ls-refs', new Set(lsRefs));
  return { objectFormat: 'sha1', agent, commands, lines: [] };
}

/** The argument lines of a request: after `command=`, `agent=` and `object-format=`. */
function args(body: string): string[] {
  return requestLines(body).filter((l) => !/^(command|agent|object-format)=/.test(l));
}

describe('lsRefsCall', () => {
  it('asks for symrefs, peeled tags and the prefixes; unborn and agent only as told', async () => {
    const { client, bodies } = scripted(HEAD_AND_MAIN, HEAD_AND_MAIN);
    const refs = await lsRefsCall(client, caps(['unborn']), ['HEAD'], {
      agent: 'blobless/1',
      maxBytes: 1 << 20,
    });
    expect(refs).toEqual([
      { name: 'HEAD', oid: MAIN, symrefTarget: 'refs/heads/main' },
      { name: 'refs/heads/main', oid: MAIN },
    ]);
    expect(bodies[0]).toContain('command=ls-refs\n');
    expect(bodies[0]).toContain('agent=blobless/1\n');
    expect(args(bodies[0])).toEqual(['peel', 'symrefs', 'unborn', 'ref-prefix HEAD']);
    await lsRefsCall(client, caps([]), ['refs/heads/main', 'refs/tags/main'], { maxBytes: 1 << 20 });
    expect(bodies[1]).not.toContain('agent=');
    expect(args(bodies[1])).toEqual([
      'peel',
      'symrefs',
      'ref-prefix refs/heads/main',
      'ref-prefix refs/tags/main',
    ]);
  });

  it('reads a peeled tag', async () => {
    const { client } = scripted(lsRefsAnswer([`${TAG} refs/tags/v1 peeled:${PEELED}`]));
    expect(await lsRefsCall(client, caps([]), ['refs/tags/v1'], { maxBytes: 1 << 20 })).toEqual([
      { name: 'refs/tags/v1', oid: TAG, peeled: PEELED },
    ]);
  });

  it('refuses an answer over the byte cap, naming the limit', async () => {
    const { client } = scripted(HEAD_AND_MAIN);
    const err = await lsRefsCall(client, caps([]), ['HEAD'], { maxBytes: 64 }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(WireError);
    expect((err as WireError).message).toContain(
      "The server's ls-refs answer is larger than 64 bytes (maxLsRefsBytes)",
    );
  });
});

describe('lsRefsAhead: the ls-refs sent with the info/refs GET', () => {
  it('asks only what any v2 server takes: symrefs, peel and the prefixes, no unborn, no agent', async () => {
    const { client, bodies } = scripted(HEAD_AND_MAIN);
    const ahead = lsRefsAhead(client, ['HEAD'], 1 << 20);
    expect(await ahead.answer).toEqual([
      { name: 'HEAD', oid: MAIN, symrefTarget: 'refs/heads/main' },
      { name: 'refs/heads/main', oid: MAIN },
    ]);
    expect(bodies[0]).not.toContain('agent=');
    expect(args(bodies[0])).toEqual(['peel', 'symrefs', 'ref-prefix HEAD']);
  });

  it('is used when the request it made is the one asked now: no second ls-refs', async () => {
    const { client, bodies } = scripted(HEAD_AND_MAIN);
    const ahead = lsRefsAhead(client, ['HEAD'], 1 << 20);
    const refs = await lsRefsCall(client, caps(['unborn'], 'git/2.39'), ['HEAD'], {
      maxBytes: 1 << 20,
      ahead,
    });
    expect(refs.map((r) => r.name)).toEqual(['HEAD', 'refs/heads/main']);
    expect(bodies).toHaveLength(1);
  });

  it('is used for a listing without HEAD when HEAD was not asked, or unborn is not advertised', async () => {
    const main = lsRefsAnswer([`${MAIN} refs/heads/main`]);
    for (const [prefixes, lsRefs] of [
      [['refs/heads/main'], ['unborn']],
      [['HEAD'], []],
    ] as const) {
      const { client, bodies } = scripted(main);
      const ahead = lsRefsAhead(client, [...prefixes], 1 << 20);
      const refs = await lsRefsCall(client, caps([...lsRefs]), [...prefixes], { maxBytes: 1 << 20, ahead });
      expect(refs).toEqual([{ name: 'refs/heads/main', oid: MAIN }]);
      expect(bodies).toHaveLength(1);
    }
  });

  it('keeps the prefixes it was sent with, whatever the caller does to its array after', async () => {
    const { client } = scripted(HEAD_AND_MAIN);
    const prefixes = ['HEAD'];
    const ahead = lsRefsAhead(client, prefixes, 1 << 20);
    prefixes.push('refs/heads/main');
    expect(ahead.refPrefixes).toEqual(['HEAD']);
    await ahead.answer;
  });

  /** Each case: the speculative answer is not used, and ls-refs is asked again (its answer is OTHER). */
  const again = lsRefsAnswer([`${OTHER} refs/heads/main`]);
  const asksAgain: [string, (c: ReturnType<typeof scripted>) => Parameters<typeof lsRefsCall>][] = [
    [
      'another client (the CORS proxy fallback)',
      ({ client }) => {
        const ahead = lsRefsAhead(scripted(HEAD_AND_MAIN).client, ['refs/heads/main'], 1 << 20);
        return [client, caps([]), ['refs/heads/main'], { maxBytes: 1 << 20, ahead }];
      },
    ],
    [
      'a redirected repository',
      ({ client }) => {
        const ahead = lsRefsAhead(client, ['refs/heads/main'], 1 << 20);
        client.redirectedTo = new URL('https://git.example/moved.git');
        return [client, caps([]), ['refs/heads/main'], { maxBytes: 1 << 20, ahead }];
      },
    ],
    [
      'a server that does not advertise ls-refs',
      ({ client }) => {
        const ahead = lsRefsAhead(client, ['refs/heads/main'], 1 << 20);
        return [client, caps(null), ['refs/heads/main'], { maxBytes: 1 << 20, ahead }];
      },
    ],
    [
      'more prefixes',
      ({ client }) => {
        const ahead = lsRefsAhead(client, ['refs/heads/main'], 1 << 20);
        return [client, caps([]), ['refs/heads/main', 'refs/tags/main'], { maxBytes: 1 << 20, ahead }];
      },
    ],
    [
      'fewer prefixes',
      ({ client }) => {
        const ahead = lsRefsAhead(client, ['refs/heads/main', 'refs/tags/main'], 1 << 20);
        return [client, caps([]), ['refs/heads/main'], { maxBytes: 1 << 20, ahead }];
      },
    ],
    [
      'another prefix in second place',
      ({ client }) => {
        const ahead = lsRefsAhead(client, ['refs/heads/main', 'refs/tags/main'], 1 << 20);
        return [client, caps([]), ['refs/heads/main', 'refs/tags/other'], { maxBytes: 1 << 20, ahead }];
      },
    ],
    [
      'a request that failed before an answer',
      ({ client }) => {
        const ahead = lsRefsAhead(client, ['refs/heads/main'], 1 << 20);
        return [client, caps([]), ['refs/heads/main'], { maxBytes: 1 << 20, ahead }];
      },
    ],
    [
      'a request that failed before an answer, HEAD asked where unborn is advertised',
      ({ client }) => {
        const ahead = lsRefsAhead(client, ['HEAD'], 1 << 20);
        return [client, caps(['unborn']), ['HEAD'], { maxBytes: 1 << 20, ahead }];
      },
    ],
    [
      'an advertised unborn with HEAD asked and missing from the listing (an empty repository)',
      ({ client }) => {
        const ahead = lsRefsAhead(client, ['HEAD'], 1 << 20);
        return [client, caps(['unborn']), ['HEAD'], { maxBytes: 1 << 20, ahead }];
      },
    ],
  ];
  it.each(asksAgain)('is asked again for %s', async (name, setup) => {
    // What the speculative request is answered; another client's is answered by that client's fetch.
    const first = name.startsWith('another client')
      ? []
      : name.startsWith('a request that failed')
        ? [new TypeError('connection reset')]
        : name.startsWith('an advertised unborn')
          ? [lsRefsAnswer([`${MAIN} refs/heads/main`])]
          : [HEAD_AND_MAIN];
    const c = scripted(...first, again);
    const refs = await lsRefsCall(...setup(c));
    expect(refs).toEqual([{ name: 'refs/heads/main', oid: OTHER }]);
    const asked = c.bodies.at(-1) ?? '';
    expect(asked).toContain('command=ls-refs');
    if (name.startsWith('an advertised unborn')) expect(args(asked)).toContain('unborn');
  });

  it('an answer over the byte cap is the error of the call, not asked again', async () => {
    const { client, bodies } = scripted(HEAD_AND_MAIN, HEAD_AND_MAIN);
    const ahead = lsRefsAhead(client, ['HEAD'], 64);
    const answer = await ahead.answer;
    expect(answer).toBeInstanceOf(WireError);
    // Rejected with it: a call that resolved to the error as its listing would not do.
    await expect(lsRefsCall(client, caps([]), ['HEAD'], { maxBytes: 64, ahead })).rejects.toBe(answer);
    expect(bodies).toHaveLength(1);
  });

  it('broken framing is the error of the call, not asked again', async () => {
    const { client, bodies } = scripted(new TextEncoder().encode('zzzz'), HEAD_AND_MAIN);
    const ahead = lsRefsAhead(client, ['HEAD'], 1 << 20);
    await expect(lsRefsCall(client, caps([]), ['HEAD'], { maxBytes: 1 << 20, ahead })).rejects.toBeInstanceOf(
      WireError,
    );
    expect(bodies).toHaveLength(1);
  });
});
