import { afterAll, afterEach, beforeAll, describe, expect, inject, it } from 'vitest';
import type { CloneProgress } from '../workers/ops/sync/cloneTypes.ts';
import { TransportError } from '../workers/transport/errors.ts';
import { GitHttpClient } from '../workers/transport/gitHttp.ts';
import { testEngine } from './support/engine.ts';
import { type Relay, startRelay } from './support/relay.ts';
import { failure } from './support/repoChecks.ts';

const { engine } = testEngine();

const serverUrl = inject('gitServerUrl');

describe('retry policy', () => {
  let relay: Relay;
  beforeAll(async () => {
    relay = await startRelay(serverUrl, { kind: 'fault', fault: { type: 'reset' }, on: 'any', times: 0 });
  });
  afterAll(() => relay.close());
  afterEach(async () => {
    for (const r of await engine.listRepos()) await engine.repo(r.id).delete();
  });

  it('Cancel ends the wait before a retry at once, and nothing is stored', async () => {
    const { engine } = testEngine({ retry: { baseDelayMs: 60_000, maxDelayMs: 60_000 } });
    const restore = () => void engine.close();
    try {
      relay.setMode({ kind: 'fault', fault: { type: 'status', status: 503 }, on: 'info-refs' });
      const controller = new AbortController();
      const events: CloneProgress[] = [];
      const err = await failure(
        engine.clone(
          { url: `${relay.url}/basic.git` },
          {
            onProgress: (p) => {
              events.push(p);
              // Later, while it waits: not before the wait began.
              if (p.phase === 'retrying') setTimeout(() => controller.abort(), 50);
            },
            signal: controller.signal,
          },
        ),
      );
      expect(err.code).toBe('ABORTED');
      // One request, then the wait the abort ended: no second attempt.
      expect(relay.faults).toBe(1);
      expect(events.find((e) => e.phase === 'retrying')).toMatchObject({ attempt: 2, attempts: 4 });
      expect(await engine.listRepos()).toEqual([]);
    } finally {
      restore();
    }
  });

  it("a Retry-After past the cap waits the cap, and the last attempt's error says what the server asked", async () => {
    const { engine } = testEngine({ retry: { baseDelayMs: 10, maxDelayMs: 200 } });
    const restore = () => void engine.close();
    try {
      relay.setMode({
        kind: 'fault',
        fault: { type: 'status', status: 429, retryAfter: 3600 },
        on: 'ls-refs',
      });
      const delays: number[] = [];
      const err = await failure(
        engine.clone(
          { url: `${relay.url}/basic.git` },
          {
            onProgress: (p) => {
              if (p.phase === 'retrying') delays.push(p.delayMs);
            },
          },
        ),
      );
      expect(delays).toEqual([200, 200, 200]);
      // The ls-refs sent with the GET (lsRefsAhead, never retried), then the 4 attempts of the one in turn.
      expect(relay.faults).toBe(5);
      expect(err.code).toBe('HTTP_ERROR');
      expect(err.message).toMatch(/HTTP 429.*\(4 attempts\. The server asked to wait 3600 s\.\)/);
    } finally {
      restore();
    }
  });

  it('a push (receive-pack POST) is never sent twice; its info/refs GET is', async () => {
    {
      relay.setMode({ kind: 'fault', fault: { type: 'status', status: 502 }, on: 'any' });
      const client = new GitHttpClient(`${relay.url}/basic.git`, {
        protocol: 'version=2',
        retry: { baseDelayMs: 1, maxDelayMs: 1 },
      });
      const err = await failure(client.post('git-receive-pack', new Uint8Array(4)));
      expect(err).toBeInstanceOf(TransportError);
      expect(relay.faults).toBe(1);
      relay.setMode({ kind: 'fault', fault: { type: 'status', status: 502 }, on: 'any' });
      await failure(client.infoRefs('git-receive-pack'));
      expect(relay.faults).toBe(4);
    }
  });
});
